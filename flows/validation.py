"""Great Expectations suites for the data contracts (docs/architecture.md), one per table.

``check(name, frame)`` runs the table's suite on a frame, optionally saves the report as
JSON, and raises :class:`ValidationFailed` naming the suite, expectation, column and
example rows. Invariants GX cannot express (contiguous ranks, scores ordered by rank,
integer grades) are computed with pandas into helper boolean columns (``_``-prefixed) on
a copy of the frame and checked with ``ExpectColumnValuesToBeInSet({True})``, so their
failures report the same way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import logging
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import great_expectations as gx
import numpy as np
import pandas as pd
from great_expectations.data_context.types.base import ProgressBarsConfig

from releval.data import contracts as S
from releval.decision import health
from releval.decision.safety import SAFETY_REASONS, VIOLATION_COLUMNS
from releval.diagnosis.layers import LAYERS
from releval.documents.offpolicy import ESTIMATE_TABLE, KINDS
from releval.params.slices import DIMENSIONS

E = gx.expectations
N_EXAMPLES = 5
RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": N_EXAMPLES}


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


def _holds(helper: str) -> E.ExpectColumnValuesToBeInSet:
    return E.ExpectColumnValuesToBeInSet(column=helper, value_set=[True])


# --- suites ---------------------------------------------------------------------------------


def _exist(columns) -> list:
    return [E.ExpectColumnToExist(column=c) for c in columns]


def _not_null(*columns: str) -> list:
    return [E.ExpectColumnValuesToNotBeNull(column=c) for c in columns]


def documents_suite() -> gx.ExpectationSuite:
    """documents: doc_id key, known status, deleted_at ≥ published_at where set."""
    return gx.ExpectationSuite(name="documents", expectations=[
        *_exist(S.DOCUMENT_COLUMNS),
        *_not_null(S.DOC_ID, S.PUBLISHED_AT, S.STATUS, S.TENANT),
        E.ExpectColumnValuesToBeUnique(column=S.DOC_ID),
        E.ExpectColumnValuesToBeInSet(column=S.STATUS, value_set=list(S.STATUSES)),
        E.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A=S.DELETED_AT, column_B=S.PUBLISHED_AT, or_equal=True,
            ignore_row_if="either_value_is_missing"),
    ])


def queries_suite() -> gx.ExpectationSuite:
    """queries: query_id key, issued_at and role set, weight ≥ 0, a source (an optional
    column) logged or template."""
    return gx.ExpectationSuite(name="queries", expectations=[
        *_exist(S.QUERY_COLUMNS),
        *_not_null(S.QUERY_ID, S.ISSUED_AT, S.ROLE, S.WEIGHT),
        E.ExpectColumnValuesToBeUnique(column=S.QUERY_ID),
        E.ExpectColumnValuesToBeBetween(column=S.WEIGHT, min_value=0),
        _holds("_query_source_ok"),
    ])


def split_suite() -> gx.ExpectationSuite:
    """split: every query once, in one of the known splits."""
    return gx.ExpectationSuite(name="split", expectations=[
        *_exist((S.QUERY_ID, S.SPLIT)),
        *_not_null(S.QUERY_ID, S.SPLIT),
        E.ExpectColumnValuesToBeUnique(column=S.QUERY_ID),
        E.ExpectColumnValuesToBeInSet(column=S.SPLIT, value_set=list(S.SPLITS)),
    ])


def run_suite() -> gx.ExpectationSuite:
    """run: one row per (system, query, doc); ranks 1..n contiguous; scores follow ranks;
    a probability, where the run has that column, on every row and in [0, 1]."""
    return gx.ExpectationSuite(name="run", expectations=[
        *_exist(S.RUN_COLUMNS),
        *_not_null(S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.SYSTEM, S.QUERY_ID, S.DOC_ID]),
        E.ExpectColumnValuesToBeBetween(column=S.RANK, min_value=1),
        _holds("_rank_contiguous"),
        _holds("_score_order_ok"),
        _holds("_probability_ok"),
    ])


def seeds_suite() -> gx.ExpectationSuite:
    """seeds (every training seed's window): the run suite with one list per (system, seed,
    query)."""
    return gx.ExpectationSuite(name="seeds", expectations=[
        *_exist((*S.RUN_COLUMNS, S.SEED)),
        *_not_null(S.SYSTEM, S.SEED, S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.SYSTEM, S.SEED, S.QUERY_ID,
                                                       S.DOC_ID]),
        E.ExpectColumnValuesToBeBetween(column=S.RANK, min_value=1),
        _holds("_rank_contiguous"),
        _holds("_score_order_ok"),
    ])


def interactions_suite() -> gx.ExpectationSuite:
    """interactions (recommendation mode): user, item and time on every row, label 0 or 1."""
    return gx.ExpectationSuite(name="interactions", expectations=[
        *_exist(S.INTERACTION_COLUMNS),
        *_not_null(*S.INTERACTION_COLUMNS),
        E.ExpectColumnValuesToBeInSet(column=S.LABEL, value_set=[0, 1]),
    ])


def horizons_suite() -> gx.ExpectationSuite:
    """further horizons (recommendation mode): a (horizon, user-query) once, horizons ≥ 1
    day, a list of positives on every row."""
    return gx.ExpectationSuite(name="horizons", expectations=[
        *_exist(S.HORIZON_COLUMNS),
        *_not_null(*S.HORIZON_COLUMNS),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.HORIZON_DAYS, S.QUERY_ID]),
        E.ExpectColumnValuesToBeBetween(column=S.HORIZON_DAYS, min_value=1),
    ])


def team_runs_suite() -> gx.ExpectationSuite:
    """team runs (recommendation demo): a (system, user, item) once, probability in [0, 1]."""
    columns = (S.SYSTEM, S.USER_ID, S.ITEM_ID, S.SCORE, S.PROBABILITY, S.SPLIT)
    return gx.ExpectationSuite(name="team_runs", expectations=[
        *_exist(columns),
        *_not_null(*columns),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.SYSTEM, S.USER_ID, S.ITEM_ID, S.SPLIT]),
        E.ExpectColumnValuesToBeBetween(column=S.PROBABILITY, min_value=0, max_value=1),
    ])


def reliability_suite() -> gx.ExpectationSuite:
    """reliability diagram data: a (system, binning, bin) once, bins inside [0, 1], n ≥ 0,
    predicted and observed rates in [0, 1]."""
    return gx.ExpectationSuite(name="reliability", expectations=[
        *_exist((S.SYSTEM, "binning", "bin", "lo", "hi", "n", "mean_predicted", "observed")),
        *_not_null(S.SYSTEM, "binning", "bin", "n"),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.SYSTEM, "binning", "bin"]),
        E.ExpectColumnValuesToBeInSet(column="binning", value_set=["width", "mass"]),
        E.ExpectColumnValuesToBeBetween(column="n", min_value=0),
        *[E.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=1)
          for c in ("lo", "hi", "mean_predicted", "observed")],
        E.ExpectColumnPairValuesAToBeGreaterThanB(column_A="hi", column_B="lo", or_equal=True,
                                                  ignore_row_if="either_value_is_missing"),
    ])


def qrels_suite(min_grade: int = 0, max_grade: int = 3) -> gx.ExpectationSuite:
    """qrels: one row per (query, doc); integer grades on the scale min_grade..max_grade; a
    hard_negative mark (True / False) on every row, True only on a grade below 1."""
    return gx.ExpectationSuite(name="qrels", expectations=[
        *_exist((*S.QRELS_COLUMNS, S.HARD_NEGATIVE)),
        *_not_null(*S.QRELS_COLUMNS, S.HARD_NEGATIVE),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.QUERY_ID, S.DOC_ID]),
        E.ExpectColumnValuesToBeBetween(column=S.GRADE, min_value=min_grade, max_value=max_grade),
        E.ExpectColumnValuesToBeInSet(column=S.HARD_NEGATIVE, value_set=[True, False]),
        _holds("_grade_integer"),
        _holds("_hard_negative_ok"),
    ])


def selftest_suite() -> gx.ExpectationSuite:
    """self-test rows: one per (system, relation), a known status, counts that add up."""
    columns = (S.SYSTEM, S.ROUTE, "relation", "precondition", "trials", "reached", "passed",
               "failed", "status")
    return gx.ExpectationSuite(name="selftest", expectations=[
        *_exist(columns),
        *_not_null(*columns),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.SYSTEM, "relation"]),
        E.ExpectColumnValuesToBeInSet(column="status", value_set=[
            "passed", "failed", "unreached", "not_applicable"]),
        _holds("_tally_ok"),
    ])




def pool_suite() -> gx.ExpectationSuite:
    """pool: one row per (query, doc), a unique blind id each, ranks and rounds ≥ 1."""
    return gx.ExpectationSuite(name="pool", expectations=[
        *_exist(S.POOL_COLUMNS),
        *_not_null(*S.POOL_COLUMNS),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.QUERY_ID, S.DOC_ID]),
        E.ExpectColumnValuesToBeUnique(column=S.BLIND_ID),
        E.ExpectColumnValuesToBeBetween(column="min_rank", min_value=1),
        E.ExpectColumnValuesToBeBetween(column="round", min_value=1),
    ])


def _per_query(name: str, *keys: str) -> gx.ExpectationSuite:
    """per-query metrics: one value per (``keys``, query, measure), ≥ 0 or NaN (undefined)."""
    return gx.ExpectationSuite(name=name, expectations=[
        *_exist((*keys, *S.PER_QUERY_COLUMNS)),
        *_not_null(*keys, S.QUERY_ID, S.MEASURE),
        E.ExpectCompoundColumnsToBeUnique(column_list=[*keys, S.QUERY_ID, S.MEASURE]),
        E.ExpectColumnValuesToBeBetween(column=S.VALUE, min_value=0),
    ])


def metrics_suite() -> gx.ExpectationSuite:
    """per-query metrics of every system."""
    return _per_query("metrics", S.SYSTEM)


def seed_metrics_suite() -> gx.ExpectationSuite:
    """per-query metrics of every training seed."""
    return _per_query("seed_metrics", S.SYSTEM, S.SEED)


def horizon_metrics_suite() -> gx.ExpectationSuite:
    """per-query metrics at each further horizon."""
    return _per_query("horizon_metrics", S.HORIZON_DAYS, S.SYSTEM)


def labels_suite() -> gx.ExpectationSuite:
    """slice labels: known dimensions, no empty label, a (query, dimension, slice) once."""
    return gx.ExpectationSuite(name="labels", expectations=[
        *_exist(S.LABEL_COLUMNS),
        *_not_null(*S.LABEL_COLUMNS),
        E.ExpectCompoundColumnsToBeUnique(column_list=list(S.LABEL_COLUMNS)),
        E.ExpectColumnValuesToBeInSet(column=S.DIMENSION, value_set=list(DIMENSIONS)),
    ])


def diff_suite() -> gx.ExpectationSuite:
    """per-query differences: one row per (query, measure), diff = candidate − baseline."""
    return gx.ExpectationSuite(name="diff", expectations=[
        *_exist((S.QUERY_ID, S.MEASURE, "baseline", "candidate", "diff")),
        *_not_null(S.QUERY_ID, S.MEASURE),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.QUERY_ID, S.MEASURE]),
        _holds("_diff_consistent"),
    ])


def slices_suite() -> gx.ExpectationSuite:
    """slice comparisons: one row per (dimension, slice, measure), n ≥ 0, p-values in [0, 1],
    ci_low ≤ ci_high where tested."""
    return gx.ExpectationSuite(name="slices", expectations=[
        *_exist((S.DIMENSION, S.SLICE, S.MEASURE, "n", "too_small", "ci_low", "ci_high",
                 "p_value", "p_holm", "verdict")),
        *_not_null(S.DIMENSION, S.SLICE, S.MEASURE, "n", "verdict"),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.DIMENSION, S.SLICE, S.MEASURE]),
        E.ExpectColumnValuesToBeBetween(column="n", min_value=0),
        E.ExpectColumnValuesToBeBetween(column="p_value", min_value=0, max_value=1),
        E.ExpectColumnValuesToBeBetween(column="p_holm", min_value=0, max_value=1),
        E.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="ci_high", column_B="ci_low", or_equal=True,
            ignore_row_if="either_value_is_missing"),
    ])


def violations_suite() -> gx.ExpectationSuite:
    """safety violations: a known reason, rank ≥ 1, a (system, query, doc, reason) once."""
    return gx.ExpectationSuite(name="violations", expectations=[
        *_exist(VIOLATION_COLUMNS),
        *_not_null(*VIOLATION_COLUMNS),
        E.ExpectCompoundColumnsToBeUnique(
            column_list=[S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.REASON]),
        E.ExpectColumnValuesToBeInSet(column=S.REASON, value_set=list(SAFETY_REASONS)),
        E.ExpectColumnValuesToBeBetween(column=S.RANK, min_value=1),
    ])


def failures_suite() -> gx.ExpectationSuite:
    """failures: a known kind and layer, evidence present, a system's rank ≥ 1 where set."""
    return gx.ExpectationSuite(name="failures", expectations=[
        *_exist((S.SYSTEM, S.QUERY_ID, S.DOC_ID, "kind", "layer", "evidence")),
        *_not_null(S.SYSTEM, S.QUERY_ID, S.DOC_ID, "kind", "layer", "evidence"),
        E.ExpectColumnValuesToBeInSet(column="kind", value_set=["relevance", "safety"]),
        E.ExpectColumnValuesToBeInSet(column="layer", value_set=list(LAYERS)),
    ])


