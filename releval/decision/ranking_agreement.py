"""Do two sets of labels rank systems the same way? One measure per query and system under
human qrels and under automatic qrels: the systems' means, their two rankings, Kendall's τ-b
and τ_AP between them with bootstrap CIs over queries, and the paired comparisons that flip.

Inputs are two (query × system) frames of one measure (index query_id, one column per
system; NaN: undefined for that query). Both must hold the same systems; their queries are
aligned on the union (a query absent from one frame is undefined there). A system's mean is
over its defined queries.

- Kendall's τ-b of the two vectors of means: with s_h(i, j) = sign(h_i − h_j) and s_a
  likewise, τ_b = Σ_{i<j} s_h s_a / sqrt(Σ_{i<j} s_h² · Σ_{i<j} s_a²) (a pair tied in one
  ranking counts in neither numerator nor that ranking's denominator: scipy's τ-b).
- τ_AP (Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information
  retrieval", SIGIR 2008), with the human ranking the reference: order the systems by their
  automatic means, best first (ties broken by system name); for the system at position
  i = 2..N, C(i) counts the systems above it that are also above it in the human ranking;
  τ_AP = 2/(N − 1) · Σ_{i=2}^{N} C(i)/(i − 1) − 1. Errors near the top cost more than at the
  bottom; τ_AP is not symmetric. Ties (not in the paper): a pair tied in both rankings
  counts 1 in C(i), a pair tied in exactly one ranking ½ (so with no ties this is the
  paper's τ_AP, and identical means give 1).
- CIs: a percentile bootstrap over queries (``releval.resample``): each resample
  redraws the queries with replacement, recomputes every system's mean under both qrels,
  both rankings and τ; all resamples at once as matrix products. A resample where τ is
  undefined (a system without a defined value, every mean tied) is left out and counted.
- Flips: for every pair of systems (a, b) the per-query difference b − a, its mean and
  percentile bootstrap CI (the same resamples) under each qrels set; the comparison is
  significant when the CI excludes 0. A pair flips when it is significant under one set and
  not under the other (``human only`` / ``automatic only``) or significant under both with
  opposite signs (``reversed``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from releval.errors import InputError
from releval.resample import percentile, query_counts

PAIR_BLOCK = 256  # system pairs per block of the flips' bootstrap (memory: Q × block)
FLIP_KINDS = ("human only", "automatic only", "reversed")


def kendall_tau_b(h: np.ndarray, a: np.ndarray) -> np.ndarray:
    """τ-b along the last axis (module docstring); NaN where a ranking is all ties or a value
    is NaN."""
    sh = np.sign(h[..., :, None] - h[..., None, :])
    sa = np.sign(a[..., :, None] - a[..., None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sh * sa).sum((-1, -2)) / np.sqrt((sh ** 2).sum((-1, -2))
                                                  * (sa ** 2).sum((-1, -2)))


def tau_ap(reference: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """τ_AP of ``estimate``'s ranking against ``reference``'s along the last axis, higher
    values ranked first, ties as in the module docstring (the columns must be in system-name
    order for the tie rule); NaN where a value is NaN."""
    order = np.argsort(-estimate, axis=-1, kind="stable")
    h = np.take_along_axis(reference, order, -1)
    a = np.take_along_axis(estimate, order, -1)
    sh = np.sign(h[..., None, :] - h[..., :, None])  # [i, j]: sign(h_j − h_i)
    sa = np.sign(a[..., None, :] - a[..., :, None])
    agree = 1 - np.abs(sh - sa) / 2
    n = h.shape[-1]
    above = np.tril(np.ones((n, n), bool), k=-1)  # [i, j]: j is above position i
    c = np.where(above, agree, 0).sum(-1)[..., 1:]
    return 2 / (n - 1) * (c / np.arange(1, n)).sum(-1) - 1


def _frames(human: pd.DataFrame, auto: pd.DataFrame) -> tuple[list, np.ndarray, np.ndarray]:
    systems = sorted(map(str, human.columns))
    if sorted(map(str, auto.columns)) != systems:
        only = set(map(str, human.columns)) ^ set(map(str, auto.columns))
        raise InputError(f"human and automatic values must hold the same systems; differ in "
                         f"{sorted(only)[:5]}")
    if len(systems) < 2:
        raise InputError(f"a ranking needs at least 2 systems, got {len(systems)}")
    human, auto = human.rename(columns=str), auto.rename(columns=str)
    for name, x in (("human", human), ("automatic", auto)):
        if x.index.astype(str).has_duplicates:
            raise InputError(f"query {x.index[x.index.astype(str).duplicated()][0]!r} appears "
                             f"twice in the {name} values")
    queries = human.index.astype(str).union(auto.index.astype(str))
    x_h = human.set_axis(human.index.astype(str)).reindex(index=queries, columns=systems)
    x_a = auto.set_axis(auto.index.astype(str)).reindex(index=queries, columns=systems)
    for name, x in (("human", x_h), ("automatic", x_a)):
        empty = x.columns[x.isna().all().to_numpy()]
        if len(empty):
            raise InputError(f"system {empty[0]!r} has no defined value under {name} labels")
    return systems, x_h.to_numpy(float), x_a.to_numpy(float)


def _means(counts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(B, columns) means over the defined values of each resample; NaN when none."""
    defined = ~np.isnan(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ np.where(defined, x, 0.0)) / (counts @ defined)


