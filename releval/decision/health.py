"""System health beside relevance (stage ``health``): per system, one row of the figures a
release decision needs besides its relevance, each defined below (``DEFINITIONS``).

The per-query figures (queries, latency, statuses, candidates, empty share, near-duplicates,
cost) are over the evaluated query set, the queries the evaluated splits hold
(``evaluated_queries``): a team's run that answers the test queries only is not counted
empty on the train queries it was never asked. Freshness reads every query's window (a
document's first and last appearance over time). Without an evaluated set (``evaluated``
None) every query of the queries table counts. Undefined is NaN, never zero, and
health.json says why (``UNDEFINED``): a latency nobody measured, a status nobody recorded, a
cost nobody modelled.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.freshness import freshness
from releval.errors import InputError
from releval.retrieval.base import latency_of, status_counts, status_of

PERCENTILES = {"latency_p50_ms": 50, "latency_p95_ms": 95, "latency_p99_ms": 99}
RATES = {f"{status}_rate": status for status in S.RUN_STATUSES[1:]}
FRESHNESS = ("freshness_eligible", "freshness_appeared", "freshness_median_days",
             "freshness_p95_days", "deleted_eligible", "deleted_still_appearing",
             "deletion_propagation_p95_days", "deletion_propagation_max_days")
COLUMNS = (S.SYSTEM, S.ROUTE, "n_queries", *PERCENTILES, "status_recorded", *RATES,
           "candidates_per_query", "empty_share", "near_duplicate_ratio",
           "embedding_cache_hit_rate", "cost_per_query", "cost_unit", *FRESHNESS)

DEFINITIONS = {
    "n_queries": "queries of the evaluated set (the evaluated splits' queries; every query "
                 "of the queries table without a split)",
    **{name: f"p{p} of the per-query latency in ms over the queries whose latency was "
             "measured (latency.parquet)" for name, p in PERCENTILES.items()},
    "status_recorded": "queries with a recorded status (latency.parquet's status column)",
    **{name: f"share of the queries with a recorded status whose status is {status!r}"
       for name, status in RATES.items()},
    "candidates_per_query": "mean candidates per query (a query with none counts 0)",
    "empty_share": "share of the queries with no candidate",
    "near_duplicate_ratio": "share of window entries (query, document) whose document "
                            "duplicates a higher-ranked one of the same query's window: the "
                            "same source_id, or the same normalised text (title and text, "
                            "casefolded, every run of non-alphanumeric characters one space)",
    "embedding_cache_hit_rate": "texts served from the embedding cache / texts embedded, in "
                                "the search (run_stats embedding_cache; a fused system: its "
                                "dense source's)",
    "cost_per_query": "mean over the queries of per_query + per_candidate × the query's "
                      "candidates (health.cost); a fused system: its two sources' plus its "
                      "own model where given",
    "cost_unit": "the unit of cost_per_query",
    "freshness_eligible": "documents published inside the queries' time span",
    "freshness_appeared": "of those, the ones a window of a later query holds",
    "freshness_median_days": "median days from publication to the first window holding the "
                             "document (over the appeared)",
    "freshness_p95_days": "p95 of the same",
    "deleted_eligible": "documents deleted at or before the last query",
    "deleted_still_appearing": "of those, the ones a window of a later query still holds",
    "deletion_propagation_p95_days": "p95 over the deleted documents of the days from "
                                     "deletion to the last window holding them (0: none)",
    "deletion_propagation_max_days": "the largest of the same",
}

UNDEFINED = {
    **dict.fromkeys(PERCENTILES, "latency not measured for any query"),
    **dict.fromkeys(RATES, "no query status recorded"),
    "candidates_per_query": "no queries",
    "empty_share": "no queries",
    "near_duplicate_ratio": "no candidate in any window",
    "embedding_cache_hit_rate": "no text embedded through the embedding cache",
    "cost_per_query": "no cost model in health.cost",
    "freshness_median_days": "no document published inside the queries' time span appeared",
    "freshness_p95_days": "no document published inside the queries' time span appeared",
    "deletion_propagation_p95_days": "no document deleted at or before the last query",
    "deletion_propagation_max_days": "no document deleted at or before the last query",
}


def latency_figures(latency: pd.DataFrame | None, queries: pd.DataFrame) -> dict[str, float]:
    """p50, p95, p99 (numpy's linear percentile) of the measured latencies of ``queries``
    (``latency``: query_id, latency_ms); NaN when none was measured."""
    values = latency_of(latency, queries)
    values = values[~np.isnan(values)]
    return {name: float(np.percentile(values, p)) if len(values) else float("nan")
            for name, p in PERCENTILES.items()}


def status_figures(latency: pd.DataFrame | None, queries: pd.DataFrame) -> dict:
    """``status_recorded`` (queries with a status) and, per non-ok status s, ``<s>_rate`` =
    queries with status s / queries with a status; NaN when none is recorded."""
    status = pd.Series(status_of(latency, queries), dtype=object)
    recorded = int(status.notna().sum())
    counts = status.value_counts()
    return {"status_recorded": recorded} | {
        name: counts.get(s, 0) / recorded if recorded else float("nan")
        for name, s in RATES.items()}


def per_query_candidates(run: pd.DataFrame, queries: pd.DataFrame) -> np.ndarray:
    """Candidates per query of ``queries`` (0 for a query with none)."""
    return (run.groupby(S.QUERY_ID).size()
            .reindex(queries[S.QUERY_ID], fill_value=0).to_numpy())


def window_figures(run: pd.DataFrame, queries: pd.DataFrame) -> dict:
    """``n_queries``, ``candidates_per_query`` (mean) and ``empty_share`` over ``queries``;
    NaN over no query."""
    counts = per_query_candidates(run, queries)
    some = len(counts) > 0
    return {"n_queries": len(counts),
            "candidates_per_query": float(counts.mean()) if some else float("nan"),
            "empty_share": float((counts == 0).mean()) if some else float("nan")}


def text_key(documents: pd.DataFrame) -> pd.Series:
    """Each document's normalised text: title and text joined by a space, casefolded, every
    run of non-alphanumeric characters (punctuation, whitespace, underscores) one space,
    stripped."""
    text = (documents[S.TITLE].fillna("").astype(str) + " "
            + documents[S.TEXT].fillna("").astype(str))
    return text.str.casefold().str.replace(r"[\W_]+", " ", regex=True).str.strip()


def _codes(values: pd.Series) -> np.ndarray:
    """Integer codes of ``values``: equal values share a code ≥ 0; a missing or empty value
    gets a negative code of its own (it equals nothing)."""
    codes, _ = pd.factorize(values.where(values.astype(str) != ""), use_na_sentinel=True)
    alone = codes < 0
    codes[alone] = -1 - np.flatnonzero(alone)
    return codes


def near_duplicates(run: pd.DataFrame, documents: pd.DataFrame) -> dict:
    """Near-duplicates in the windows: an entry (query, document) is one when a higher-ranked
    entry of the same query's window has the same source_id (``same_source``) or the same
    ``text_key`` (``same_text``); a document missing from ``documents``, or without a
    source_id or text, duplicates nothing. Returns ``entries``, ``duplicates`` (either),
    ``same_source``, ``same_text`` and ``near_duplicate_ratio`` = duplicates / entries (NaN
    for no entry)."""
    keys = pd.DataFrame({"_source": _codes(documents[S.SOURCE_ID]),
                         "_text": _codes(text_key(documents))},
                        index=documents[S.DOC_ID].astype(str).to_numpy())
    window = run[[S.QUERY_ID, S.DOC_ID, S.RANK]].sort_values([S.QUERY_ID, S.RANK])
    found = keys.reindex(window[S.DOC_ID].astype(str))
    unknown = found["_source"].isna().to_numpy()
    alone = -1 - len(documents) - np.flatnonzero(unknown)  # codes no document uses
    entries = pd.DataFrame({S.QUERY_ID: window[S.QUERY_ID].to_numpy()})
    for column in ("_source", "_text"):
        codes = np.array(found[column], dtype=float)
        codes[unknown] = alone
        entries[column] = codes.astype(np.int64)
    source = entries.duplicated([S.QUERY_ID, "_source"]).to_numpy()
    text = entries.duplicated([S.QUERY_ID, "_text"]).to_numpy()
    either = int((source | text).sum())
    return {"entries": len(entries), "duplicates": either, "same_source": int(source.sum()),
            "same_text": int(text.sum()),
            "near_duplicate_ratio": either / len(entries) if len(entries) else float("nan")}


def cache_hit_rate(stats: dict) -> float:
    """run_stats' ``embedding_cache.hit_rate``; NaN for a route without one (or none asked)."""
    rate = (stats.get("embedding_cache") or {}).get("hit_rate")
    return float("nan") if rate is None else float(rate)


def query_cost(model, run: pd.DataFrame, queries: pd.DataFrame) -> float:
    """Mean over ``queries`` of per_query + per_candidate × the query's candidates in ``run``
    (``model``: a ``params.Cost``); NaN over no query."""
    counts = per_query_candidates(run, queries)
    if not len(counts):
        return float("nan")
    return float(model.per_query + model.per_candidate * counts.mean())


def system_cost(system: str, costs: Mapping, sources: tuple[str, ...],
                runs: Mapping[str, pd.DataFrame],
                queries: pd.DataFrame) -> tuple[float, str | None, str | None]:
    """``system``'s cost per query, its unit, and why it is undefined (None when defined).
    A system with ``sources`` (fused) costs its sources' costs plus its own model's where
    ``costs`` gives one, and is undefined when a source has none; any other system is
    undefined without a model. The models summed must share a unit (else InputError)."""
    required = list(sources) or [system]
    missing = [s for s in required if s not in costs]
    if missing:
        return float("nan"), None, f"no cost model in health.cost for {', '.join(missing)}"
    parts = required + ([system] if sources and system in costs else [])
    units = sorted({costs[s].unit for s in parts})
    if len(units) > 1:
        raise InputError(f"{system}'s cost sums models in different units ({', '.join(units)}"
                         f" for {', '.join(parts)})", "params.yaml", "health.cost")
    return sum(query_cost(costs[s], runs[s], queries) for s in parts), units[0], None


def revisions(stats: dict) -> dict:
    """What identifies a system's index, model and analyzer where its run_stats records it:
    ``route``, the route's settings (``params``: analyzer, tokenizer, index knobs), the dense
    ``model`` and ``index`` kind, the run file's ``run_sha256`` (a team's run) and the frozen
    ``fusion`` (a fused system); None where the route has none."""
    return {"route": stats.get("route"), "params": stats.get("params"),
            "model": stats.get("model"), "index": stats.get("index"),
            "run_sha256": (stats.get("source") or {}).get("sha256"),
            "fusion": stats.get("fusion")}


def _plain(value):
    """A figure for JSON: None for NaN, Python numbers for numpy ones."""
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else float(value)
    return int(value) if isinstance(value, np.integer) else value


def _undefined(row: dict, why: Mapping[str, str]) -> dict[str, str]:
    """metric -> why, for each NaN figure of ``row`` (``why`` overrides ``UNDEFINED``)."""
    return {name: why.get(name, UNDEFINED[name]) for name in UNDEFINED
            if isinstance(row.get(name), float) and np.isnan(row[name])}


def evaluated_queries(split: pd.DataFrame | None, splits) -> set[str] | None:
    """The query ids the evaluated ``splits`` hold (``split``: the split stage's table,
    query_id and split); None without a split table (every query counts)."""
    if split is None:
        return None
    return set(split.loc[split[S.SPLIT].isin(list(splits)), S.QUERY_ID].astype(str))


def _within(frame: pd.DataFrame | None, ids: set[str] | None) -> pd.DataFrame | None:
    """The rows of ``frame`` whose query is in ``ids`` (all of them for None)."""
    if frame is None or ids is None:
        return frame
    return frame[frame[S.QUERY_ID].astype(str).isin(ids)]


def health(runs: Mapping[str, pd.DataFrame], latencies: Mapping[str, pd.DataFrame | None],
           stats: Mapping[str, dict], documents: pd.DataFrame, queries: pd.DataFrame,
           costs: Mapping, sources: Mapping[str, tuple[str, ...]],
           evaluated: set[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Every system's health: the table (``COLUMNS``, one row per system of ``runs``) and
    per system the same figures with ``undefined`` (figure -> why), ``status`` (queries per
    status), ``near_duplicates`` (the counts), ``cost_model`` and ``revisions``.

    ``latencies``: system -> latency.parquet (None: none); ``stats``: system ->
    run_stats.json; ``costs``: system -> ``params.Cost``; ``sources``: system -> the systems
    it is fused from, lexical then dense (() for an unfused one); ``evaluated``: the query
    ids of the evaluated set (``evaluated_queries``) the per-query figures are over (None:
    every query of ``queries``); freshness reads every query's window."""
    asked = _within(queries, evaluated)
    windows = {name: _within(run, evaluated) for name, run in runs.items()}
    rows, records = [], {}
    for system, run in runs.items():
        own = stats.get(system) or {}
        fused = tuple(sources.get(system) or ())
        cost, unit, cost_why = system_cost(system, costs, fused, windows, asked)
        duplicates = near_duplicates(windows[system], documents)
        row = {S.SYSTEM: system, S.ROUTE: own.get("route"),
               **window_figures(windows[system], asked),
               **latency_figures(latencies.get(system), asked),
               **status_figures(latencies.get(system), asked),
               "near_duplicate_ratio": duplicates.pop("near_duplicate_ratio"),
               "embedding_cache_hit_rate": cache_hit_rate(stats.get(fused[-1], {})
                                                          if fused else own),
               "cost_per_query": cost, "cost_unit": unit,
               **freshness(run, documents, queries)}
        rows.append({c: row[c] for c in COLUMNS})
        records[system] = {
            **{name: _plain(value) for name, value in rows[-1].items()},
            "undefined": _undefined(row, {"cost_per_query": cost_why} if cost_why else {}),
            "status": status_counts(status_of(latencies.get(system), asked)),
            "near_duplicates": duplicates,
            "cost_model": {s: costs[s].model_dump() for s in (*fused, system) if s in costs},
            "revisions": revisions(own)}
    return pd.DataFrame(rows, columns=list(COLUMNS)), {"systems": records,
                                                         "definitions": DEFINITIONS}
