"""``evaluate``: runs scored against qrels by the metrics engine the pipeline and ``releval
metrics`` use (``releval.metrics.engine.evaluate``), over one query set chosen for every run
(``releval.decision.missing``), with each system's n, undefined, empty and missing counted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from releval.api.display import html_table, json_text, plain
from releval.api.inputs import Qrels, Run, Source, read_qrels, read_run
from releval.data import contracts as S
from releval.decision.missing import chosen
from releval.errors import InputError
from releval.metrics.condensed import as_judged_only
from releval.metrics.engine import DEFAULT_MEASURES, Evaluation, resolve
from releval.metrics.engine import evaluate as engine_evaluate
from releval.metrics.ranking import truncated

SUMMARY = (S.SYSTEM, S.MEASURE, S.VALUE, "n", "undefined", "empty", "missing", "applicable",
           "level")
Runs = Run | Source | Mapping[str, Run | Source] | Iterable[Run]


@dataclass(frozen=True, eq=False)
class Results:
    """The evaluation of one or more runs on the same qrels and query set.

    per_query: (system, query_id, measure, value), value NaN where undefined; summary: one
    row per system and measure (``SUMMARY``: value, n averaged, undefined (no relevant
    judgment: excluded, never scored), empty (relevant documents, no ranking: scored 0),
    missing (judged queries the run ranks nothing for: scored 0 under the query set
    ``judged``), applicable, level); counts: system → the engine's ``COUNTS``; query_set:
    the chosen set stated (``releval.decision.missing.chosen``); judged: the qrels' queries;
    answers: system → the queries its run answers."""

    per_query: pd.DataFrame
    summary: pd.DataFrame
    counts: dict[str, dict[str, int]]
    query_set: dict[str, Any]
    judged: frozenset[str]
    answers: dict[str, frozenset[str]]
    evaluations: dict[str, Evaluation] = field(repr=False)

    def __repr__(self) -> str:
        return (f"Results(systems={self.systems}, measures={self.measures}, query set "
                f"{self.query_set['choice']}: {self.query_set['label']})")

    @property
    def systems(self) -> list[str]:
        return list(self.counts)

    @property
    def measures(self) -> list[str]:
        return list(dict.fromkeys(self.summary[S.MEASURE]))

    def means(self) -> pd.DataFrame:
        """system × measure: the summary's values."""
        return self.summary.pivot(index=S.SYSTEM, columns=S.MEASURE, values=S.VALUE).reindex(
            index=self.systems, columns=self.measures)

    def to_frame(self, per_query: bool = False) -> pd.DataFrame:
        """The summary (``per_query``: the per-query values), a copy."""
        return (self.per_query if per_query else self.summary).copy()

    def to_dict(self, per_query: bool = False) -> dict:
        """JSON-ready: the query set, then per system its measures (value, n, undefined,
        empty, applicable) and counts, as the metrics command's JSON has them."""
        systems = {}
        for system in self.systems:
            rows = self.summary[self.summary[S.SYSTEM] == system]
            systems[system] = {
                "measures": {r.measure: {"value": plain(r.value), "n": int(r.n),
                                         "undefined": int(r.undefined), "empty": int(r.empty),
                                         "applicable": bool(r.applicable)}
                             for r in rows.itertuples(index=False)},
                "counts": self.counts[system]}
        doc = {"query_set": self.query_set, "systems": systems}
        if per_query:
            doc["per_query"] = plain(self.per_query.to_dict(orient="records"))
        return doc

    def to_json(self, per_query: bool = False) -> str:
        return json_text(self.to_dict(per_query))

    def _repr_html_(self) -> str:
        shown = self.summary[[S.SYSTEM, S.MEASURE, S.VALUE, "n", "undefined", "empty",
                              "missing"]]
        return html_table(shown, f"query set ({self.query_set['choice']}): "
                                 f"{self.query_set['label']}")


def _runs(runs: Runs) -> dict[str, Run]:
    """Name → Run for one run, a list of runs or a mapping (its keys name them)."""
    if isinstance(runs, Mapping):
        named = {str(k): read_run(v, name=str(k)) for k, v in runs.items()}
    elif isinstance(runs, Run | str | pd.DataFrame) or hasattr(runs, "__fspath__"):
        one = read_run(runs)
        named = {one.name: one}
    else:
        listed = [read_run(r) for r in runs]
        named = {r.name: r for r in listed}
        if len(named) < len(listed):
            names = [r.name for r in listed]
            twice = next(n for n in names if names.count(n) > 1)
            raise InputError(f"two runs are named {twice!r}: give them as a mapping of "
                             "names", "evaluate")
    if not named:
        raise InputError("no run to evaluate", "evaluate")
    return named


def evaluate(qrels: Qrels | Source, runs: Runs, measures: str | Iterable[str] = DEFAULT_MEASURES,
             *, query_set: str = "judged", rel: int = 1, max_grade: int = 3,
             judged_only: bool = False, depth: int | None = None) -> Results:
    """Score each run against ``qrels``. ``measures``: names in either style (nDCG@10,
    ndcg_cut.10). ``query_set`` (``releval.decision.missing.QUERY_SETS``): judged (every
    judged query; one a run misses scores 0 there, trec_eval's complete mode), common (the
    judged queries every run answers) or refuse (``MissingQueries`` when a run misses one).
    ``rel``: the least relevant grade of binary measures; ``max_grade``: the top of the grade
    scale; ``judged_only``: measured on each ranking without its unjudged documents;
    ``depth``: only the first ``depth`` documents of each ranked list count. A query without
    a relevant judgment is undefined (excluded from the means, counted), never scored 0."""
    truth = read_qrels(qrels)
    named = _runs(runs)
    wanted = resolve([measures] if isinstance(measures, str) else measures, rel)
    if judged_only:
        wanted = as_judged_only(wanted)
    frames = {}
    for name, run in named.items():
        if run.frame.empty:
            raise InputError("the run holds no ranked document: nothing to evaluate",
                             run.source)
        frames[name] = truncated(run.frame, depth) if depth is not None else run.frame
    answers = {name: run.queries for name, run in named.items()}
    judged = truth.queries
    kept, block = chosen(query_set, set(judged), dict(answers), "evaluate")
    common_only = query_set == "common"
    queries = None if len(named) == 1 or kept == judged else sorted(kept)
    evaluations = {name: engine_evaluate(frame, truth.frame, wanted, rel=rel,
                                         max_grade=max_grade, common_only=common_only,
                                         queries=queries)
                   for name, frame in frames.items()}
    per_query = pd.concat([e.per_query.assign(**{S.SYSTEM: name})
                           for name, e in evaluations.items()], ignore_index=True)
    summary = pd.concat([e.summary.assign(**{S.SYSTEM: name,
                                             "missing": e.counts["queries_missing"]})
                         for name, e in evaluations.items()], ignore_index=True)
    return Results(per_query[[S.SYSTEM, *S.PER_QUERY_COLUMNS]], summary[list(SUMMARY)],
                   {name: dict(e.counts) for name, e in evaluations.items()}, block,
                   judged, answers, evaluations)
