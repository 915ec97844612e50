import json

import numpy as np
import pandas as pd
import pytest

from flows.validation import SUITES, ValidationFailed, ValidationReport, check, validate
from releval.data import contracts as S
from releval.decision.health import COLUMNS as HEALTH_COLUMNS

T0 = pd.Timestamp("2024-01-01", tz="UTC")


def documents() -> pd.DataFrame:
    return pd.DataFrame({
        S.DOC_ID: ["kb-1#0", "kb-1#1", "kb-2#0"],
        S.TITLE: ["Reset", "Reset", "VPN"],
        S.TEXT: ["how to reset", "part two", "vpn setup"],
        S.SOURCE_ID: ["kb-1", "kb-1", "kb-2"],
        S.PUBLISHED_AT: [T0, T0, T0 + pd.Timedelta(days=1)],
        S.STATUS: ["published", "published", "deleted"],
        S.DELETED_AT: [pd.NaT, pd.NaT, T0 + pd.Timedelta(days=3)],
        S.TENANT: ["acme"] * 3,
        S.ACL: [[], ["eng"], ["eng", "ops"]],
    })


def queries() -> pd.DataFrame:
    return pd.DataFrame({
        S.QUERY_ID: ["q1", "q2"],
        S.TEXT: ["reset password", "vpn"],
        S.ISSUED_AT: [T0 + pd.Timedelta(days=5), T0 + pd.Timedelta(days=6)],
        S.USER_ID: ["u1", "u2"],
        S.TENANT: ["acme", "acme"],
        S.GROUPS: [["eng"], []],
        S.ROLE: ["employee", "guest"],
        S.TAGS: [["head"], ["tail", "typo"]],
        S.WEIGHT: [1.0, 0.0],
    })


def split() -> pd.DataFrame:
    return pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3"], S.SPLIT: ["train", "validation", "test"]})


def run() -> pd.DataFrame:
    return pd.DataFrame({
        S.SYSTEM: ["bm25"] * 3 + ["dense"] * 2,
        S.ROUTE: ["bm25"] * 3 + ["dense"] * 2,
        S.QUERY_ID: ["q1", "q1", "q1", "q1", "q1"],
        S.DOC_ID: ["d1", "d2", "d3", "d2", "d1"],
        S.RANK: [1, 2, 3, 2, 1],  # dense's list arrives out of rank order
        S.SCORE: [3.0, 2.0, 2.0, 0.4, 0.9],  # ties are allowed
    })


def qrels() -> pd.DataFrame:
    return pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q2"], S.DOC_ID: ["d1", "d2", "d1"],
                         S.GRADE: [3, 0, 1], S.HARD_NEGATIVE: [False, True, False]})


def selftest() -> pd.DataFrame:
    return pd.DataFrame({S.SYSTEM: ["bm25", "bm25", "team"], S.ROUTE: ["bm25", "bm25", "external"],
                         "relation": ["term_permutation", "doc_rename", "doc_rename"],
                         "precondition": ["bag of words", "any route", "a scorer"],
                         "trials": [50, 50, 0], "reached": [48, 50, 0], "passed": [48, 49, 0],
                         "failed": [0, 1, 0], "status": ["passed", "failed", "not_applicable"]})


def metrics() -> pd.DataFrame:
    return pd.DataFrame({S.SYSTEM: ["bm25"] * 3, S.QUERY_ID: ["q1", "q1", "q2"],
                         S.MEASURE: ["nDCG@10", "R@100", "R@100"],
                         S.VALUE: [0.5, 1.0, np.nan]})  # q2 has no relevant doc: undefined


def pool() -> pd.DataFrame:
    return pd.DataFrame({"pool_id": "P1", "query_id": ["q1", "q1", "q2"],
                         "doc_id": ["a", "b", "a"], "blind_id": ["B1", "B2", "B3"],
                         "systems": [["bm25"], ["bm25", "dense"], ["dense"]],
                         "min_rank": [1, 2, 1], "round": [1, 1, 2]})


def labels() -> pd.DataFrame:
    return pd.DataFrame({"query_id": ["q1", "q1", "q1", "q2"],
                         "dimension": ["tag", "tag", "kind", "tag"],  # tag: several per query
                         "slice": ["head", "typo", "typo", "tail"]})


def diff() -> pd.DataFrame:
    return pd.DataFrame({"query_id": ["q1", "q2", "q1"], "measure": ["nDCG@10", "nDCG@10", "AP"],
                         "baseline": [0.5, np.nan, 0.25], "candidate": [0.75, np.nan, 0.0],
                         "diff": [0.25, np.nan, -0.25]})