def health_suite() -> gx.ExpectationSuite:
    """system health: one row per system; counts ≥ 0 and set; rates and shares in [0, 1],
    latencies, cost and days ≥ 0 (NaN: undefined, not checked); appeared ≤ published in the
    span, still appearing ≤ deleted."""
    counts = ("n_queries", "status_recorded", "freshness_eligible", "freshness_appeared",
              "deleted_eligible", "deleted_still_appearing")
    shares = (*health.RATES, "empty_share", "near_duplicate_ratio", "embedding_cache_hit_rate")
    amounts = (*health.PERCENTILES, "candidates_per_query", "cost_per_query",
               "freshness_median_days", "freshness_p95_days", "deletion_propagation_p95_days",
               "deletion_propagation_max_days")
    return gx.ExpectationSuite(name="health", expectations=[
        *_exist(health.COLUMNS),
        *_not_null(S.SYSTEM, *counts),
        E.ExpectColumnValuesToBeUnique(column=S.SYSTEM),
        *[E.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=1) for c in shares],
        *[E.ExpectColumnValuesToBeBetween(column=c, min_value=0) for c in (*counts, *amounts)],
        *[E.ExpectColumnPairValuesAToBeGreaterThanB(column_A=a, column_B=b, or_equal=True)
          for a, b in (("freshness_eligible", "freshness_appeared"),
                       ("deleted_eligible", "deleted_still_appearing"))],
    ])


