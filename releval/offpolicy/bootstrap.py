"""Percentile bootstrap over clusters of logged rows (users where known, else rows): each
resample draws n_clusters clusters with replacement, and every estimate is recomputed on it
whole (a ratio estimator's numerator and denominator both resampled).

Vectorised: the rows' terms are summed per cluster once; a block of resamples is a
(resamples × n_clusters) matrix of draw counts, so every resample's column totals are one
matrix product. Seeded: the same seed, clusters and terms give the same totals.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

BLOCK = 100  # resamples per block: the counts matrix is BLOCK × n_clusters


def draws(n_clusters: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resamples in blocks of at most BLOCK: (block, n_clusters) cluster indices, each row
    one resample of n_clusters clusters drawn uniformly with replacement."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, BLOCK):
        yield rng.integers(0, n_clusters, size=(min(BLOCK, resamples - start), n_clusters))


def totals(cluster: np.ndarray, values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, columns): each resample's column totals of ``values`` (rows × columns),
    rows drawn by whole clusters (``cluster``: each row's cluster index 0..n_clusters−1)."""
    n_clusters = int(cluster.max()) + 1
    per_cluster = np.zeros((n_clusters, values.shape[1]))
    np.add.at(per_cluster, cluster, values)
    blocks = []
    for drawn in draws(n_clusters, resamples, seed):
        b = len(drawn)
        flat = (np.arange(b)[:, None] * n_clusters + drawn).ravel()
        counts = np.bincount(flat, minlength=b * n_clusters).reshape(b, n_clusters)
        blocks.append(counts @ per_cluster)
    return np.vstack(blocks)


def percentile(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The α/2 and 1 − α/2 quantiles of each column over its defined (finite) draws; NaN
    for a column with none."""
    finite = np.where(np.isfinite(draws), draws, np.nan)
    defined = np.isfinite(finite).any(axis=0)
    low = np.full(draws.shape[1], np.nan)
    high = np.full(draws.shape[1], np.nan)
    if defined.any():
        low[defined], high[defined] = np.nanquantile(finite[:, defined],
                                                     [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high