def slices() -> pd.DataFrame:
    return pd.DataFrame({"dimension": ["all", "kind", "kind"], "slice": ["all", "typo", "numeric"],
                         "measure": "nDCG@10", "n": [40, 25, 3],
                         "too_small": [False, False, True], "ci_low": [0.01, -0.2, np.nan],
                         "ci_high": [0.05, 0.1, np.nan], "p_value": [0.01, 0.6, np.nan],
                         "p_holm": [0.02, 0.6, np.nan],
                         "verdict": ["improved", "inconclusive", "too small"]})


def violations() -> pd.DataFrame:
    return pd.DataFrame({"system": ["prod_v2", "prod_v2", "hybrid"], "route": ["external",
                                                                               "external",
                                                                               "hybrid"],
                         "query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d1", "d9"],
                         "rank": [3, 3, 57], "reason": ["acl", "must_not_return", "other_tenant"],
                         "in_top_k": [True, True, False]})


def failures() -> pd.DataFrame:
    return pd.DataFrame({"system": ["bm25", "hybrid"], "query_id": ["q1", "q2"],
                         "doc_id": ["d1", "d9"], "kind": ["relevance", "safety"],
                         "layer": ["fusion", "filter"],
                         "evidence": ['{"rank_bm25": 3}', '{"reason": "acl"}']})


def interactions() -> pd.DataFrame:
    return pd.DataFrame({S.USER_ID: ["17850", "17850", "13047"],
                         S.ITEM_ID: ["85123A", "M", "m"],
                         S.TIMESTAMP: pd.to_datetime(["2010-12-01T08:26Z"] * 3, utc=True),
                         S.LABEL: [1, 0, 1], "country": "United Kingdom"})


def team_runs() -> pd.DataFrame:
    return pd.DataFrame({S.SYSTEM: "team_calibrated", S.USER_ID: ["u1", "u1", "u2"],
                         S.ITEM_ID: ["a", "b", "a"], S.SCORE: [0.9, 0.5, 0.7],
                         S.PROBABILITY: [0.9, 0.5, 0.7], S.SPLIT: "test"})


def reliability() -> pd.DataFrame:
    return pd.DataFrame({S.SYSTEM: "team", "binning": ["width", "width", "mass"],
                         "bin": [0, 9, 0], "lo": [0.0, 0.9, 0.0], "hi": [0.1, 1.0, 1.0],
                         "n": [10, 2, 12], "mean_predicted": [0.05, 0.95, 0.2],
                         "observed": [0.1, 1.0, 0.25]})


def seeds() -> pd.DataFrame:
    """Two seeds' windows of one system: the same query's ranks restart per seed."""
    return pd.concat([run().assign(**{S.SEED: 1}), run().assign(**{S.SEED: 2})],
                     ignore_index=True)


def seed_metrics() -> pd.DataFrame:
    return pd.concat([metrics().assign(**{S.SEED: 1}), metrics().assign(**{S.SEED: 2})],
                     ignore_index=True)


def health() -> pd.DataFrame:
    """Two systems' health: the team run measured no latency and recorded no status (NaN)."""
    row = dict.fromkeys(HEALTH_COLUMNS, 0.5) | {
        S.SYSTEM: "bm25", S.ROUTE: "bm25", "n_queries": 10, "status_recorded": 10,
        "cost_unit": "USD", "freshness_eligible": 4, "freshness_appeared": 3,
        "deleted_eligible": 2, "deleted_still_appearing": 0}
    undefined = dict.fromkeys(("latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
                               "error_rate", "timeout_rate", "partial_rate", "fallback_rate"),
                              np.nan)
    return pd.DataFrame([row, row | undefined | {S.SYSTEM: "team", S.ROUTE: "external",
                                                 "status_recorded": 0}],
                        columns=list(HEALTH_COLUMNS))


def horizons() -> pd.DataFrame:
    """Two horizons' user-queries: a user without a positive at 7 days is still a query."""
    return pd.DataFrame({S.HORIZON_DAYS: [7, 7, 28], S.QUERY_ID: ["u1@test", "u2@test",
                                                                  "u1@test"],
                         S.POSITIVES: [["a"], [], ["a", "b"]]})


def horizon_metrics() -> pd.DataFrame:
    return pd.concat([metrics().assign(**{S.HORIZON_DAYS: 7}),
                      metrics().assign(**{S.HORIZON_DAYS: 28})], ignore_index=True)


