"""The query bootstrap as a matrix, for statistics computed on all resamples at once.

``query_counts(n, B, seed)`` is a (B, n) matrix: row b holds how many times each of the n
queries was drawn in resample b (n draws with replacement, uniform: one multinomial row per
resample, ``np.random.default_rng(seed)``). A statistic that is a sum over queries is then a
matrix product with it (e.g. weighted means, per-query confusion tables summed).
``percentile`` is the percentile interval [q_{α/2}, q_{1−α/2}] (``np.quantile``, linear
interpolation) over the resamples where the statistic is defined (NaN: undefined, counted).
"""

from __future__ import annotations

import numpy as np

from releval.errors import InputError


def query_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n) int64 draw counts of a query bootstrap; each row sums to n."""
    if int(resamples) != resamples or resamples < 1:
        raise InputError(f"resamples must be a positive integer, got {resamples}")
    if n < 1:
        raise InputError("no query to resample")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=int(resamples))


def percentile(values: np.ndarray, alpha: float) -> tuple[float | None, float | None, int]:
    """(low, high, undefined): the percentile interval of the defined resampled values along
    axis 0 and how many resamples were undefined; (None, None, B) when none is defined."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")
    values = np.asarray(values, dtype=float)
    defined = values[~np.isnan(values)]
    if not defined.size:
        return None, None, int(values.size)
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high), int(values.size - defined.size)
