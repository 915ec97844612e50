"""Evaluate a run against qrels: per-query values and per-measure aggregates."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.metrics.ranking import Ranking
from releval.metrics.spec import Measure

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10", "P@10", "AP", "Judged@10")


@dataclass(frozen=True)
class Evaluation:
    """Result of ``evaluate``.

    per_query: (query_id, measure, value) for every evaluated query and measure, value NaN
    where undefined. summary: one row per measure with value (mean, or sum for counting
    measures), n (queries averaged), undefined (|R| = 0: excluded, never scored) and empty
    (relevant documents but no ranking: scored 0, counted). counts: queries in the run,
    in the qrels, evaluated, and ignored because the qrels do not know them.
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


def evaluate(run: pd.DataFrame, qrels: pd.DataFrame,
             measures: Iterable[str | Measure] = DEFAULT_MEASURES, *, rel: int = 1,
             max_grade: int = 3, common_only: bool = False,
             queries: Iterable[str] | None = None) -> Evaluation:
    """Score ``run`` (query_id, doc_id, rank and/or score) against ``qrels``
    (query_id, doc_id, grade).

    Averages run over every qrels query (a query missing from the run scores 0, as
    trec_eval -c) unless ``common_only``, which keeps only queries in both (trec_eval's
    default). Queries with no relevant judgment are undefined for the relevance measures
    (trec_eval scores them 0: the one deliberate difference). ``queries`` fixes the set of
    evaluated queries (e.g. a test split): judgments and ranked lists of other queries are
    ignored, and a listed query without judgments is undefined.
    """
    wanted = resolve(measures, rel)
    ranking = Ranking(run, qrels, max_grade=max_grade, common_only=common_only,
                      queries=None if queries is None else list(queries))
    values = np.stack([MEASURES[m.family].compute(ranking, m) for m in wanted]) \
        if wanted else np.zeros((0, ranking.nq))
    names = [m.name for m in wanted]
    per_query = pd.DataFrame({
        S.QUERY_ID: np.tile(ranking.queries, len(wanted)).astype(str),
        S.MEASURE: np.repeat(names, ranking.nq),
        S.VALUE: values.ravel(),
    })
    defined = ~np.isnan(values)
    has_relevant = np.stack([ranking.n_rel(m.rel) > 0 for m in wanted]) \
        if wanted else np.zeros((0, ranking.nq), bool)
    n = defined.sum(axis=1)
    sums = np.where(defined, values, 0.0).sum(axis=1)
    summing = np.array([MEASURES[m.family].aggregate == "sum" for m in wanted], bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(summing, sums, np.where(n > 0, sums / np.maximum(n, 1), np.nan))
    summary = pd.DataFrame({
        S.MEASURE: names,
        S.VALUE: value,
        "n": n,
        "undefined": (~defined).sum(axis=1),
        "empty": (defined & ranking.empty & has_relevant).sum(axis=1),
    })
    counts = {
        "queries_in_run": ranking.n_run_queries,
        "queries_evaluated": ranking.nq,
        "run_queries_not_in_qrels": ranking.not_in_qrels,
    }
    return Evaluation(per_query, summary, counts)


@dataclass(frozen=True)
class Systems:
    """Result of ``evaluate_systems``.

    per_query: (system, query_id, measure, value); means: system -> measure -> mean (6
    decimals, None where undefined for every query: ``dvc metrics``); summary: system ->
    measure -> {value, n, undefined, empty} (``Evaluation.summary``); skipped: the systems
    whose run is empty (no rows for this data), reported, not scored.
    """

    per_query: pd.DataFrame
    means: dict[str, dict[str, float | None]]
    summary: dict[str, dict[str, dict]]
    skipped: list[str]


def evaluate_systems(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame,
                     measures: Iterable[str | Measure], *, rel: int = 1, max_grade: int = 3,
                     queries: Iterable[str] | None = None) -> Systems:
    """``evaluate`` for each system's run on the same qrels and evaluated ``queries``."""
    queries = None if queries is None else list(queries)
    frames, means, summary = [], {}, {}
    skipped = sorted(name for name, run in runs.items() if run.empty)
    for system, run in runs.items():
        if run.empty:
            continue
        result = evaluate(run, qrels, measures, rel=rel, max_grade=max_grade, queries=queries)
        frames.append(result.per_query.assign(**{S.SYSTEM: system}))
        rows = result.summary.set_index(S.MEASURE)
        means[system] = {m: None if pd.isna(v) else round(float(v), 6)
                         for m, v in rows[S.VALUE].items()}
        summary[system] = {m: {"value": means[system][m], "n": int(r["n"]),
                               "undefined": int(r["undefined"]), "empty": int(r["empty"])}
                           for m, r in rows.iterrows()}
    columns = [S.SYSTEM, *S.PER_QUERY_COLUMNS]
    table = (pd.concat(frames, ignore_index=True)[columns] if frames
             else pd.DataFrame(columns=columns))
    return Systems(table, means, summary, skipped)