def offpolicy_estimates_suite() -> gx.ExpectationSuite:
    """off-policy estimates: a (kind, estimator, position) once, a known kind, n ≥ 0, each
    CI around its value."""
    return gx.ExpectationSuite(name="offpolicy_estimates", expectations=[
        *_exist(ESTIMATE_TABLE),
        *_not_null("kind", "estimator", "position", "n"),
        E.ExpectCompoundColumnsToBeUnique(column_list=["kind", "estimator", "position"]),
        E.ExpectColumnValuesToBeInSet(column="kind", value_set=list(KINDS)),
        E.ExpectColumnValuesToBeBetween(column="n", min_value=0),
        _holds("_ci_ordered"),
    ])


def automatic_labels_suite(max_grade: int = 3) -> gx.ExpectationSuite:
    """automatic.parquet: one label per (query, doc), integer grades on 0..max_grade, a named
    judge, a known role (the confidence's meaning is the judge's: not bounded)."""
    return gx.ExpectationSuite(name="automatic_labels", expectations=[
        *_exist((*S.QRELS_COLUMNS, "judge", "model", "confidence", "role")),
        *_not_null(*S.QRELS_COLUMNS, "judge", "role"),
        E.ExpectCompoundColumnsToBeUnique(column_list=[S.QUERY_ID, S.DOC_ID]),
        E.ExpectColumnValuesToBeBetween(column=S.GRADE, min_value=0, max_value=max_grade),
        E.ExpectColumnValuesToBeInSet(column="role", value_set=["validation", "heldout", "hole"]),
        _holds("_grade_integer"),
    ])


