"""Fusion of two or more candidate windows into one window of the same budget.

Every input is a candidates run (query_id, doc_id, rank, score: ``retrievers.base``), one per
route, keyed by route name. A fused window holds the union of the routes' windows for that
query, never a document no route returned, ranked by fused score descending, then doc_id
ascending, cut at ``depth``; it follows the same run contract (rank 1..n contiguous, score
non-increasing). A route's contributions to a document are summed in sorted order, so two
documents with the same contributions tie exactly and fall to doc_id.

- RRF: score(d) = Σ_r 1 / (k + rank_r(d)) over the routes r whose window holds d.
- linear: score(d) = Σ_r w_r · v_r(d), where v_r(d) = norm_r(score_r(d)) if route r's window
  holds d, else the lowest normalised value of r's window for that query (the missing-document
  rule), and v_r = 0 for a route with an empty window (a constant, so it changes no order).

Weights, k and the normaliser are tuned on validation queries only (``tune``); the frozen
best entry is then applied to the test queries with ``fuse``.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.metrics.engine import evaluate
from releval.retrieval.base import CANDIDATE_COLUMNS

SOURCE = "fusion"


def _minmax(score: pd.Series, window: list[pd.Series]) -> pd.Series:
    """(s − min) / (max − min) over the window; 1.0 for every document where max = min."""
    grouped = score.groupby(window)
    lo, hi = grouped.transform("min"), grouped.transform("max")
    return ((score - lo) / (hi - lo)).where(hi > lo, 1.0)


def _zscore(score: pd.Series, window: list[pd.Series]) -> pd.Series:
    """(s − mean) / std over the window (population std, ddof 0); 0 where std = 0."""
    grouped = score.groupby(window)
    mean, std = grouped.transform("mean"), grouped.transform("std", ddof=0)
    return ((score - mean) / std).where(std > 0, 0.0)


NORMALISERS: dict[str, Callable[[pd.Series, list[pd.Series]], pd.Series]] = {
    "minmax": _minmax,
    "zscore": _zscore,
}


def _depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1:
        raise InputError(f"depth must be an integer ≥ 1, got {depth!r}", SOURCE)
    return int(depth)


def _stack(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The runs as one long frame (route, query_id, doc_id, rank, score), after checking
    each: the candidate columns present, score a number (never NaN), rank an integer ≥ 1,
    doc_id unique per query."""
    if not isinstance(runs, Mapping) or len(runs) < 2:
        got = list(runs) if isinstance(runs, Mapping) else type(runs).__name__
        raise InputError(f"fusion needs at least two runs keyed by route, got {got}", SOURCE)
    for route, run in runs.items():
        source = run.attrs.get("source", f"run {route!r}")
        missing = [c for c in CANDIDATE_COLUMNS if c not in run.columns]
        if missing:
            raise InputError(f"missing column(s) {missing}; found {list(run.columns)}", source)
        score = pd.to_numeric(run[S.SCORE], errors="coerce")
        rank = pd.to_numeric(run[S.RANK], errors="coerce")
        checks = (
            (score.isna(), "score must be a number, not NaN"),
            (~(rank >= 1) | (rank != np.floor(rank)), "rank must be an integer ≥ 1"),
            (run.duplicated([S.QUERY_ID, S.DOC_ID]), "doc_id repeats within a query"),
        )
        for bad, rule in checks:
            if bad.any():
                raise InputError(rule, source, S.where(run, bad.idxmax()))
    return pd.concat([run.loc[:, list(CANDIDATE_COLUMNS)].assign(**{S.ROUTE: route})
                      for route, run in runs.items()], ignore_index=True)


def _wide(long: pd.DataFrame, values: pd.Series, routes: list[str]) -> pd.DataFrame:
    """``values`` (aligned with ``long``) as a (query_id, doc_id) × route table over the union
    of the windows; NaN where a route's window lacks the document."""
    return (long.assign(_value=values)
            .pivot(index=[S.QUERY_ID, S.DOC_ID], columns=S.ROUTE, values="_value")
            .reindex(columns=routes))


