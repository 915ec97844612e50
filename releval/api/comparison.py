"""``compare``: candidate against baseline, paired per query, by the comparison the pipeline's
compare stage and ``releval compare`` run (``releval.decision.compare``: bootstrap CI, the
named test's p (``releval.decision.significance.TESTS``), Holm over measures × slices), over
the query set chosen from what each run answers (``releval.decision.missing``).

Refusals are the library's domain errors: ``MeasuresDiffer`` (no measures named and the
tables' measures differ), ``QueriesDiffer`` (different query sets and an uncontrolled view not
allowed), ``MissingQueries`` (query set refuse and a run misses a judged query)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from releval.api.display import cell, html_table, json_text, plain
from releval.api.evaluation import Results, evaluate
from releval.api.inputs import Qrels, Run, Source, read_qrels
from releval.data import contracts as S
from releval.decision.compare import compare as paired_comparison
from releval.errors import InputError
from releval.report.formats import interval, wins_ties_losses

RUN_MEASURES = ("nDCG@10", "R@100", "RR@10")  # a run's measures when none are named
SHOWN = ("measure", "slice", "n", "mean_baseline", "mean_candidate", "mean_diff", "ci_low",
         "ci_high", "p_value", "p_holm", "verdict")


@dataclass(frozen=True, eq=False)
class Comparison:
    """One paired comparison as a JSON-ready document (``doc``: ``controlled``, the
    ``paired`` rows (one per measure × slice) or the ``uncontrolled`` rate/mix rows,
    ``differences``, ``query_set``, ``unit``, ``baseline`` and ``candidate``: what
    the compare command writes as JSON, and what ``gate`` reads)."""

    doc: dict[str, Any]

    def __repr__(self) -> str:
        rows = self.doc.get("paired" if self.controlled else "uncontrolled", [])
        return (f"Comparison({self.candidate} against {self.baseline}, "
                f"{'controlled' if self.controlled else 'UNCONTROLLED'}, {len(rows)} rows)")

    @property
    def baseline(self) -> str:
        return self.doc["baseline"]

    @property
    def candidate(self) -> str:
        return self.doc["candidate"]

    @property
    def controlled(self) -> bool:
        return bool(self.doc["controlled"])

    @property
    def query_set(self) -> dict[str, Any]:
        return self.doc["query_set"]

    def row(self, measure: str, slice: str = S.ALL) -> dict[str, Any]:
        """The paired row of ``measure`` (over ``slice``)."""
        for r in self.doc.get("paired", []):
            if r["measure"] == measure and r["slice"] == slice:
                return r
        raise KeyError(f"no paired row of {measure} over {slice}")

    def to_frame(self) -> pd.DataFrame:
        """The paired rows (uncontrolled: the rate/mix rows), one per row."""
        return pd.DataFrame(self.doc["paired"] if self.controlled else self.doc["uncontrolled"])

    def to_dict(self) -> dict[str, Any]:
        return plain(self.doc)

    def to_json(self) -> str:
        return json_text(self.doc)

    def _repr_html_(self) -> str:
        head = (f"{self.candidate} against {self.baseline}; query set "
                f"({self.query_set['choice']}): {self.query_set['label']}")
        frame = self.to_frame()
        if not self.controlled:
            return html_table(frame.drop(columns=["aggregates_before", "aggregates_after"],
                                         errors="ignore"), "UNCONTROLLED: " + head)
        shown = frame.assign(**{"95% CI": [interval(lo, hi) for lo, hi in
                                           zip(frame["ci_low"], frame["ci_high"], strict=True)],
                                "W/T/L": [wins_ties_losses(r) for r in self.doc["paired"]]})
        columns = [c for c in SHOWN if c not in ("ci_low", "ci_high")]
        shown = shown[[*columns[:6], "95% CI", "W/T/L", *columns[6:]]]
        return html_table(shown, head, {"mean_diff": lambda v: cell(v, "+.4f")})


def paired(tables: Mapping[str, pd.DataFrame], baseline: str, candidate: str, *,
           answers: Mapping[str, Iterable[str] | None] | None = None,
           judged: Iterable[str] | None = None, measures: Iterable[str] | None = None,
           query_set: str = "judged", **options) -> Comparison:
    """``baseline`` against ``candidate`` of ``tables`` (name → per-query table: query_id,
    measure, value) over ``query_set`` of the ``judged`` queries (default: every query of the
    two tables), from what each run ``answers`` (None: not known). ``options``: the
    comparison's (``releval.decision.compare.compare``: slices, weights, clusters,
    allow_uncontrolled, min_effect, resamples, alpha, seed, common_measures, test,
    tie_band)."""
    for name in (baseline, candidate):
        if name not in tables:
            raise InputError(f"no system {name!r} to compare; there are {sorted(tables)}",
                             "compare")
    answers = answers or {}
    known = {n: None if answers.get(n) is None else set(answers[n])
             for n in (baseline, candidate)}
    doc = paired_comparison(tables[baseline], tables[candidate],
                            None if measures is None else list(measures),
                            query_set=query_set, answers=known,
                            judged=None if judged is None else set(judged), **options)
    return Comparison(doc | {"baseline": baseline, "candidate": candidate})


def _series(mapping, name: str) -> pd.Series | None:
    """A query map (query_id → value) as the comparison reads it."""
    if mapping is None or isinstance(mapping, pd.Series):
        return mapping
    if isinstance(mapping, pd.DataFrame):
        S.require_columns(mapping, (S.QUERY_ID, name), name)
        return mapping.set_index(mapping[S.QUERY_ID].astype(str))[name]
    return pd.Series({str(k): v for k, v in dict(mapping).items()}, name=name)


def _is_per_query(value) -> bool:
    return isinstance(value, pd.DataFrame) and set(S.PER_QUERY_COLUMNS) <= set(value.columns)


def compare(results_or_runs: Results | Mapping[str, Run | Source], baseline: str,
            candidate: str, *, qrels: Qrels | Source | None = None,
            measures: str | Iterable[str] | None = None, test: str = "randomization",
            query_set: str | None = None, min_effect: float | Mapping[str, float] = 0.0,
            alpha: float = 0.05, resamples: int = 10_000, seed: int = 0,
            tie_band: float = 0.0, slices=None, weights=None, clusters=None,
            allow_uncontrolled: bool = False, common_measures: bool = False, rel: int = 1,
            max_grade: int = 3) -> Comparison:
    """``candidate`` against ``baseline``, paired by query.

    ``results_or_runs``: ``evaluate``'s ``Results`` (their query set by default), or a
    mapping name → run (evaluated here against ``qrels`` over every judged query, as
    ``evaluate`` does; ``measures`` default nDCG@10, R@100, RR@10) or → per-query table
    (query_id, measure, value; which queries its run missed is not known). ``query_set``:
    judged, common or refuse (``evaluate``). ``test``: randomization, t, wilcoxon, sign
    (``tie_band``: |Δ| counted a tie) or bootstrap. ``min_effect``: the least Δ that matters,
    one or per measure. ``slices`` / ``weights`` / ``clusters``: query_id → slice label /
    traffic weight / user (a Series, a mapping, or a frame with query_id and the column).
    ``allow_uncontrolled``: the unpaired rate/mix view where the query sets differ."""
    measures = [measures] if isinstance(measures, str) else measures
    judged = None if qrels is None else read_qrels(qrels).queries
    if isinstance(results_or_runs, Results):
        results = results_or_runs
    elif all(_is_per_query(v) for v in results_or_runs.values()):
        results = None
        tables = {str(k): v.assign(**{S.QUERY_ID: v[S.QUERY_ID].astype(str),
                                      S.VALUE: pd.to_numeric(v[S.VALUE])})
                  for k, v in results_or_runs.items()}
        answers: Mapping[str, Iterable[str] | None] = {}
    else:
        absent = [n for n in (baseline, candidate) if n not in results_or_runs]
        if absent:
            raise InputError(f"no run named {absent[0]!r}; there are {sorted(results_or_runs)}",
                             "compare")
        if qrels is None:
            raise InputError("runs are evaluated against qrels: give the qrels (or per-query "
                             "tables: query_id, measure, value)", "compare")
        results = evaluate(qrels, {k: v for k, v in results_or_runs.items()
                                   if k in (baseline, candidate)},
                           measures or RUN_MEASURES, rel=rel, max_grade=max_grade)
    if results is not None:
        evaluated = results.query_set["choice"]
        query_set = query_set or evaluated
        if evaluated == "common" and query_set != "common":
            raise InputError(f"the results were evaluated over the query set 'common': "
                             f"compare them over it, or evaluate over {query_set!r}",
                             "compare")
        tables = {name: g.drop(columns=S.SYSTEM) for name, g in
                  results.per_query.groupby(S.SYSTEM, sort=False)}
        answers, judged = results.answers, results.judged if judged is None else judged
    return paired(tables, baseline, candidate, answers=answers, judged=judged,
                  measures=measures, query_set=query_set or "judged",
                  slices=_series(slices, S.SLICE), weights=_series(weights, S.WEIGHT),
                  clusters=_series(clusters, S.USER_ID), allow_uncontrolled=allow_uncontrolled,
                  min_effect=dict(min_effect) if isinstance(min_effect, Mapping) else min_effect,
                  resamples=resamples, alpha=alpha, seed=seed,
                  common_measures=common_measures, test=test, tie_band=tie_band)
