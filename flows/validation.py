"""The data contracts' suites (docs/architecture.md), one per table, and their checks.

Each suite is plain data: Great Expectations expectation types with their keyword arguments
(:class:`Expect`). The flow runs them as vectorised pandas checks with GX's semantics
(``flows.expectations``), so validating never imports GX; ``flows.validation_gx`` builds the
same suites as GX ExpectationSuites and runs them through GX's pandas engine: the reference
the checks are held to (``tests/flows/test_validation_parity.py``).

``check(name, frame)`` runs the table's suite on a frame, optionally saves the report as
JSON, and raises :class:`ValidationFailed` naming the suite, expectation, column and
example rows. Invariants GX cannot express (contiguous ranks, scores ordered by rank,
integer grades) are computed with pandas into helper boolean columns (``_``-prefixed) on
a copy of the frame and checked with ``expect_column_values_to_be_in_set`` ``[True]``, so
their failures report the same way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from flows.expectations import evaluate
from releval.data import contracts as S
from releval.decision import health
from releval.decision.safety import SAFETY_REASONS, VIOLATION_COLUMNS
from releval.diagnosis.layers import LAYERS
from releval.documents.offpolicy import ESTIMATE_TABLE, KINDS
from releval.params.slices import DIMENSIONS

N_EXAMPLES = 5


# --- helper columns -------------------------------------------------------------------------


def _diff_consistent(frame: pd.DataFrame) -> np.ndarray:
    """False where diff is not candidate − baseline (NaN exactly where either side is)."""
    expected = frame["candidate"].astype(float) - frame["baseline"].astype(float)
    diff = frame["diff"].astype(float)
    both_nan = expected.isna() & diff.isna()
    return (both_nan | ((expected - diff).abs() <= 1e-12)).to_numpy()


def _grade_integer(frame: pd.DataFrame) -> pd.Series:
    """False where a grade is not a whole number; null (not checked) where it is missing."""
    grade = frame[S.GRADE]
    return pd.to_numeric(grade, errors="coerce").mod(1).eq(0).astype(object).where(grade.notna())


def _probability_ok(frame: pd.DataFrame) -> np.ndarray:
    """False where a run's probability (an optional column) is missing or outside [0, 1];
    True everywhere for a run without probabilities."""
    if S.PROBABILITY not in frame.columns:
        return np.ones(len(frame), bool)
    p = pd.to_numeric(frame[S.PROBABILITY], errors="coerce")
    return (p.between(0, 1) & p.notna()).to_numpy()


def _hard_negative_ok(frame: pd.DataFrame) -> np.ndarray:
    """False where a judgment is marked a hard negative but graded relevant (≥ 1)."""
    marked = frame[S.HARD_NEGATIVE].astype("boolean").fillna(False).to_numpy(bool)
    grade = pd.to_numeric(frame[S.GRADE], errors="coerce").to_numpy(float)
    return ~marked | (grade < S.HARD_NEGATIVE_BELOW)


def _tally_ok(frame: pd.DataFrame) -> np.ndarray:
    """False where a self-test row's counts do not add up: 0 ≤ passed ≤ reached ≤ trials and
    failed = reached − passed."""
    t, r, p, f = (frame[c].to_numpy(np.int64) for c in ("trials", "reached", "passed", "failed"))
    return (0 <= p) & (p <= r) & (r <= t) & (f == r - p)


def _ci_ordered(frame: pd.DataFrame) -> np.ndarray:
    """False where ci_low ≤ value ≤ ci_high fails (rows missing any of the three pass)."""
    low, value, high = (frame[c].to_numpy(float) for c in ("ci_low", "value", "ci_high"))
    with np.errstate(invalid="ignore"):
        return np.isnan(low + value + high) | ((low <= value + 1e-12) & (value <= high + 1e-12))


class Helper(NamedTuple):
    """A derived check column: the columns it reads (shown as example values) and its rule."""

    inputs: tuple[str, ...]
    compute: Callable[[pd.DataFrame], Any]


HELPERS: dict[str, Helper] = {
    "_rank_contiguous": Helper((*S.LIST_KEY, S.RANK), S.rank_contiguous),
    "_score_order_ok": Helper((*S.LIST_KEY, S.RANK, S.SCORE), S.score_order_ok),
    "_grade_integer": Helper((S.GRADE,), _grade_integer),
    "_probability_ok": Helper((*S.LIST_KEY, S.DOC_ID), _probability_ok),
    "_hard_negative_ok": Helper((S.QUERY_ID, S.DOC_ID, S.GRADE, S.HARD_NEGATIVE),
                                _hard_negative_ok),
    "_query_source_ok": Helper((S.QUERY_ID, S.QUERY_SOURCE), S.query_source_ok),
    "_tally_ok": Helper((S.SYSTEM, "relation", "trials", "reached", "passed", "failed"),
                        _tally_ok),
    "_diff_consistent": Helper((S.QUERY_ID, S.MEASURE, "baseline", "candidate", "diff"),
                               _diff_consistent),
    "_ci_ordered": Helper(("kind", "estimator", "position", "value", "ci_low", "ci_high"),
                          _ci_ordered),
}


# --- suites as data ---------------------------------------------------------------------------


class Expect(NamedTuple):
    """One expectation: its GX type (``expect_…``) and keyword arguments, as GX takes them."""

    type: str
    kwargs: dict


class Suite(NamedTuple):
    name: str
    expectations: tuple[Expect, ...]


def _suite(name: str, expectations: list[Expect]) -> Suite:
    return Suite(name, tuple(expectations))


def _exist(columns) -> list[Expect]:
    return [Expect("expect_column_to_exist", {"column": c}) for c in columns]


def _not_null(*columns: str) -> list[Expect]:
    return [Expect("expect_column_values_to_not_be_null", {"column": c}) for c in columns]


def _unique(column: str) -> Expect:
    return Expect("expect_column_values_to_be_unique", {"column": column})


def _compound_unique(columns: list[str]) -> Expect:
    return Expect("expect_compound_columns_to_be_unique", {"column_list": list(columns)})


def _in_set(column: str, values) -> Expect:
    return Expect("expect_column_values_to_be_in_set",
                  {"column": column, "value_set": list(values)})


def _between(column: str, min_value=None, max_value=None) -> Expect:
    bounds = {"min_value": min_value, "max_value": max_value}
    return Expect("expect_column_values_to_be_between",
                  {"column": column, **{k: v for k, v in bounds.items() if v is not None}})


def _a_at_least_b(a: str, b: str, **kwargs) -> Expect:
    return Expect("expect_column_pair_values_a_to_be_greater_than_b",
                  {"column_A": a, "column_B": b, "or_equal": True, **kwargs})


def _holds(helper: str) -> Expect:
    return _in_set(helper, [True])


# --- suites ---------------------------------------------------------------------------------


def documents_suite() -> Suite:
    """documents: doc_id key, known status, deleted_at ≥ published_at where set."""
    return _suite("documents", [
        *_exist(S.DOCUMENT_COLUMNS),
        *_not_null(S.DOC_ID, S.PUBLISHED_AT, S.STATUS, S.TENANT),
        _unique(S.DOC_ID),
        _in_set(S.STATUS, list(S.STATUSES)),
        _a_at_least_b(S.DELETED_AT, S.PUBLISHED_AT, ignore_row_if="either_value_is_missing"),
    ])


def queries_suite() -> Suite:
    """queries: query_id key, issued_at and role set, weight ≥ 0, a source (an optional
    column) logged or template."""
    return _suite("queries", [
        *_exist(S.QUERY_COLUMNS),
        *_not_null(S.QUERY_ID, S.ISSUED_AT, S.ROLE, S.WEIGHT),
        _unique(S.QUERY_ID),
        _between(S.WEIGHT, min_value=0),
        _holds("_query_source_ok"),
    ])


def split_suite() -> Suite:
    """split: every query once, in one of the known splits."""
    return _suite("split", [
        *_exist((S.QUERY_ID, S.SPLIT)),
        *_not_null(S.QUERY_ID, S.SPLIT),
        _unique(S.QUERY_ID),
        _in_set(S.SPLIT, list(S.SPLITS)),
    ])


def run_suite() -> Suite:
    """run: one row per (system, query, doc); ranks 1..n contiguous; scores follow ranks;
    a probability, where the run has that column, on every row and in [0, 1]."""
    return _suite("run", [
        *_exist(S.RUN_COLUMNS),
        *_not_null(S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE),
        _compound_unique([S.SYSTEM, S.QUERY_ID, S.DOC_ID]),
        _between(S.RANK, min_value=1),
        _holds("_rank_contiguous"),
        _holds("_score_order_ok"),
        _holds("_probability_ok"),
    ])


def seeds_suite() -> Suite:
    """seeds (every training seed's window): the run suite with one list per (system, seed,
    query)."""
    return _suite("seeds", [
        *_exist((*S.RUN_COLUMNS, S.SEED)),
        *_not_null(S.SYSTEM, S.SEED, S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE),
        _compound_unique([S.SYSTEM, S.SEED, S.QUERY_ID, S.DOC_ID]),
        _between(S.RANK, min_value=1),
        _holds("_rank_contiguous"),
        _holds("_score_order_ok"),
    ])


def interactions_suite() -> Suite:
    """interactions (recommendation mode): user, item and time on every row, label 0 or 1."""
    return _suite("interactions", [
        *_exist(S.INTERACTION_COLUMNS),
        *_not_null(*S.INTERACTION_COLUMNS),
        _in_set(S.LABEL, [0, 1]),
    ])


def horizons_suite() -> Suite:
    """further horizons (recommendation mode): a (horizon, user-query) once, horizons ≥ 1
    day, a list of positives on every row."""
    return _suite("horizons", [
        *_exist(S.HORIZON_COLUMNS),
        *_not_null(*S.HORIZON_COLUMNS),
        _compound_unique([S.HORIZON_DAYS, S.QUERY_ID]),
        _between(S.HORIZON_DAYS, min_value=1),
    ])


def team_runs_suite() -> Suite:
    """team runs (recommendation demo): a (system, user, item) once, probability in [0, 1]."""
    columns = (S.SYSTEM, S.USER_ID, S.ITEM_ID, S.SCORE, S.PROBABILITY, S.SPLIT)
    return _suite("team_runs", [
        *_exist(columns),
        *_not_null(*columns),
        _compound_unique([S.SYSTEM, S.USER_ID, S.ITEM_ID, S.SPLIT]),
        _between(S.PROBABILITY, min_value=0, max_value=1),
    ])


def reliability_suite() -> Suite:
    """reliability diagram data: a (system, binning, bin) once, bins inside [0, 1], n ≥ 0,
    predicted and observed rates in [0, 1]."""
    return _suite("reliability", [
        *_exist((S.SYSTEM, "binning", "bin", "lo", "hi", "n", "mean_predicted", "observed")),
        *_not_null(S.SYSTEM, "binning", "bin", "n"),
        _compound_unique([S.SYSTEM, "binning", "bin"]),
        _in_set("binning", ["width", "mass"]),
        _between("n", min_value=0),
        *[_between(c, min_value=0, max_value=1)
          for c in ("lo", "hi", "mean_predicted", "observed")],
        _a_at_least_b("hi", "lo", ignore_row_if="either_value_is_missing"),
    ])


def qrels_suite(min_grade: int = 0, max_grade: int = 3) -> Suite:
    """qrels: one row per (query, doc); integer grades on the scale min_grade..max_grade; a
    hard_negative mark (True / False) on every row, True only on a grade below 1."""
    return _suite("qrels", [
        *_exist((*S.QRELS_COLUMNS, S.HARD_NEGATIVE)),
        *_not_null(*S.QRELS_COLUMNS, S.HARD_NEGATIVE),
        _compound_unique([S.QUERY_ID, S.DOC_ID]),
        _between(S.GRADE, min_value=min_grade, max_value=max_grade),
        _in_set(S.HARD_NEGATIVE, [True, False]),
        _holds("_grade_integer"),
        _holds("_hard_negative_ok"),
    ])


def selftest_suite() -> Suite:
    """self-test rows: one per (system, relation), a known status, counts that add up."""
    columns = (S.SYSTEM, S.ROUTE, "relation", "precondition", "trials", "reached", "passed",
               "failed", "status")
    return _suite("selftest", [
        *_exist(columns),
        *_not_null(*columns),
        _compound_unique([S.SYSTEM, "relation"]),
        _in_set("status", ["passed", "failed", "unreached", "not_applicable"]),
        _holds("_tally_ok"),
    ])


def pool_suite() -> Suite:
    """pool: one row per (query, doc), a unique blind id each, ranks and rounds ≥ 1."""
    return _suite("pool", [
        *_exist(S.POOL_COLUMNS),
        *_not_null(*S.POOL_COLUMNS),
        _compound_unique([S.QUERY_ID, S.DOC_ID]),
        _unique(S.BLIND_ID),
        _between("min_rank", min_value=1),
        _between("round", min_value=1),
    ])


def _per_query(name: str, *keys: str) -> Suite:
    """per-query metrics: one value per (``keys``, query, measure), ≥ 0 or NaN (undefined)."""
    return _suite(name, [
        *_exist((*keys, *S.PER_QUERY_COLUMNS)),
        *_not_null(*keys, S.QUERY_ID, S.MEASURE),
        _compound_unique([*keys, S.QUERY_ID, S.MEASURE]),
        _between(S.VALUE, min_value=0),
    ])


def metrics_suite() -> Suite:
    """per-query metrics of every system."""
    return _per_query("metrics", S.SYSTEM)


def seed_metrics_suite() -> Suite:
    """per-query metrics of every training seed."""
    return _per_query("seed_metrics", S.SYSTEM, S.SEED)


def horizon_metrics_suite() -> Suite:
    """per-query metrics at each further horizon."""
    return _per_query("horizon_metrics", S.HORIZON_DAYS, S.SYSTEM)


def labels_suite() -> Suite:
    """slice labels: known dimensions, no empty label, a (query, dimension, slice) once."""
    return _suite("labels", [
        *_exist(S.LABEL_COLUMNS),
        *_not_null(*S.LABEL_COLUMNS),
        _compound_unique(list(S.LABEL_COLUMNS)),
        _in_set(S.DIMENSION, list(DIMENSIONS)),
    ])


def diff_suite() -> Suite:
    """per-query differences: one row per (query, measure), diff = candidate − baseline."""
    return _suite("diff", [
        *_exist((S.QUERY_ID, S.MEASURE, "baseline", "candidate", "diff")),
        *_not_null(S.QUERY_ID, S.MEASURE),
        _compound_unique([S.QUERY_ID, S.MEASURE]),
        _holds("_diff_consistent"),
    ])


def slices_suite() -> Suite:
    """slice comparisons: one row per (dimension, slice, measure), n ≥ 0, p-values in [0, 1],
    ci_low ≤ ci_high where tested."""
    return _suite("slices", [
        *_exist((S.DIMENSION, S.SLICE, S.MEASURE, "n", "too_small", "ci_low", "ci_high",
                 "p_value", "p_holm", "verdict")),
        *_not_null(S.DIMENSION, S.SLICE, S.MEASURE, "n", "verdict"),
        _compound_unique([S.DIMENSION, S.SLICE, S.MEASURE]),
        _between("n", min_value=0),
        _between("p_value", min_value=0, max_value=1),
        _between("p_holm", min_value=0, max_value=1),
        _a_at_least_b("ci_high", "ci_low", ignore_row_if="either_value_is_missing"),
    ])


def violations_suite() -> Suite:
    """safety violations: a known reason, rank ≥ 1, a (system, query, doc, reason) once."""
    return _suite("violations", [
        *_exist(VIOLATION_COLUMNS),
        *_not_null(*VIOLATION_COLUMNS),
        _compound_unique([S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.REASON]),
        _in_set(S.REASON, list(SAFETY_REASONS)),
        _between(S.RANK, min_value=1),
    ])


def failures_suite() -> Suite:
    """failures: a known kind and layer, evidence present, a system's rank ≥ 1 where set."""
    return _suite("failures", [
        *_exist((S.SYSTEM, S.QUERY_ID, S.DOC_ID, "kind", "layer", "evidence")),
        *_not_null(S.SYSTEM, S.QUERY_ID, S.DOC_ID, "kind", "layer", "evidence"),
        _in_set("kind", ["relevance", "safety"]),
        _in_set("layer", list(LAYERS)),
    ])