def probability_run() -> pd.DataFrame:
    return run().assign(**{S.PROBABILITY: 0.5})


def offpolicy_estimates() -> pd.DataFrame:
    """Two estimates, one undefined at a position no row holds, and the on-policy value."""
    return pd.DataFrame({
        "kind": ["estimate", "estimate", "on_policy"], "estimator": ["ips", "ips", "on_policy"],
        "position": ["all", "1", "all"], "value": [0.004, np.nan, 0.0042],
        "ci_low": [0.001, np.nan, 0.003], "ci_high": [0.0042, np.nan, 0.0055], "n": [100, 0, 100],
        "clip": [np.nan] * 3, "covers": pd.array([True, None, None], dtype="boolean")})


def automatic_labels() -> pd.DataFrame:
    """The dense judge's labels: a validation, a held-out and a hole pair (confidence NaN:
    a labels file that states none)."""
    return pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q2"], S.DOC_ID: ["d1", "d2", "d1"],
                         S.GRADE: [2, 0, 1], "judge": "dense-similarity", "model": "minilm",
                         "confidence": [0.1, np.nan, 0.3],
                         "role": ["validation", "heldout", "hole"]})


GOOD = {"documents": documents, "queries": queries, "split": split, "run": run,
        "qrels": qrels, "pool": pool, "metrics": metrics, "labels": labels, "diff": diff,
        "slices": slices, "violations": violations, "failures": failures,
        "interactions": interactions, "team_runs": team_runs, "reliability": reliability,
        "selftest": selftest, "seeds": seeds, "seed_metrics": seed_metrics, "health": health,
        "horizons": horizons, "horizon_metrics": horizon_metrics,
        "offpolicy_estimates": offpolicy_estimates,
        "automatic_labels": automatic_labels}


def test_every_suite_has_a_good_frame():
    assert set(GOOD) == set(SUITES)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_frame_passes(name):
    report = validate(name, GOOD[name]())
    assert report.success, report.failures
    assert report.failures == [] and report.evaluated > 0


def _set(frame, column, row, value):
    frame.at[row, column] = value
    return frame


def _dup_doc(f):
    return _set(f, S.DOC_ID, 2, "kb-1#0")


def _deleted_first(f):
    return _set(f, S.DELETED_AT, 2, T0 - pd.Timedelta(days=1))


def _rank_gap(f):
    return _set(f, S.RANK, 2, 4)


def _score_up(f):
    return _set(f, S.SCORE, 2, 5.0)


def _dup_pair(f):
    return _set(f, S.DOC_ID, 1, "d1")


