"""How close a reproduced run is to its original, in the measures of Breuer et al. 2020 ("How
to Measure the Reproducibility of System-oriented IR Experiments", SIGIR) as the repro_eval
library computes them (github.com/irgroup/repro_eval, ``repro_eval/measure/``).

- effectiveness: per measure, the RMSE over queries of the per-query values
  (``effectiveness.RMSE``);
- document order: per query, Kendall's τ Union (KTU) and rank-biased overlap (RBO) between
  the two ranked lists, averaged over queries (``document_order.KTU`` / ``RBO``);
- overall effects, for a baseline–candidate pair reproduced: the effect ratio ER and the
  difference of relative improvements ΔRI, per measure (``overall_effects.ER`` / ``DRI``);
- ``closeness``: the RMSE and the document order per system, as ``releval reproduce`` shows
  them beside a reproduction that is not identical.

Ranked lists are in releval's order (``releval.metrics.ranking.TIE_POLICY``: by rank when the
run has one, else score descending, ties by doc_id descending; repro_eval's ``break_ties``
breaks score ties the same way). Every measure is computed over the queries of both sides
(all four for the effects: repro_eval's measures assume the same queries throughout); a
query whose value is undefined (NaN) in a side is excluded and counted (``undefined``).
Where releval departs from repro_eval, the function's docstring says so. numpy/pandas only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from releval.data import contracts as S

DEPTH = 1000  # repro_eval's RUN_LENGTH (KTU's trim) and RBO_DEPTH
RBO_P = 0.95  # repro_eval's RBO_P
VALUE_COLUMNS = ("measure", "value", "n", "undefined")
CLOSENESS_COLUMNS = (S.SYSTEM, *VALUE_COLUMNS)
EFFECT_COLUMNS = ("measure", "ER", "delta_RI", "RI", "RI_reproduced", "n", "undefined")


def ranked_lists(run: pd.DataFrame) -> dict[str, np.ndarray]:
    """query_id → its doc ids in ranked order (by ``rank`` when the run has that column, else
    score descending, ties by doc_id descending: trec_eval's and repro_eval's order)."""
    keys, ascending = ([S.QUERY_ID, S.RANK], [True, True]) if S.RANK in run.columns else \
        ([S.QUERY_ID, S.SCORE, S.DOC_ID], [True, False, False])
    ordered = run.assign(**{S.QUERY_ID: run[S.QUERY_ID].astype(str),
                            S.DOC_ID: run[S.DOC_ID].astype(str)}).sort_values(
        keys, ascending=ascending, kind="stable")
    if ordered.empty:
        return {}
    queries = ordered[S.QUERY_ID].to_numpy()
    starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]])
    docs = np.split(ordered[S.DOC_ID].to_numpy(dtype=str), starts[1:])
    return dict(zip(queries[starts], docs, strict=True))


def _inversions(r: np.ndarray) -> int:
    """The pairs i < j with r_i > r_j (r: distinct integers ≥ 0), counted by the levels of a
    bottom-up merge sort, each level at once: within every block of 2s, each element of the
    right half is searched in the sorted left half (the blocks kept apart by an offset)."""
    n, span = len(r), int(r.max()) + 1
    pos, v = np.arange(n), r.astype(np.int64)
    count, size = 0, 1
    while size < n:
        block = pos // (2 * size)
        key = block * span + v  # v is sorted within each block of ``size``
        left = (pos // size) % 2 == 0
        lk, rk = key[left], key[~left]
        count += int((np.searchsorted(lk, (block[~left] + 1) * span)
                      - np.searchsorted(lk, rk, side="right")).sum())
        v = np.sort(key) - block * span
        size *= 2
    return count


def ktu(original: np.ndarray, reproduced: np.ndarray, depth: int = DEPTH) -> float:
    """Kendall's τ Union as repro_eval computes it (``document_order._KTU``): both lists cut
    to their first n = min(|original|, |reproduced|, ``depth``) documents (repro_eval trims
    to ``depth`` and needs equal lengths: ``scipy.stats.kendalltau`` refuses others);
    U = the union of the cut lists sorted by doc id; x_i, y_i = the index in U of the
    document at rank i of the original, reproduced list; τ = scipy's default τ-b of the
    pairs (x_i, y_i), paired by rank position. Neither x nor y has ties, so τ-b = τ-a =
    1 − 4·D/(n(n−1)), D = the discordant pairs (i < j with sgn(x_j − x_i) ≠ sgn(y_j − y_i)),
    counted in O(n log² n). Undefined (NaN) for n < 2."""
    n = min(len(original), len(reproduced), depth)
    if n < 2:
        return float("nan")
    a, b = original[:n], reproduced[:n]
    union = np.union1d(a, b)
    x, y = np.searchsorted(union, a), np.searchsorted(union, b)
    return 1.0 - 4.0 * _inversions(y[np.argsort(x)]) / (n * (n - 1))


def rbo(original: np.ndarray, reproduced: np.ndarray, depth: int = DEPTH,
        p: float = RBO_P) -> float:
    """Rank-biased overlap as repro_eval computes it (Clarke et al.'s truncated, normalised
    RBO, not Webber et al.'s extrapolated RBO_EXT): with A_d, B_d the first d documents of
    each list, RBO = Σ_{d=1}^{D} p^{d−1}·|A_d ∩ B_d|/d / Σ_{d=1}^{D} p^{d−1} (p: repro_eval's
    0.95 unless given).
    One deviation: D = min(``depth``, the longer list's length), where repro_eval always
    sums to ``depth`` (1000), so that two identical lists shorter than ``depth`` score 1
    rather than less; equal to repro_eval whenever a list reaches ``depth``. Computed per
    shared document: one first in both lists by depth m = max(its two ranks) adds
    Σ_{d=m}^{D} p^{d−1}/d. Undefined (NaN) when both lists are empty."""
    top = min(depth, max(len(original), len(reproduced)))
    if top == 0:
        return float("nan")
    d = np.arange(1, top + 1)
    weights = p ** (d - 1.0)
    tail = np.cumsum((weights / d)[::-1])[::-1]  # tail[m − 1] = Σ_{d=m}^{D} p^{d−1}/d
    _, i, j = np.intersect1d(original[:top], reproduced[:top], return_indices=True)
    return float(tail[np.maximum(i, j)].sum() / weights.sum())


# the document-order measures: name -> per query (original list, reproduced list, depth, p)
ORDER: dict[str, Callable[[np.ndarray, np.ndarray, int, float], float]] = {
    "KTU": lambda a, b, depth, p: ktu(a, b, depth),
    "RBO": lambda a, b, depth, p: rbo(a, b, depth, p),
}


def order_per_query(original: pd.DataFrame, reproduced: pd.DataFrame, *, depth: int = DEPTH,
                    p: float = RBO_P) -> pd.DataFrame:
    """(query_id, measure, value): each ``ORDER`` measure for every query both runs rank."""
    a, b = ranked_lists(original), ranked_lists(reproduced)
    both = sorted(a.keys() & b.keys())
    return pd.DataFrame([(q, name, f(a[q], b[q], depth, p)) for name, f in ORDER.items()
                         for q in both], columns=[S.QUERY_ID, S.MEASURE, S.VALUE])


def means(per_query: pd.DataFrame) -> pd.DataFrame:
    """(measure, value, n, undefined): the mean over the queries with a value, n of them,
    and the undefined ones counted."""
    groups = per_query.groupby(S.MEASURE, sort=False)[S.VALUE]
    out = pd.DataFrame({"value": groups.mean(), "n": groups.count(),
                        "undefined": groups.size() - groups.count()})
    return out.rename_axis("measure").reset_index()[list(VALUE_COLUMNS)]


def _paired(*sides: pd.DataFrame) -> pd.DataFrame:
    """The per-query tables (query_id, measure, value) side by side: one row per (measure,
    query) of every side, columns 0..k−1."""
    wide = [s.set_index([S.MEASURE, S.QUERY_ID])[S.VALUE] for s in sides]
    return pd.concat(wide, axis=1, keys=range(len(sides)), join="inner")


def rmse(original: pd.DataFrame, reproduced: pd.DataFrame) -> pd.DataFrame:
    """(measure, value, n, undefined): per measure, RMSE = √(Σ_j (o_j − r_j)² / n) over the n
    queries of both per-query tables (query_id, measure, value) with a value in each
    (``effectiveness.RMSE``); a query undefined in either is excluded and counted."""
    both = _paired(original, reproduced)
    squared = (both[0] - both[1]) ** 2
    per = squared.rename(S.VALUE).reset_index()
    out = means(per)
    return out.assign(value=np.sqrt(out["value"]))


def effects(baseline: pd.DataFrame, candidate: pd.DataFrame, baseline_reproduced: pd.DataFrame,
            candidate_reproduced: pd.DataFrame) -> pd.DataFrame:
    """(measure, ER, delta_RI, RI, RI_reproduced, n, undefined) from the four per-query tables
    (query_id, measure, value), over the n queries with a value in all four
    (``overall_effects.ER`` / ``DRI``): with Δ_j = candidate_j − baseline_j (Δ'_j: the
    reproduced pair), ER = mean_j Δ'_j / mean_j Δ_j; RI = (mean candidate − mean baseline) /
    mean baseline, RI' likewise of the reproduced pair, ΔRI = RI − RI'. NaN where a
    denominator is 0. ER = 1 and ΔRI = 0: the improvement reproduced exactly."""
    four = _paired(baseline, candidate, baseline_reproduced, candidate_reproduced)
    defined = four.notna().all(axis=1)
    grouped = four[defined].groupby(level=S.MEASURE, sort=False)
    mean = grouped.mean().reindex(four.index.unique(S.MEASURE))
    with np.errstate(divide="ignore", invalid="ignore"):
        ri = (mean[1] - mean[0]) / mean[0].where(mean[0] != 0)
        ri_rep = (mean[3] - mean[2]) / mean[2].where(mean[2] != 0)
        delta = mean[1] - mean[0]
        er = (mean[3] - mean[2]) / delta.where(delta != 0)
    counts = defined.groupby(level=S.MEASURE, sort=False)
    out = pd.DataFrame({"ER": er, "delta_RI": ri - ri_rep, "RI": ri, "RI_reproduced": ri_rep,
                        "n": counts.sum(), "undefined": counts.size() - counts.sum()})
    return out.rename_axis("measure").reset_index()[list(EFFECT_COLUMNS)]


def closeness(per_query: dict[str, tuple[pd.DataFrame, pd.DataFrame]],
              runs: dict[str, tuple[pd.DataFrame, pd.DataFrame]], *, depth: int = DEPTH,
              p: float = RBO_P) -> dict[str, pd.DataFrame]:
    """Per system, how close its reproduction is: ``rmse`` of its (original, reproduced)
    per-query tables, ``order`` the means over queries of ``ORDER`` between its (original,
    reproduced) runs; each frame (system, measure, value, n, undefined), systems in the
    order given."""
    def stacked(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
        parts = [f.assign(**{S.SYSTEM: system}) for system, f in frames.items()]
        return (pd.concat(parts, ignore_index=True) if parts else
                pd.DataFrame(columns=list(CLOSENESS_COLUMNS)))[list(CLOSENESS_COLUMNS)]

    return {"rmse": stacked({s: rmse(*pair) for s, pair in per_query.items()}),
            "order": stacked({s: means(order_per_query(*pair, depth=depth, p=p))
                              for s, pair in runs.items()})}