def health_suite() -> Suite:
    """system health: one row per system; counts ≥ 0 and set; rates and shares in [0, 1],
    latencies, cost and days ≥ 0 (NaN: undefined, not checked); appeared ≤ published in the
    span, still appearing ≤ deleted."""
    counts = ("n_queries", "status_recorded", "freshness_eligible", "freshness_appeared",
              "deleted_eligible", "deleted_still_appearing")
    shares = (*health.RATES, "empty_share", "near_duplicate_ratio", "embedding_cache_hit_rate")
    amounts = (*health.PERCENTILES, "candidates_per_query", "cost_per_query",
               "freshness_median_days", "freshness_p95_days", "deletion_propagation_p95_days",
               "deletion_propagation_max_days")
    return _suite("health", [
        *_exist(health.COLUMNS),
        *_not_null(S.SYSTEM, *counts),
        _unique(S.SYSTEM),
        *[_between(c, min_value=0, max_value=1) for c in shares],
        *[_between(c, min_value=0) for c in (*counts, *amounts)],
        *[_a_at_least_b(a, b)
          for a, b in (("freshness_eligible", "freshness_appeared"),
                       ("deleted_eligible", "deleted_still_appearing"))],
    ])


def offpolicy_estimates_suite() -> Suite:
    """off-policy estimates: a (kind, estimator, position) once, a known kind, n ≥ 0, each
    CI around its value."""
    return _suite("offpolicy_estimates", [
        *_exist(ESTIMATE_TABLE),
        *_not_null("kind", "estimator", "position", "n"),
        _compound_unique(["kind", "estimator", "position"]),
        _in_set("kind", list(KINDS)),
        _between("n", min_value=0),
        _holds("_ci_ordered"),
    ])