BAD = [  # suite, make bad, params, expectation, column(s), failing row, example value
    ("documents", _dup_doc, {}, "expect_column_values_to_be_unique", [S.DOC_ID], 2, "kb-1#0"),
    ("documents", lambda f: _set(f, S.STATUS, 1, "archived"), {},
     "expect_column_values_to_be_in_set", [S.STATUS], 1, "archived"),
    ("documents", _deleted_first, {}, "expect_column_pair_values_a_to_be_greater_than_b",
     [S.DELETED_AT, S.PUBLISHED_AT], 2,
     {S.DELETED_AT: "2023-12-31T00:00:00+00:00", S.PUBLISHED_AT: "2024-01-02T00:00:00+00:00"}),
    ("queries", lambda f: _set(f, S.WEIGHT, 1, -0.5), {},
     "expect_column_values_to_be_between", [S.WEIGHT], 1, -0.5),
    ("split", lambda f: _set(f, S.SPLIT, 1, "dev"), {},
     "expect_column_values_to_be_in_set", [S.SPLIT], 1, "dev"),
    ("run", _rank_gap, {}, "expect_column_values_to_be_in_set", ["_rank_contiguous"], 2,
     {S.SYSTEM: "bm25", S.QUERY_ID: "q1", S.RANK: 4}),
    ("run", _score_up, {}, "expect_column_values_to_be_in_set", ["_score_order_ok"], 2,
     {S.SYSTEM: "bm25", S.QUERY_ID: "q1", S.RANK: 3, S.SCORE: 5.0}),
    ("qrels", _dup_pair, {}, "expect_compound_columns_to_be_unique", [S.QUERY_ID, S.DOC_ID],
     0, {S.QUERY_ID: "q1", S.DOC_ID: "d1"}),
    ("qrels", lambda f: _set(f, S.GRADE, 0, 4), {"max_grade": 3},
     "expect_column_values_to_be_between", [S.GRADE], 0, 4),
    ("qrels", lambda f: _set(f, S.HARD_NEGATIVE, 0, True), {},
     "expect_column_values_to_be_in_set", ["_hard_negative_ok"], 0,
     {S.QUERY_ID: "q1", S.DOC_ID: "d1", S.GRADE: 3, S.HARD_NEGATIVE: True}),
    ("selftest", lambda f: _set(f, "failed", 1, 0), {},
     "expect_column_values_to_be_in_set", ["_tally_ok"], 1,
     {S.SYSTEM: "bm25", "relation": "doc_rename", "trials": 50, "reached": 50, "passed": 49,
      "failed": 0}),
    ("metrics", lambda f: _set(f, S.VALUE, 1, -1.0), {},
     "expect_column_values_to_be_between", [S.VALUE], 1, -1.0),
    ("labels", lambda f: _set(f, "dimension", 3, "colour"), {},
     "expect_column_values_to_be_in_set", ["dimension"], 3, "colour"),
    ("diff", lambda f: _set(f, "diff", 2, 0.25), {}, "expect_column_values_to_be_in_set",
     ["_diff_consistent"], 2,
     {"query_id": "q1", "measure": "AP", "baseline": 0.25, "candidate": 0.0, "diff": 0.25}),
    ("slices", lambda f: _set(f, "ci_low", 1, 0.2), {},
     "expect_column_pair_values_a_to_be_greater_than_b", ["ci_high", "ci_low"], 1,
     {"ci_high": 0.1, "ci_low": 0.2}),
    ("failures", lambda f: _set(f, "layer", 0, "gremlins"), {},
     "expect_column_values_to_be_in_set", ["layer"], 0, "gremlins"),
    ("violations", lambda f: _set(f, "reason", 2, "rude"), {},
     "expect_column_values_to_be_in_set", ["reason"], 2, "rude"),
    ("interactions", lambda f: _set(f, S.LABEL, 1, 2), {},
     "expect_column_values_to_be_in_set", [S.LABEL], 1, 2),
    ("team_runs", lambda f: _set(f, S.PROBABILITY, 2, 1.5), {},
     "expect_column_values_to_be_between", [S.PROBABILITY], 2, 1.5),
    ("horizons", lambda f: _set(f, S.HORIZON_DAYS, 2, 0), {},
     "expect_column_values_to_be_between", [S.HORIZON_DAYS], 2, 0),
    ("horizon_metrics", lambda f: _set(f, S.VALUE, 0, -1.0), {},
     "expect_column_values_to_be_between", [S.VALUE], 0, -1.0),
    ("reliability", lambda f: _set(f, "observed", 0, -0.1), {},
     "expect_column_values_to_be_between", ["observed"], 0, -0.1),
    ("automatic_labels", lambda f: _set(f, "role", 2, "guess"), {},
     "expect_column_values_to_be_in_set", ["role"], 2, "guess"),
    ("automatic_labels", lambda f: _set(f, S.DOC_ID, 1, "d1"), {},
     "expect_compound_columns_to_be_unique", [S.QUERY_ID, S.DOC_ID], 0,
     {S.QUERY_ID: "q1", S.DOC_ID: "d1"}),
    ("health", lambda f: _set(f, "error_rate", 0, 1.5), {},
     "expect_column_values_to_be_between", ["error_rate"], 0, 1.5),
    ("offpolicy_estimates", lambda f: _set(f, "ci_high", 0, 0.003), {},
     "expect_column_values_to_be_in_set", ["_ci_ordered"], 0,
     {"kind": "estimate", "estimator": "ips", "position": "all", "value": 0.004,
      "ci_low": 0.001, "ci_high": 0.003}),
    ("health", lambda f: _set(f, "freshness_appeared", 1, 5), {},
     "expect_column_pair_values_a_to_be_greater_than_b",
     ["freshness_eligible", "freshness_appeared"], 1,
     {"freshness_eligible": 4, "freshness_appeared": 5}),
]


def test_a_run_with_probabilities_holds_them_to_zero_one():
    assert validate("run", probability_run()).success
    bad = _set(probability_run(), S.PROBABILITY, 1, 1.2)
    [failure] = validate("run", bad).failures
    assert failure["columns"] == ["_probability_ok"]
    assert failure["examples"][0]["index"] == 1


