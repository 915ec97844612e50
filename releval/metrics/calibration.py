"""Probability measures: how well a system's P(relevant) matches what the user did.

The pairs are the (user, item) rows a system emitted with a probability (the run's
``probability`` column; NaN: no probability for that row), over its whole window, for the
users with at least one positive (the engine's undefined rule); a pair's label y is 1 when
the item is in R (grade ≥ rel), else 0. A run without probabilities is not applicable:
these measures are never computed from scores. Each is one value per system, pooled over its
pairs; n counts the users with at least one pair.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.metrics.ranking import Ranking
from releval.metrics.registry import UNIT, Needs, Pooled, integer, measure, one_of, option
from releval.metrics.spec import Measure

BINNINGS = ("width", "mass")
EPS = np.finfo(np.float64).eps  # probabilities are clipped to [EPS, 1 − EPS], as scikit-learn
RELIABILITY_COLUMNS = (S.SYSTEM, "binning", "bin", "lo", "hi", "n", "mean_predicted",
                       "observed")


has_probability = Needs(lambda r, m: r.has_probability, "it emits no probabilities")


def pairs(r: Ranking, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(probability, label, query) of the rows with a probability, of queries with |R| > 0."""
    keep = np.isfinite(r.probability) & (r.n_rel(rel) > 0)[r.q]
    return r.probability[keep], r.relevant(rel)[keep].astype(float), r.q[keep]


def _pooled(r: Ranking, m: Measure, loss) -> Pooled:
    p, y, q = pairs(r, m.rel)
    value = float(loss(p, y).mean()) if len(p) else np.nan
    return Pooled(value, np.bincount(q, minlength=r.nq) > 0)


def bin_edges(p: np.ndarray, bins: int, binning: str) -> np.ndarray:
    """The bins + 1 edges: equal-width on [0, 1] (``width``) or the quantiles of ``p``
    (``mass``, as numpy's percentile; equal edges leave empty bins)."""
    if binning == "width":
        return np.linspace(0.0, 1.0, bins + 1)
    return np.percentile(p, np.linspace(0.0, 100.0, bins + 1))


def bin_of(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each probability's bin: (lo, hi], the first [lo, hi] (scikit-learn's
    calibration_curve assignment)."""
    return np.searchsorted(edges[1:-1], p)


@measure("LogLoss", cutoff="none", level="system", better="lower", available=has_probability)
def log_loss(r: Ranking, m: Measure) -> Pooled:
    """LogLoss = −(1/N) Σ_pairs [y ln p + (1 − y) ln(1 − p)] over the N pairs with a
    probability (p clipped to [ε, 1 − ε], ε the float64 machine epsilon, as scikit-learn's
    log_loss). Not applicable to a run without probabilities."""
    def loss(p, y):
        p = np.clip(p, EPS, 1 - EPS)
        return -(y * np.log(p) + (1 - y) * np.log(1 - p))
    return _pooled(r, m, loss)


@measure("Brier", cutoff="none", level="system", better="lower", available=has_probability,
         bounds=UNIT)
def brier(r: Ranking, m: Measure) -> Pooled:
    """Brier = (1/N) Σ_pairs (p − y)² over the N pairs with a probability (scikit-learn's
    brier_score_loss). Not applicable to a run without probabilities."""
    return _pooled(r, m, lambda p, y: (p - y) ** 2)


@measure("ECE", cutoff="none", level="system", better="lower", available=has_probability,
         bounds=UNIT,
         options={"bins": integer(10, 1), "binning": one_of(*BINNINGS)})
def ece(r: Ranking, m: Measure) -> Pooled:
    """ECE(bins, binning) = Σ_b (n_b / N) |acc_b − conf_b| over the N pairs with a
    probability: acc_b the share of positives and conf_b the mean probability among the
    n_b pairs in bin b. ``binning='width'`` (default): ``bins`` (default 10) equal-width bins
    on [0, 1]; ``'mass'``: equal-mass bins, the edges at the quantiles of the probabilities.
    A pair lies in (lo, hi], the first bin in [lo, hi]: per non-empty bin, acc_b and conf_b
    are scikit-learn's calibration_curve prob_true and prob_pred (strategy 'uniform' /
    'quantile'). Not applicable to a run without probabilities."""
    p, y, q = pairs(r, m.rel)
    contributing = np.bincount(q, minlength=r.nq) > 0
    if not len(p):
        return Pooled(np.nan, contributing)
    bins = option(m, "bins")
    ids = bin_of(p, bin_edges(p, bins, option(m, "binning")))
    n = np.bincount(ids, minlength=bins)
    gap = np.abs(np.bincount(ids, weights=y, minlength=bins)
                 - np.bincount(ids, weights=p, minlength=bins))  # n_b |acc_b − conf_b|
    return Pooled(float(gap.sum() / n.sum()), contributing)


def reliability(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, *, bins: int = 10,
                rel: int = 1, max_grade: int = 3,
                queries: Iterable[str] | None = None) -> pd.DataFrame:
    """Reliability-diagram data: per system whose run has probabilities, per binning (width,
    then mass) and non-empty bin, the bin's edges (lo, hi), its pairs (n), their mean
    probability and their share of positives (observed), over ECE's pairs (same runs, qrels
    and evaluated ``queries`` as ``evaluate_systems``)."""
    queries = None if queries is None else list(queries)
    rows = []
    for system, run in runs.items():
        if run.empty:
            continue
        r = Ranking(run, qrels, max_grade=max_grade, queries=queries)
        p, y, _ = pairs(r, rel)
        if not len(p):
            continue
        for binning in BINNINGS:
            edges = bin_edges(p, bins, binning)
            ids = bin_of(p, edges)
            n = np.bincount(ids, minlength=bins)
            predicted = np.bincount(ids, weights=p, minlength=bins)
            observed = np.bincount(ids, weights=y, minlength=bins)
            rows += [(system, binning, b, edges[b], edges[b + 1], n[b], predicted[b] / n[b],
                      observed[b] / n[b]) for b in np.flatnonzero(n)]
    table = pd.DataFrame(rows, columns=list(RELIABILITY_COLUMNS))
    return table.astype({"bin": "int64", "lo": "float64", "hi": "float64", "n": "int64",
                         "mean_predicted": "float64", "observed": "float64"})