def automatic_labels_suite(max_grade: int = 3) -> Suite:
    """automatic.parquet: one label per (query, doc), integer grades on 0..max_grade, a named
    judge, a known role (the confidence's meaning is the judge's: not bounded)."""
    return _suite("automatic_labels", [
        *_exist((*S.QRELS_COLUMNS, "judge", "model", "confidence", "role")),
        *_not_null(*S.QRELS_COLUMNS, "judge", "role"),
        _compound_unique([S.QUERY_ID, S.DOC_ID]),
        _between(S.GRADE, min_value=0, max_value=max_grade),
        _in_set("role", ["validation", "heldout", "hole"]),
        _holds("_grade_integer"),
    ])


SUITES: dict[str, Callable[..., Suite]] = {  # name -> the suite, built from its params
    "documents": documents_suite,
    "queries": queries_suite,
    "split": split_suite,
    "run": run_suite,
    "seeds": seeds_suite,
    "interactions": interactions_suite,
    "team_runs": team_runs_suite,
    "horizons": horizons_suite,
    "reliability": reliability_suite,
    "qrels": qrels_suite,
    "selftest": selftest_suite,
    "pool": pool_suite,
    "metrics": metrics_suite,
    "seed_metrics": seed_metrics_suite,
    "horizon_metrics": horizon_metrics_suite,
    "labels": labels_suite,
    "diff": diff_suite,
    "slices": slices_suite,
    "violations": violations_suite,
    "health": health_suite,
    "failures": failures_suite,
    "offpolicy_estimates": offpolicy_estimates_suite,
    "automatic_labels": automatic_labels_suite,
}