@pytest.mark.parametrize("name,make_bad,params,expectation,columns,row,value", BAD,
                         ids=[f"{b[0]}-{b[3]}-{b[4][0]}" for b in BAD])
def test_bad_frame_fails_naming_expectation_column_and_row(
        name, make_bad, params, expectation, columns, row, value):
    report = validate(name, make_bad(GOOD[name]()), **params)
    assert not report.success
    [failure] = report.failures
    assert (failure["expectation"], failure["columns"]) == (expectation, columns)
    assert failure["unexpected_count"] >= 1 and failure["error"] is None
    assert {"index": row, "value": value} in failure["examples"]


def test_grade_scale_is_a_parameter():
    wide = _set(qrels(), S.GRADE, 0, 4)
    assert validate("qrels", wide, max_grade=4).success
    assert not validate("qrels", wide).success
    assert validate("qrels", _set(qrels(), S.GRADE, 1, -1), min_grade=-1).success


def test_fractional_grade_fails_the_integer_check():
    [failure] = validate("qrels", _set(qrels().astype({S.GRADE: float}), S.GRADE, 2, 1.5)).failures
    assert failure["columns"] == ["_grade_integer"]
    assert failure["examples"] == [{"index": 2, "value": {S.GRADE: 1.5}}]


def _counts(report):
    return {f["columns"][0]: f["unexpected_count"] for f in report.failures}


def test_repeated_rank_and_bad_start_break_contiguity():
    repeated = _set(run(), S.RANK, 1, 1)  # bm25: 1, 1, 3 -> the second 1 and the 3
    starts_at_zero = run().assign(**{S.RANK: lambda f: f[S.RANK] - 1})  # each list's first row
    assert _counts(validate("run", repeated)) == {"_rank_contiguous": 2}
    assert _counts(validate("run", starts_at_zero)) == {S.RANK: 2, "_rank_contiguous": 2}


@pytest.mark.parametrize("column", [S.RANK, S.SCORE])
def test_missing_column_is_reported_without_crashing(column):
    report = validate("run", run().drop(columns=[column]))
    assert report.failures[0]["expectation"] == "expect_column_to_exist"
    assert report.failures[0]["columns"] == [column]


def test_same_context_gives_fresh_results_per_frame():
    assert not validate("documents", _dup_doc(documents())).success
    assert validate("documents", documents()).success


def test_message_names_suite_expectation_column_and_example():
    with pytest.raises(ValidationFailed) as exc:
        check("documents", _dup_doc(documents()))
    assert str(exc.value) == ("documents: expect_column_values_to_be_unique failed on doc_id: "
                              "2 unexpected, e.g. rows 0, 2 ('kb-1#0')")
    assert not exc.value.report.success


def test_check_writes_json_report_then_raises(tmp_path):
    out = tmp_path / "validation" / "run.json"
    with pytest.raises(ValidationFailed, match="run: .* on _score_order_ok: 1 unexpected"):
        check("run", _score_up(run()), out)
    saved = json.loads(out.read_text())
    assert saved["suite"] == "run" and saved["success"] is False and saved["rows"] == 5
    assert saved["failures"][0]["examples"][0]["index"] == 2


def test_check_passes_and_saves(tmp_path):
    out = tmp_path / "qrels.json"
    report = check("qrels", qrels(), out, max_grade=3)
    assert isinstance(report, ValidationReport)
    assert json.loads(out.read_text()) == report.to_dict()
    assert report.to_dict()["params"] == {"max_grade": 3}


def test_unknown_suite_and_parameter_are_rejected():
    with pytest.raises(ValueError, match="unknown suite 'pools'"):
        validate("pools", qrels())
    with pytest.raises(TypeError):
        validate("documents", documents(), max_grade=3)


def test_pool_suite_names_a_repeated_blind_id():
    with pytest.raises(ValidationFailed, match="expect_column_values_to_be_unique.*blind_id"):
        check("pool", pool().assign(blind_id=["B1", "B1", "B3"]))


def test_a_seed_window_is_one_list_per_seed():
    gap = seeds()
    gap.loc[7, S.RANK] = 8  # seed 2's bm25 list: 1, 2, 8
    assert _counts(validate("seeds", gap)) == {"_rank_contiguous": 1}
    twice = pd.concat([seeds(), seeds().tail(1)], ignore_index=True)
    assert not validate("seeds", twice).success
    assert not validate("seed_metrics", pd.concat([seed_metrics(), seed_metrics().tail(1)],
                                                  ignore_index=True)).success