SUITES: dict[str, Callable[..., gx.ExpectationSuite]] = {
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
    """Outcome of one suite on one frame; ``failures`` hold plain, JSON-ready dicts with
    expectation, columns, unexpected_count, examples ([{index, value}], ≤ 5) and error."""

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


@functools.cache
def _batch_definition():
    """The one ephemeral GX context's whole-dataframe batch definition (created on first use)."""
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return (context.data_sources.add_pandas("releval")
            .add_dataframe_asset("frame").add_batch_definition_whole_dataframe("whole"))


_LOCK = threading.Lock()  # GX gives every batch of the asset the same id: one at a time
# GX's column-pair metrics read tz-aware columns through Series.values (pandas 3 deprecation)
_GX_PANDAS_WARNING = "Series.values returning an ndarray that drops timezone"


def _plain(value: Any) -> Any:
    """JSON-ready copy of a GX result value (numpy scalars, timestamps, NaN -> None)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime | np.datetime64):
        return None if pd.isna(value) else pd.Timestamp(value).isoformat()
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if np.isnan(value) else value
    return None if pd.isna(value) else str(value)


def _columns(kwargs: dict) -> list[str]:
    if "column_list" in kwargs:
        return list(kwargs["column_list"])
    return [kwargs[k] for k in ("column", "column_A", "column_B") if k in kwargs]


def _error(info: dict) -> str | None:
    """The exception message GX caught, flat or keyed by metric id, else None."""
    infos = [info] if "raised_exception" in info else list(info.values())
    return next((i["exception_message"] or "raised" for i in infos
                 if i.get("raised_exception")), None)


def _failure(result, data: pd.DataFrame) -> dict:
    kwargs = result.expectation_config.kwargs
    columns, res = _columns(kwargs), result.result
    helper = HELPERS.get(columns[0]) if columns else None
    # a helper's failing row shows its inputs rather than False; multi-column ones the row
    shown = list(helper.inputs) if helper else columns if len(columns) > 1 else None
    examples = []
    for index, value in zip(res.get("partial_unexpected_index_list") or [],
                            res.get("partial_unexpected_list") or [], strict=False):
        value = data.loc[index, shown].to_dict() if shown else value
        examples.append({"index": _plain(index), "value": _plain(value)})
    return {"expectation": result.expectation_config.type, "columns": columns,
            "unexpected_count": res.get("unexpected_count"),
            "examples": examples[:N_EXAMPLES], "error": _error(result.exception_info or {})}


def _with_helpers(frame: pd.DataFrame, suite: gx.ExpectationSuite) -> pd.DataFrame:
    """Copy of ``frame`` plus the helper columns the suite checks (all-null, i.e. not
    checked, when an input column is missing: its ExpectColumnToExist reports that)."""
    needed = [c for e in suite.expectations for c in _columns(e.configuration.kwargs)
              if c in HELPERS]
    return frame.assign(**{
        c: HELPERS[c].compute(frame) if set(HELPERS[c].inputs) <= set(frame.columns) else None
        for c in needed})


def validate(name: str, frame: pd.DataFrame, **params) -> ValidationReport:
    """Run suite ``name`` (built with ``params``) on ``frame``; example rows are index labels
    (row positions when the index has duplicates)."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(SUITES)}")
    suite = SUITES[name](**params)
    if not frame.index.is_unique:
        frame = frame.reset_index(drop=True)
    data = _with_helpers(frame, suite)
    with _LOCK, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning,
                                message=_GX_PANDAS_WARNING)
        batch = _batch_definition().get_batch(batch_parameters={"dataframe": data})
        result = batch.validate(suite, result_format=RESULT_FORMAT)
    order = {(e.expectation_type, tuple(_columns(e.configuration.kwargs))): i
             for i, e in enumerate(suite.expectations)}
    failed = sorted((r for r in result.results if not r.success), key=lambda r: order.get(
        (r.expectation_config.type, tuple(_columns(r.expectation_config.kwargs))), len(order)))
    return ValidationReport(suite=name, success=bool(result.success), rows=len(frame),
                            evaluated=len(result.results), params=_plain(params),
                            failures=[_failure(r, data) for r in failed])


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