# --- running --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ValidationReport:
    """Outcome of one suite on one frame, saved as JSON as it is (``to_dict``): suite,
    success, rows, evaluated (the suite's expectations), params, and ``failures``, one plain
    dict per failed expectation in suite order: expectation (its GX type), columns,
    unexpected_count (None when it could not be counted), examples ([{index, value}], ≤ 5)
    and error (why it could not be checked, else None)."""

    suite: str
    success: bool
    rows: int
    evaluated: int
    params: dict
    failures: list[dict]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


class ValidationFailed(Exception):
    """A suite failed; one line per failed expectation, each naming suite, expectation,
    column(s) and example rows. The full report is ``.report``."""

    def __init__(self, report: ValidationReport):
        self.report = report
        super().__init__("\n".join(_describe(report.suite, f) for f in report.failures))


def _describe(suite: str, failure: dict) -> str:
    head = f"{suite}: {failure['expectation']} failed"
    if failure["columns"]:
        head += " on " + ", ".join(failure["columns"])
    if failure["error"]:
        return f"{head}: error: {failure['error']}"
    if failure["unexpected_count"] is None:
        return head
    examples = failure["examples"]
    values = {repr(e["value"]) for e in examples}
    if len(values) == 1:  # e.g. one duplicated key: "rows 3, 7 ('kb-1#0')"
        rows = ", ".join(str(e["index"]) for e in examples) + f" ({values.pop()})"
    else:
        rows = ", ".join(f"{e['index']} ({e['value']!r})" for e in examples)
    return f"{head}: {failure['unexpected_count']} unexpected, e.g. rows {rows}"