def _figure(value: float, resampled: np.ndarray, alpha: float) -> dict:
    low, high, undefined = percentile(resampled, alpha)
    return {"value": None if np.isnan(value) else float(value), "ci_low": low,
            "ci_high": high, "undefined_resamples": undefined}


def _pair_intervals(x: np.ndarray, counts: np.ndarray, i: np.ndarray, j: np.ndarray,
                    alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean of x[:, j] − x[:, i] over the queries defined in both, and its percentile CI."""
    mean, low, high = (np.empty(len(i)) for _ in range(3))
    for start in range(0, len(i), PAIR_BLOCK):
        block = slice(start, start + PAIR_BLOCK)
        d = x[:, j[block]] - x[:, i[block]]
        mean[block] = _means(np.ones((1, len(d))), d)[0]
        with warnings.catch_warnings():  # a pair never defined together: NaN, not a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            low[block], high[block] = np.nanquantile(_means(counts, d),
                                                     [alpha / 2, 1 - alpha / 2], axis=0)
    return mean, low, high


def ranking_agreement(human_values: pd.DataFrame, auto_values: pd.DataFrame, *,
                      resamples: int = 1000, alpha: float = 0.05, seed: int = 0,
                      higher_is_better: bool = True) -> dict:
    """Rankings, τ-b and τ_AP with CIs, and flips (module docstring).

    Returns ``systems`` (n), ``queries`` (n), ``tau`` and ``tau_ap`` (each {value, ci_low,
    ci_high, undefined_resamples}), ``rankings`` (a frame: system, mean_human,
    mean_automatic, rank_human, rank_automatic; rank 1 is best, tied means share their
    smallest rank), ``pairs`` (a frame, one row per pair of systems: system_a, system_b, and
    per qrels set the mean of b − a, its CI and whether it is significant; ``flip``: the
    kind, or empty), ``flips`` (those rows as records), resamples, alpha, seed. With
    ``higher_is_better`` False, lower means rank first.
    """
    systems, x_h, x_a = _frames(human_values, auto_values)
    sign = 1.0 if higher_is_better else -1.0
    counts = query_counts(len(x_h), resamples, seed)
    mean_h, mean_a = np.nanmean(x_h, axis=0), np.nanmean(x_a, axis=0)
    boot_h, boot_a = _means(counts, x_h), _means(counts, x_a)
    rankings = pd.DataFrame({
        "system": systems, "mean_human": mean_h, "mean_automatic": mean_a,
        "rank_human": pd.Series(sign * mean_h).rank(ascending=False, method="min")
        .astype(int).to_numpy(),
        "rank_automatic": pd.Series(sign * mean_a).rank(ascending=False, method="min")
        .astype(int).to_numpy(),
    }).sort_values(["rank_human", "system"], ignore_index=True)

    i, j = np.triu_indices(len(systems), k=1)
    pairs = pd.DataFrame({"system_a": np.asarray(systems)[i], "system_b": np.asarray(systems)[j]})
    significant = {}
    for name, x in (("human", x_h), ("automatic", x_a)):
        mean, low, high = _pair_intervals(x, counts, i, j, alpha)
        significant[name] = (low > 0) | (high < 0)
        pairs[f"diff_{name}"], pairs[f"ci_low_{name}"], pairs[f"ci_high_{name}"] = mean, low, high
        pairs[f"significant_{name}"] = significant[name]
    both = significant["human"] & significant["automatic"]
    reversed_ = both & (np.sign(pairs["diff_human"]) != np.sign(pairs["diff_automatic"]))
    pairs["flip"] = np.select(
        [significant["human"] & ~significant["automatic"],
         significant["automatic"] & ~significant["human"], reversed_.to_numpy()],
        list(FLIP_KINDS), default="")
    return {
        "systems": len(systems), "queries": len(x_h),
        "tau": _figure(kendall_tau_b(mean_h, mean_a), kendall_tau_b(boot_h, boot_a), alpha),
        "tau_ap": _figure(tau_ap(sign * mean_h, sign * mean_a),
                          tau_ap(sign * boot_h, sign * boot_a), alpha),
        "rankings": rankings, "pairs": pairs,
        "flips": pairs[pairs["flip"] != ""].to_dict("records"),
        "resamples": int(resamples), "alpha": float(alpha), "seed": int(seed),
    }