def _rank(contributions: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Sum each row's contributions (in sorted order) and cut each query at ``depth``:
    score descending, then doc_id ascending; rank 1..n."""
    fused = contributions.index.to_frame(index=False)
    fused[S.SCORE] = np.sort(contributions.to_numpy(dtype=float), axis=1).sum(axis=1)
    fused = fused.sort_values([S.QUERY_ID, S.SCORE, S.DOC_ID], ascending=[True, False, True],
                              ignore_index=True, kind="stable")
    fused[S.RANK] = fused.groupby(S.QUERY_ID).cumcount().astype(np.int64) + 1
    return fused.loc[fused[S.RANK] <= depth, list(CANDIDATE_COLUMNS)].reset_index(drop=True)


def rrf(runs: dict[str, pd.DataFrame], depth: int, k: float = 60) -> pd.DataFrame:
    """Reciprocal Rank Fusion: score(d) = Σ_r 1 / (k + rank_r(d)) over the routes whose
    window holds d; top ``depth`` of the union per query. ``k`` ≥ 0."""
    depth = _depth(depth)
    if isinstance(k, bool) or not isinstance(k, Real) or not 0 <= k < math.inf:
        raise InputError(f"rrf k must be a finite number ≥ 0, got {k!r}", SOURCE)
    long = _stack(runs)
    wide = _wide(long, 1.0 / (k + long[S.RANK].astype(float)), list(runs))
    return _rank(wide.fillna(0.0), depth)


def linear(runs: dict[str, pd.DataFrame], depth: int, weights: dict[str, float],
           norm: str = "minmax") -> pd.DataFrame:
    """Weighted sum of normalised scores: score(d) = Σ_r w_r · v_r(d); top ``depth`` of the
    union per query.

    v_r(d) = NORMALISERS[norm] of d's score over route r's window for the query ("minmax":
    (s − min)/(max − min), 1.0 where max = min; "zscore": (s − mean)/std, 0 where std = 0).
    Missing-document rule: a document outside r's window gets the lowest v_r of that window
    (0 under minmax unless the window is constant), so a route never rewards a document it
    did not return; a route with no window for the query contributes 0 to every document.
    ``weights`` names every route exactly once, each a finite number ≥ 0.
    """
    depth = _depth(depth)
    normalise = NORMALISERS.get(norm)
    if normalise is None:
        raise InputError(f"unknown norm {norm!r}; known: {', '.join(NORMALISERS)}", SOURCE)
    long = _stack(runs)
    unknown = sorted(set(weights) - set(runs))
    if unknown:
        raise InputError(f"weights name route(s) with no run: {unknown}", SOURCE)
    unweighted = [r for r in runs if r not in weights]
    if unweighted:
        raise InputError(f"no weight for route(s) {unweighted}", SOURCE)
    w = np.array([weights[r] for r in runs], dtype=float)
    if not (np.isfinite(w) & (w >= 0)).all():
        raise InputError(f"weights must be finite numbers ≥ 0, got {weights}", SOURCE)
    score = long[S.SCORE].astype(float)
    wide = _wide(long, normalise(score, [long[S.ROUTE], long[S.QUERY_ID]]), list(runs))
    lowest = wide.groupby(level=S.QUERY_ID).transform("min")
    return _rank(wide.fillna(lowest).fillna(0.0) * w, depth)


FUSIONS: dict[str, Callable[..., pd.DataFrame]] = {"rrf": rrf, "linear": linear}


def fuse(runs: dict[str, pd.DataFrame], depth: int, params: dict) -> pd.DataFrame:
    """Apply one grid entry, ``{"method": name, **that method's keyword arguments}``."""
    method = params.get("method")
    fusion = FUSIONS.get(method)
    if fusion is None:
        raise InputError(f"unknown fusion method {method!r}; known: {', '.join(FUSIONS)}",
                         SOURCE)
    kwargs = {key: value for key, value in params.items() if key != "method"}
    try:
        inspect.signature(fusion).bind(runs, depth, **kwargs)
    except TypeError as exc:
        raise InputError(f"{method}: {exc}", SOURCE) from None
    return fusion(runs, depth, **kwargs)


def fused_status(lexical: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Per query, the status of a window fused from two sources' windows (``S.RUN_STATUSES``,
    arrays aligned by query): "ok" where both sources are "ok"; "partial" where exactly one is
    not (the fused window holds the other's answer alone); else the lexical source's status.
    NaN (not recorded) where either source's status is."""
    lexical, dense = pd.Series(lexical, dtype=object), pd.Series(dense, dtype=object)
    ok = S.RUN_STATUSES[0]
    fused = lexical.where(~((lexical == ok) ^ (dense == ok)), "partial")
    return fused.where(lexical.notna() & dense.notna()).to_numpy(dtype=object)


@dataclass(frozen=True)
class Tuning:
    """Result of ``tune``: ``best`` is the chosen grid entry; ``table`` has one row per grid
    entry, in grid order: params (JSON), measure (the objective), value (its mean over the
    validation queries), n (queries averaged)."""

    best: dict
    table: pd.DataFrame


def tune(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, queries: list[str], depth: int,
         grid: list[dict], objective: str = "nDCG@10", max_grade: int = 3) -> Tuning:
    """Pick the grid entry whose fused run scores best on ``objective`` over ``queries`` (the
    validation split); ties go to the earliest entry.

    Runs are cut to ``queries`` before fusing and the metrics engine evaluates exactly those
    queries, so rows and judgments of any other query never influence the choice.
    """
    if not grid:
        raise InputError("the tuning grid is empty", SOURCE)
    wanted = [str(q) for q in queries]
    runs = {route: run.loc[run[S.QUERY_ID].astype(str).isin(wanted)]
            if S.QUERY_ID in run.columns else run for route, run in runs.items()}
    rows = []
    for params in grid:  # one fused run and one evaluation per grid entry
        summary = evaluate(fuse(runs, depth, params), qrels, [objective], max_grade=max_grade,
                           queries=wanted).summary.iloc[0]
        rows.append({"params": json.dumps(params, sort_keys=True), S.MEASURE: summary[S.MEASURE],
                     S.VALUE: float(summary[S.VALUE]), "n": int(summary["n"])})
    table = pd.DataFrame(rows)
    if table[S.VALUE].isna().all():
        raise InputError(f"{objective} is undefined on every validation query "
                         "(no relevant judgments)", SOURCE)
    return Tuning(best=dict(grid[int(table[S.VALUE].idxmax())]), table=table)


def choose(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, validation: list[str],
           depth: int, grid: list[dict], objective: str = "nDCG@10",
           max_grade: int = 3) -> tuple[dict, str, list[dict]]:
    """The grid entry to freeze: ``tune``'s best over the ``validation`` queries when some of
    them have a relevant judgment (grade ≥ 1) in ``qrels``, else the first entry, untuned.
    Returns (entry, note, the tuning table's rows)."""
    if len(validation) and (qrels[S.GRADE] >= 1).any():
        tuning = tune({s: w[w[S.QUERY_ID].isin(validation)] for s, w in runs.items()},
                      qrels, list(validation), depth, grid, objective, max_grade)
        return (tuning.best, f"tuned on {len(validation)} validation queries",
                tuning.table.to_dict(orient="records"))
    return grid[0], "no judged validation queries: first grid entry, untuned", []


def _rrf_grid(rrf_k: list[int], weights: list[float], norms: list[str],
              routes: tuple[str, str]) -> list[dict]:
    return [{"method": "rrf", "k": k} for k in rrf_k]


def _linear_grid(rrf_k: list[int], weights: list[float], norms: list[str],
                 routes: tuple[str, str]) -> list[dict]:
    bad = [w for w in weights if not 0 <= w <= 1]
    if bad:
        raise InputError(f"linear weights must lie in [0, 1], got {bad}", SOURCE)
    first, second = routes
    return [{"method": "linear", "weights": {first: w, second: round(1.0 - w, 12)}, "norm": norm}
            for norm in norms for w in weights]


GRIDS = {"rrf": _rrf_grid, "linear": _linear_grid}


def expand_grid(method: str, rrf_k: list[int], weights: list[float], norms: list[str],
                routes: tuple[str, str]) -> list[dict]:
    """The tuning grid of one method for two routes: ``{"method": "rrf", "k": k}`` per k, or
    ``{"method": "linear", "weights": {routes[0]: w, routes[1]: 1 − w}, "norm": n}`` per norm
    and w (1 − w rounded to 12 decimals, so 0.7 pairs with 0.3). Arguments the method does
    not use are ignored; entries are checked when applied (``fuse``)."""
    build = GRIDS.get(method)
    if build is None:
        raise InputError(f"unknown fusion method {method!r}; known: {', '.join(GRIDS)}", SOURCE)
    if len(routes) != 2 or routes[0] == routes[1]:
        raise InputError(f"expand_grid needs two distinct routes, got {routes!r}", SOURCE)
    return build(rrf_k, weights, norms, routes)