def plain(value: Any) -> Any:
    """JSON-ready copy of a result value (numpy scalars, timestamps, NaN -> None)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [plain(v) for v in value]
    if isinstance(value, dt.datetime | np.datetime64):
        return None if pd.isna(value) else pd.Timestamp(value).isoformat()
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if np.isnan(value) else value
    return None if pd.isna(value) else str(value)


def columns(kwargs: dict) -> list[str]:
    """The columns an expectation's kwargs name, in order."""
    if "column_list" in kwargs:
        return list(kwargs["column_list"])
    return [kwargs[k] for k in ("column", "column_A", "column_B") if k in kwargs]


def failure(data: pd.DataFrame, expectation: Expect, unexpected_count: int | None,
            index: list, values: list, error: str | None) -> dict:
    """A failed expectation's report entry from its first unexpected rows' ``index`` labels
    and ``values`` (its first column's); a helper's failing row shows its inputs rather than
    False, a multi-column one the row's columns."""
    names = columns(expectation.kwargs)
    helper = HELPERS.get(names[0]) if names else None
    shown = list(helper.inputs) if helper else names if len(names) > 1 else None
    examples = [{"index": plain(i), "value": plain(data.loc[i, shown].to_dict() if shown else v)}
                for i, v in zip(index[:N_EXAMPLES], values, strict=False)]
    return {"expectation": expectation.type, "columns": names,
            "unexpected_count": unexpected_count, "examples": examples, "error": error}


