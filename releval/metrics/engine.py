"""Evaluate a run against qrels: per-query values and per-measure aggregates."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval import executor
from releval.data import contracts as S
from releval.metrics import blocks
from releval.metrics.catalog import Catalog
from releval.metrics.judgments import Judgments
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.metrics.ranking import Ranking
from releval.metrics.registry import AGGREGATES, BY_JUDGMENTS, Pooled
from releval.metrics.spec import Measure

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10", "P@10", "AP", "Judged@10")
SUMMARY_COLUMNS = (S.MEASURE, S.VALUE, "n", "undefined", "empty", "applicable", "level")
COUNTS = ("queries_in_run", "queries_evaluated", "run_queries_not_in_qrels", "queries_judged",
          "queries_missing", "queries_answered_not_judged")


@dataclass(frozen=True)
class Evaluation:
    """Result of ``evaluate``.

    per_query: (query_id, measure, value) for every evaluated query and per-query measure,
    value NaN where undefined. summary: one row per measure (system-level ones included) with
    value (mean, sum for counting measures, or the pooled system value), n (queries averaged
    or contributing), undefined (|R| = 0 or otherwise no value: excluded, never scored; n +
    undefined = queries evaluated), empty (relevant documents but no ranking: scored 0,
    counted), applicable (False: the run or the context lacks what the measure needs, e.g.
    probabilities or the catalogue; value NaN, n 0) and level ("query" | "system"). counts
    (``COUNTS``): queries in the run, evaluated, ignored because the qrels do not know them,
    judged (evaluated with at least one judgment of any grade) and missing (judged, but the
    run ranks nothing for them: scored 0 where the measure is defined, never dropped
    silently).
    """

    per_query: pd.DataFrame
    summary: pd.DataFrame
    counts: dict[str, int]


def resolve(measures: Iterable[str | Measure], rel: int = 1) -> list[Measure]:
    """Measure strings (either naming style) to unique ``Measure``s, in order."""
    out: list[Measure] = []
    for item in measures:
        for m in [item] if isinstance(item, Measure) else parse_measures(item, rel=rel):
            if m not in out:
                out.append(m)
    return out


def _part(r: Ranking, m: Measure) -> tuple[np.ndarray | Pooled, np.ndarray, bool]:
    """(per-query values, or the pooled value of a system-level measure; per query, whether it
    has relevant documents but no ranking; applicable)."""
    family = MEASURES[m.family]
    applicable = bool(family.available(r, m))
    if family.level == "system":
        out = family.compute(r, m) if applicable else Pooled(np.nan, np.zeros(r.nq, bool))
    else:
        out = family.compute(r, m) if applicable else np.full(r.nq, np.nan)
    return out, r.empty & (r.n_rel(m.rel) > 0), applicable


def _summary_row(m: Measure, out: np.ndarray | Pooled, empty: np.ndarray,
                 applicable: bool) -> dict:
    family = MEASURES[m.family]
    if family.level == "system":
        counted, value = out.contributing, out.value
    else:
        counted = ~np.isnan(out)
        value = AGGREGATES[family.aggregate](out[counted])
    n = int(counted.sum())
    return {S.MEASURE: m.name, S.VALUE: float(value), "n": n, "undefined": len(empty) - n,
            "empty": int((counted & empty).sum()), "applicable": applicable,
            "level": family.level}


def _strings(values, at: np.ndarray) -> pd.Series:
    """``values[at]`` as a string column."""
    if not isinstance(values, pa.Array):
        values = pa.array([str(v) for v in values], pa.large_string())
    return values.take(pa.array(at, pa.int64())).to_pandas()


def _counts(r: Ranking) -> tuple[int, ...]:
    """``COUNTS`` of one ranking, in order."""
    judged = r.n_judged() > 0
    return (r.n_run_queries, r.nq, r.not_in_qrels, int(judged.sum()),
            int((judged & r.empty).sum()), int((~judged & ~r.empty).sum()))


def _block(block: blocks.Block, judgments: Judgments | Future,
           wanted: list[Measure]) -> tuple[pa.Array, list[tuple], tuple[int, ...]]:
    """One block's evaluated queries, ``_part``'s triple per measure over them, and its
    ``COUNTS``."""
    r = Ranking(block.run, judgments, common_only=block.common_only, queries=block.queries)
    return r.query_ids, [_part(r, m) for m in wanted], _counts(r)


def _parts(run: pd.DataFrame, qrels: pd.DataFrame, wanted: list[Measure], *, max_grade: int,
           common_only: bool, queries: list[str] | None, catalog: Catalog | None,
           workers: int | None) -> tuple[pa.Array, list[tuple], dict[str, int]]:
    """(evaluated queries in order; per measure, ``_part``'s triple over them; counts), from
    one ``Ranking`` or, for a large run of per-query measures whose availability depends on
    the judgments alone (``BY_JUDGMENTS``), one per block of queries (``releval.metrics.blocks``):
    the blocks are tasks on the active Dask executor, sharing the judgments built here, or
    else run on ``workers`` threads."""
    with ThreadPoolExecutor(blocks.workers(workers)) as pool:
        judging = pool.submit(Judgments, qrels, max_grade)  # beside the run's own work
        plan = None
        if catalog is None and all(MEASURES[m.family].level == "query"
                                   and MEASURES[m.family].available in BY_JUDGMENTS
                                   for m in wanted):
            plan = blocks.plan(run, queries)
        if plan is None:
            r = Ranking(run, judging, common_only=common_only, queries=queries, catalog=catalog)
            counts = dict(zip(COUNTS, _counts(r), strict=True))
            return r.query_ids, [_part(r, m) for m in wanted], counts
        runner = executor.active()
        # bad qrels: the threads raise what the whole run would (its own errors come first)
        if runner.name == "dask" and judging.exception() is None:
            judgments = judging.result()
            todo = plan.blocks if common_only else [*plan.blocks, plan.unranked(judgments)]
            done = runner.map(partial(_block, wanted=wanted), todo,
                              shared={"judgments": judgments}, description="evaluation")
        else:
            done = list(pool.map(partial(_block, judgments=judging, wanted=wanted),
                                 plan.blocks))
            if not common_only:
                done.append(_block(plan.unranked(judging.result()), judging, wanted))
    names = pa.concat_arrays([d[0] for d in done])
    order = pc.sort_indices(names).to_numpy()
    scored = [(np.concatenate([d[1][i][0] for d in done])[order],
               np.concatenate([d[1][i][1] for d in done])[order], all(d[1][i][2] for d in done))
              for i in range(len(wanted))]
    totals = np.sum([d[2] for d in done], axis=0, dtype=np.int64)
    counts = dict(zip(COUNTS, map(int, totals), strict=True))
    return names.take(pa.array(order)), scored, counts


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame,
             measures: Iterable[str | Measure] = DEFAULT_MEASURES, *, rel: int = 1,
             max_grade: int = 3, common_only: bool = False,
             queries: Iterable[str] | None = None, catalog: Catalog | None = None,
             workers: int | None = None) -> Evaluation:
    """Score ``run`` (query_id, doc_id, rank and/or score, optional probability) against
    ``qrels`` (query_id, doc_id, grade).

    Averages run over every qrels query (a query missing from the run scores 0, as
    trec_eval -c) unless ``common_only``, which keeps only queries in both (trec_eval's
    default). Queries with no relevant judgment are undefined for the relevance measures
    (trec_eval scores them 0: the one deliberate difference). ``queries`` fixes the set of
    evaluated queries (e.g. a test split): judgments and ranked lists of other queries are
    ignored, and a listed query without judgments is undefined. ``catalog``: the items'
    context the beyond-accuracy measures need (``releval.metrics.catalog``); without it they
    are not applicable, as the probability measures are on a run without probabilities.
    ``workers``: threads for a large run (default: the cores this process may use), whose
    blocks are tasks on the active executor instead when it is a Dask one; the values depend
    on neither.
    """
    wanted = resolve(measures, rel)
    names, scored, counts = _parts(
        run, qrels, wanted, max_grade=max_grade, common_only=common_only,
        queries=None if queries is None else list(map(str, queries)), catalog=catalog,
        workers=workers)
    nq = len(names)
    per = [(m.name, out) for m, (out, _, _) in zip(wanted, scored, strict=True)
           if MEASURES[m.family].level == "query"]
    per_query = pd.DataFrame({  # the id columns built in Arrow: no Python string per row
        S.QUERY_ID: _strings(names, np.tile(np.arange(nq), len(per))),
        S.MEASURE: _strings([name for name, _ in per], np.repeat(np.arange(len(per)), nq)),
        S.VALUE: np.concatenate([values for _, values in per]) if per else np.zeros(0),
    })
    summary = pd.DataFrame([_summary_row(m, *part) for m, part in zip(wanted, scored,
                                                                      strict=True)],
                           columns=list(SUMMARY_COLUMNS))
    summary = summary.astype({"n": "int64", "undefined": "int64", "empty": "int64",
                              "applicable": bool, S.VALUE: "float64"})
    return Evaluation(per_query, summary, counts)


@dataclass(frozen=True)
class Systems:
    """Result of ``evaluate_systems``.

    per_query: (system, query_id, measure, value), per-query measures only; means: system
    -> measure -> value (6 decimals, None where undefined for every query or not
    applicable: ``dvc metrics``); summary: system -> measure -> {value, n, undefined, empty,
    applicable, level} (``Evaluation.summary``); answered: system -> its queries over the
    evaluated set (``releval.decision.missing.Answered``: judged, answered, missing,
    not_judged); skipped: the systems whose run is empty (no rows for this data), reported,
    not scored.
    """

    per_query: pd.DataFrame
    means: dict[str, dict[str, float | None]]
    summary: dict[str, dict[str, dict]]
    skipped: list[str]
    answered: dict[str, dict[str, int]]


def missing(measure: str) -> str:
    """What the data lacks when ``measure`` does not apply (its family's ``Needs``)."""
    return MEASURES[parse_measures(measure)[0].family].available.missing


def evaluate_systems(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame,
                     measures: Iterable[str | Measure], *, rel: int = 1, max_grade: int = 3,
                     queries: Iterable[str] | None = None,
                     catalog: Catalog | None = None) -> Systems:
    """``evaluate`` for each system's run on the same qrels, evaluated ``queries`` and
    ``catalog``; a summary entry of a measure that does not apply says what is ``missing``."""
    queries = None if queries is None else list(queries)
    frames, means, summary, answered = [], {}, {}, {}
    skipped = sorted(name for name, run in runs.items() if run.empty)
    for system, run in runs.items():
        if run.empty:
            continue
        result = evaluate(run, qrels, measures, rel=rel, max_grade=max_grade, queries=queries,
                          catalog=catalog)
        frames.append(result.per_query.assign(**{S.SYSTEM: system}))
        c = result.counts
        answered[system] = {"judged": c["queries_judged"],
                            "answered": c["queries_judged"] - c["queries_missing"],
                            "missing": c["queries_missing"],
                            "not_judged": c["queries_answered_not_judged"]}
        rows = result.summary.set_index(S.MEASURE)
        means[system] = {m: None if pd.isna(v) else round(float(v), 6)
                         for m, v in rows[S.VALUE].items()}
        summary[system] = {m: {"value": means[system][m], "n": int(r["n"]),
                               "undefined": int(r["undefined"]), "empty": int(r["empty"]),
                               "applicable": bool(r["applicable"]), "level": r["level"]}
                           | ({} if r["applicable"] else {"missing": missing(m)})
                           for m, r in rows.iterrows()}
    columns = [S.SYSTEM, *S.PER_QUERY_COLUMNS]
    table = (pd.concat(frames, ignore_index=True)[columns] if frames
             else pd.DataFrame(columns=columns))
    return Systems(table, means, summary, skipped, answered)