def with_helpers(frame: pd.DataFrame, suite: Suite) -> pd.DataFrame:
    """Copy of ``frame`` plus the helper columns the suite checks (all-null, i.e. not
    checked, when an input column is missing: its expect_column_to_exist reports that)."""
    needed = [c for e in suite.expectations for c in columns(e.kwargs) if c in HELPERS]
    return frame.assign(**{
        c: HELPERS[c].compute(frame) if set(HELPERS[c].inputs) <= set(frame.columns) else None
        for c in needed})


def _checked(data: pd.DataFrame, expectation: Expect) -> dict | None:
    """``expectation`` on ``data``: its failure, or None when it holds."""
    outcome = evaluate(data, *expectation)
    if outcome.success:
        return None
    if outcome.unexpected is None:
        return failure(data, expectation, None, [], [], outcome.error)
    rows = np.flatnonzero(outcome.unexpected)
    first = rows[:N_EXAMPLES]
    values = data[columns(expectation.kwargs)[0]].iloc[first].tolist()
    return failure(data, expectation, len(rows), data.index[first].tolist(), values, None)


def suite(name: str, **params) -> Suite:
    """Suite ``name`` built with ``params`` (unknown: ValueError; a wrong param: TypeError)."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    return SUITES[name](**params)


def validate(name: str, frame: pd.DataFrame, **params) -> ValidationReport:
    """Run suite ``name`` (built with ``params``) on ``frame``; example rows are index labels
    (row positions when the index has duplicates)."""
    spec = suite(name, **params)
    if not frame.index.is_unique:
        frame = frame.reset_index(drop=True)
    data = with_helpers(frame, spec)
    failures = [f for e in spec.expectations if (f := _checked(data, e)) is not None]
    return ValidationReport(suite=name, success=not failures, rows=len(frame),
                            evaluated=len(spec.expectations), params=plain(params),
                            failures=failures)


def check(name: str, frame: pd.DataFrame, out_json: Path | None = None,
          **params) -> ValidationReport:
    """:func:`validate`, save the report to ``out_json`` if given, raise if it failed."""
    report = validate(name, frame, **params)
    if out_json is not None:
        out_json = Path(out_json)
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(report.to_json() + "\n")
    if not report.success:
        raise ValidationFailed(report)
    return report
