"""Release gates: each rule at its boundary, missing evidence, labelling and aggregation."""

import json
import math
import typing

import pandas as pd
import pytest

from releval.decision.gate import NO_RULES, RULES, decide, outcomes
from releval.decision.gate.evidence import check_sides
from releval.errors import InputError
from releval.metrics.engine import missing
from releval.params import Gate, Params, Rule
from releval.params.rules import (
    CoverageRule,
    HoldoutRule,
    JudgedRule,
    LatencyRule,
    NoAnswerRule,
    NoRegression,
    NotWorse,
    SafetyRule,
)
from tests import documents
from tests.documents import comparison, paired

NAN = math.nan


SLICES = pd.DataFrame({
    "dimension": ["all", "kind", "kind", "kind"],
    "slice": ["all", "error_code", "typo", "error_code"],
    "measure": ["nDCG@10", "nDCG@10", "nDCG@10", "R@100"],
    "n": [150, 40, 8, 40],
    "n_queries": [150, 40, 8, 40],
    "too_small": [False, False, True, False],
    "mean_diff": [0.01, -0.01, NAN, 0.02],
    "ci_low": [-0.02, -0.05, NAN, -0.01],
    "ci_high": [0.04, 0.03, NAN, 0.05],
    "p_value": [0.5, 0.6, NAN, 0.2],
    "p_holm": [1.0, 1.0, NAN, 0.8],
    "verdict": ["inconclusive", "inconclusive", "too small", "inconclusive"],
})

SAFETY = {
    "top_k": 10,
    "systems": {
        "hybrid": {"routes": ["bm25", "dense"], "violations": 2, "own": 0,
                   "by_reason": {"acl": 2, "expired": 0}, "queries_affected": 1,
                   "below_top_k": 0},
        "bm25": {"routes": [], "violations": 0, "own": 0, "by_reason": {},
                 "queries_affected": 0, "below_top_k": 0},
    },
    "no_answer": {
        "bm25": {"no_answer_queries": 8, "correct_refusals": 6, "correct_refusal_rate": 0.75,
                 "answerable_queries": 142, "no_result": 0, "no_result_rate": 0.0,
                 "threshold": None},
        "hybrid": {"no_answer_queries": 8, "correct_refusals": 4, "correct_refusal_rate": 0.5,
                   "answerable_queries": 142, "no_result": 1, "no_result_rate": 1 / 142,
                   "threshold": 0.3},
    },
}

METRICS = {"bm25": {"nDCG@10": 0.40, "Judged@10": 0.9},
           "hybrid": {"nDCG@10": 0.41, "Judged@10": 0.7, "AP": None}}
LATENCY = {"bm25": {"p50": 0.1, "p95": 0.2, "p99": 0.3},
           "hybrid": {"p50": 100.0, "p95": 250.0, "p99": None}}


def evidence(**changes):
    values = {"baseline": "bm25", "candidate": "hybrid", "comparison": comparison(),
              "slices": SLICES, "safety": SAFETY, "metrics": METRICS, "latency": LATENCY}
    return documents.evidence(**{**values, **changes})


def one(rule, ev=None):
    (result,) = outcomes([rule], ev or evidence())
    return result


def test_registry_covers_every_rule_of_the_params_contract():
    (union, _) = typing.get_args(Rule)
    literals = {model.model_fields["rule"].default for model in typing.get_args(union)}
    assert set(RULES) == literals == {"no_regression", "safety", "no_answer", "judged",
                                      "coverage", "holdout", "latency", "not_worse",
                                      "guarded", "health", "seeds", "off_policy"}
    assert all(RULES[name].params.model_fields["rule"].default == name for name in RULES)


def test_default_rules_are_the_registry_defaults():
    assert Gate().rules == [NoRegression(), SafetyRule(), NoAnswerRule(), JudgedRule(),
                            CoverageRule(), HoldoutRule()]
    assert [name for name, r in RULES.items() if not r.default] == [
        "latency", "not_worse", "guarded", "health", "seeds",
        "off_policy"]  # each needs its settings


def test_a_comparison_of_other_systems_is_stale():
    check_sides(evidence())
    check_sides(evidence(comparison=None))  # no comparison: no side to disagree with
    with pytest.raises(InputError, match="comparison's candidate is 'hybrid' but "
                                         "compare.candidate is 'dense'; rerun compare"):
        check_sides(evidence(candidate="dense"))


@pytest.mark.parametrize(("max_drop", "passed"), [(0.02, True), (0.03, True), (0.0199, False),
                                                  (0.0, False)])
def test_no_regression_ci_lower_bound_against_minus_max_drop(max_drop, passed):
    result = one(NoRegression(max_drop=max_drop))  # ci_low = -0.02
    assert result.passed is passed
    assert result.name == "no_regression nDCG@10 @ all"
    assert result.value == -0.02 and result.threshold == -max_drop
    assert "-0.0200" in result.reason and "n=150" in result.reason


@pytest.mark.parametrize(("max_drop", "passed"), [(0.005, True), (0.004, False)])
def test_no_regression_on_the_mean_uses_mean_diff(max_drop, passed):
    ev = evidence(comparison=comparison(paired(mean_diff=-0.005, ci_low=-0.5)))
    result = one(NoRegression(max_drop=max_drop, evidence="mean"), ev)
    assert result.passed is passed and result.value == -0.005


def test_a_zero_max_drop_is_a_threshold_of_plus_zero():
    result = one(NoRegression(max_drop=0.0), evidence())
    assert math.copysign(1.0, result.threshold) == 1.0 and "-0.0000" not in result.reason


def test_no_regression_per_slice_missing_and_too_small_slices_fail():
    rule = NoRegression(max_drop=0.05, slices=["kind=error_code", "kind=typo", "kind=nope",
                                                "error_code"])
    got = outcomes([rule], evidence())
    assert [o.name for o in got] == [
        "no_regression nDCG@10 @ all", "no_regression nDCG@10 @ kind=error_code",
        "no_regression nDCG@10 @ kind=typo", "no_regression nDCG@10 @ kind=nope",
        "no_regression nDCG@10 @ error_code"]
    assert [o.passed for o in got] == [True, True, False, False, False]
    assert got[1].value == -0.05 and "n=40" in got[1].reason  # exactly -max_drop: passes
    assert got[2].value is None and "n=8 below min n" in got[2].reason
    assert "cannot show non-inferiority" in got[2].reason
    assert got[3].reason == ("you asked for slice kind=nope; the queries carry no kind nope "
                             "(present: error_code, typo)")
    assert "dimension=value" in got[4].reason


def test_no_regression_names_a_tag_or_a_dimension_the_data_lacks():
    rule = NoRegression(max_drop=0.05, slices=["tag=error_code", "tenant=acme"])
    ev = evidence(slices=SLICES.assign(dimension=["all", "tag", "tag", "tag"],
                                       slice=["all", "untagged", "typo", "untagged"]))
    got = outcomes([rule], ev)[1:]
    assert [o.passed for o in got] == [False, False]
    assert got[0].reason == ("you asked for slice tag=error_code; the queries carry no tag "
                             "error_code (present: typo, untagged)")
    assert got[1].reason == ("you asked for slice tenant=acme; no query is labelled by tenant "
                             "(slices.dimensions)")


def test_no_regression_slice_fails_just_below_the_bound():
    (_, sliced) = outcomes([NoRegression(max_drop=0.049, slices=["kind=error_code"])],
                           evidence())
    assert not sliced.passed and sliced.threshold == -0.049


def test_no_regression_missing_measure_or_undefined_ci_fails():
    missing = one(NoRegression(measure="RR@10", max_drop=1.0))
    assert not missing.passed and missing.value is None
    assert "RR@10 is not in the paired comparison" in missing.reason
    assert "compared: nDCG@10" in missing.reason
    undefined = one(NoRegression(max_drop=1.0),
                    evidence(comparison=comparison(paired(ci_low=None, n=0))))
    assert not undefined.passed and "undefined (n=0)" in undefined.reason


def test_no_regression_without_paired_rows_fails():
    ev = evidence(comparison=comparison(controlled=False, differences=["x"], paired=[]))
    result = one(NoRegression(max_drop=1.0), ev)
    assert not result.passed and "compared: none" in result.reason


@pytest.mark.parametrize(("max_violations", "passed"), [(0, False), (1, False), (2, True)])
def test_safety_violations_at_most_max(max_violations, passed):
    result = one(SafetyRule(max_violations=max_violations))
    assert result.passed is passed and result.value == 2
    assert result.threshold == max_violations and result.name == "safety hybrid"
    assert "acl=2" in result.reason and "expired" not in result.reason
    assert "routes bm25, dense" in result.reason


def test_safety_is_zero_tolerance_whatever_the_other_numbers():
    ev = evidence(comparison=comparison(paired(mean_diff=0.3, ci_low=0.2)))
    decision = decide([NoRegression(), SafetyRule()], ev)
    assert not decision["passed"] and decision["failed"] == ["safety hybrid"]


def test_safety_without_a_record_for_the_candidate_fails():
    result = one(SafetyRule(), evidence(safety={"systems": {"bm25": SAFETY["systems"]["bm25"]}}))
    assert not result.passed and "no safety record for hybrid" in result.reason


@pytest.mark.parametrize(("max_drop", "passed"), [(0.25, True), (0.5, True), (0.125, False),
                                                  (0.0, False)])
def test_no_answer_candidate_rate_against_baseline_minus_max_drop(max_drop, passed):
    result = one(NoAnswerRule(max_drop=max_drop))  # hybrid 0.5, bm25 0.75
    assert result.passed is passed
    assert result.value == 0.5 and result.threshold == 0.75 - max_drop
    assert "0.5000" in result.reason and "0.7500" in result.reason


def test_no_answer_with_null_rates_is_not_applicable_and_passes():
    safety = {**SAFETY, "no_answer": {
        name: {**rec, "no_answer_queries": 0, "correct_refusals": 0,
               "correct_refusal_rate": None} for name, rec in SAFETY["no_answer"].items()}}
    result = one(NoAnswerRule(), evidence(safety=safety))
    assert result.passed and result.reason == "not applicable: no no-answer queries"
    assert not result.applicable
    assert result.value is None and result.threshold is None


def test_no_answer_without_a_record_fails():
    safety = {**SAFETY, "no_answer": {"hybrid": SAFETY["no_answer"]["hybrid"]}}
    result = one(NoAnswerRule(max_drop=1.0), evidence(safety=safety))
    assert not result.passed and "no no-answer record for bm25" in result.reason


@pytest.mark.parametrize(("minimum", "passed"), [(0.7, True), (0.69, True), (0.71, False)])
def test_judged_at_least_min(minimum, passed):
    result = one(JudgedRule(min=minimum))  # hybrid Judged@10 = 0.7
    assert result.passed is passed and result.value == 0.7 and result.threshold == minimum
    assert result.name == "judged Judged@10"


def test_judged_null_or_missing_measure_fails():
    null = one(JudgedRule(measure="AP", min=0.0))
    assert not null.passed and "AP of hybrid is undefined" in null.reason
    missing = one(JudgedRule(measure="Judged@5", min=0.0))
    assert not missing.passed and "no Judged@5 for hybrid" in missing.reason


@pytest.mark.parametrize(("max_ms", "passed"), [(250.0, True), (300.0, True), (249.9, False)])
def test_latency_percentile_at_most_max_ms(max_ms, passed):
    result = one(LatencyRule(max_ms=max_ms))  # hybrid p95 = 250 ms
    assert result.passed is passed and result.value == 250.0 and result.threshold == max_ms
    assert result.name == "latency p95"


def test_latency_not_measured_fails():
    null = one(LatencyRule(percentile="p99", max_ms=1e9))
    assert not null.passed and null.reason == "latency not measured for hybrid"
    absent = one(LatencyRule(max_ms=1e9), evidence(latency={"bm25": LATENCY["bm25"]}))
    assert not absent.passed and absent.reason == "latency not measured for hybrid"


def entry(value, n=120, undefined=3, **extra):
    return documents.entry(value, n=n, undefined=undefined, **extra)


SUMMARY = {  # evaluate/summary.json's systems
    "bm25": {"nDCG@10": entry(0.40), "ECE(bins=10)": entry(0.05, level="system",
                                                          applicable=True),
             "Coverage@10": entry(0.30, level="system", applicable=True)},
    "hybrid": {"nDCG@10": entry(0.39), "ECE(bins=10)": entry(None, n=0, undefined=0,
                                                            level="system", applicable=False,
                                                            missing=missing("ECE(bins=10)")),
               "Coverage@10": entry(None, n=0, undefined=120, level="system",
                                    applicable=True)},
}
BETTER = {"nDCG@10": "higher", "ECE(bins=10)": "lower", "Coverage@10": "higher"}


def rec_evidence(**systems):
    summary = {side: SUMMARY[side] | measures for side, measures in systems.items()}
    return evidence(summary=SUMMARY | summary, better=BETTER)


@pytest.mark.parametrize(("tolerance", "passed"), [(0.01, True), (0.02, True),
                                                   (0.009, False), (0.0, False)])
def test_not_worse_higher_is_better_within_the_tolerance(tolerance, passed):
    result = one(NotWorse(measure="nDCG@10", tolerance=tolerance), rec_evidence())
    assert result.passed is passed and result.name == "not_worse nDCG@10"
    assert result.value == 0.39 and result.threshold == pytest.approx(0.40 - tolerance)
    assert result.reason.startswith(f"nDCG@10 of hybrid 0.3900 {'≥' if passed else '<'} ")
    assert (f"(baseline bm25 0.4000 − tolerance {tolerance:g}; Δ -0.0100, higher is better)"
            in result.reason)


def test_not_worse_equal_values_pass_without_tolerance():
    result = one(NotWorse(measure="nDCG@10"), rec_evidence(hybrid={"nDCG@10": entry(0.40)}))
    assert result.passed and result.threshold == 0.40


@pytest.mark.parametrize(("candidate", "passed"), [(0.04, True), (0.06, True), (0.0601, False)])
def test_not_worse_lower_is_better(candidate, passed):
    ev = rec_evidence(hybrid={"ECE(bins=10)": entry(candidate, level="system",
                                                    applicable=True)})
    result = one(NotWorse(measure="ECE(bins=10)", tolerance=0.01), ev)
    assert result.passed is passed
    assert result.value == candidate and result.threshold == pytest.approx(0.06)
    sign = "≤" if passed else ">"
    assert result.reason.startswith(f"ECE(bins=10) of hybrid {candidate:.4f} {sign} 0.0600 ")
    assert "(baseline bm25 0.0500 + tolerance 0.01; Δ" in result.reason
    assert result.reason.endswith("lower is better)")


def test_not_worse_not_applicable_or_undefined_fails_and_says_which_and_why():
    na = one(NotWorse(measure="ECE(bins=10)", tolerance=1.0), rec_evidence())
    assert not na.passed and na.value is None and na.threshold is None
    assert na.reason == ("ECE(bins=10) is not applicable to hybrid: it emits no "
                         "probabilities: cannot show it is not worse")
    undefined = one(NotWorse(measure="Coverage@10", tolerance=1.0), rec_evidence())
    assert not undefined.passed
    assert undefined.reason == ("Coverage@10 of hybrid is undefined (n=0, undefined=120): "
                                "cannot show it is not worse")
    both = one(NotWorse(measure="ECE(bins=10)"), rec_evidence(
        bm25={"ECE(bins=10)": entry(None, applicable=False, missing=missing("ECE"))}))
    assert both.reason == ("ECE(bins=10) is not applicable to hybrid: it emits no "
                           "probabilities; ECE(bins=10) is not applicable to bm25: it emits no "
                           "probabilities: cannot show it is not worse")
    catalogue = one(NotWorse(measure="Coverage@10"), rec_evidence(
        hybrid={"Coverage@10": entry(None, applicable=False, missing=missing("Coverage@10"))}))
    assert catalogue.reason == ("Coverage@10 is not applicable to hybrid: the evaluation has "
                                "no item catalogue for it: cannot show it is not worse")
    baseline_only = one(NotWorse(measure="nDCG@10"), rec_evidence(
        bm25={"nDCG@10": entry(math.nan, n=0)}))
    assert not baseline_only.passed and baseline_only.value == 0.39
    assert baseline_only.reason.startswith("nDCG@10 of bm25 is undefined (n=0")


def test_not_worse_missing_measure_or_direction_fails():
    missing = one(NotWorse(measure="Gini@10", tolerance=1.0),
                  evidence(summary=SUMMARY, better={"Gini@10": "lower"}))
    assert not missing.passed
    assert missing.reason == ("no Gini@10 for hybrid in the evaluation summary; no Gini@10 for "
                              "bm25 in the evaluation summary: cannot show it is not worse")
    unknown = one(NotWorse(measure="nDCG@10"), evidence(summary=SUMMARY))
    assert not unknown.passed and "direction of nDCG@10" in unknown.reason


def test_not_worse_from_params_needs_a_measure():
    p = Params.model_validate({"gate": {"rules": [{"rule": "not_worse", "measure": "Brier"}]}})
    assert p.gate.rules == [NotWorse(measure="Brier", tolerance=0.0)]
    with pytest.raises(ValueError, match="measure"):
        Params.model_validate({"gate": {"rules": [{"rule": "not_worse"}]}})
    with pytest.raises(ValueError, match="tolerance"):
        Params.model_validate({"gate": {"rules": [{"rule": "not_worse", "measure": "Brier",
                                                   "tolerance": -0.1}]}})


def test_uncontrolled_comparison_labels_every_outcome_but_still_decides():
    ev = evidence(comparison=comparison(controlled=False,
                                        differences=["queries: 3 only in the baseline"]))
    decision = decide([NoRegression(max_drop=0.05), JudgedRule(min=0.5)], ev)
    assert decision["passed"] is True and decision["controlled"] is False
    assert decision["differences"] == ["queries: 3 only in the baseline"]
    assert all(r["reason"].startswith("UNCONTROLLED: ") for r in decision["rules"])
    controlled = decide([NoRegression(max_drop=0.05)], evidence())
    assert controlled["controlled"] is True
    assert not controlled["rules"][0]["reason"].startswith("UNCONTROLLED")


def test_decision_aggregates_outcomes_in_rule_order():
    rules = [NoRegression(max_drop=0.05, slices=["kind=typo"]), SafetyRule(), NoAnswerRule(),
             JudgedRule(), LatencyRule(max_ms=300)]
    decision = decide(rules, evidence())
    assert decision["passed"] is False
    assert [r["name"] for r in decision["rules"]] == [
        "no_regression nDCG@10 @ all", "no_regression nDCG@10 @ kind=typo", "safety hybrid",
        "no_answer hybrid", "judged Judged@10", "latency p95"]
    assert decision["failed"] == ["no_regression nDCG@10 @ kind=typo", "safety hybrid",
                                  "no_answer hybrid"]
    assert (decision["baseline"], decision["candidate"]) == ("bm25", "hybrid")
    assert decision["note"] is None
    assert set(decision["rules"][0]) == {"rule", "name", "passed", "value", "threshold",
                                         "reason", "applicable", "measures"}
    assert decision["not_applicable"] == []
    json.dumps(decision, allow_nan=False)  # plain JSON: no NaN, no numpy types


def test_no_rules_pass_with_a_note():
    decision = decide([], evidence())
    assert decision["passed"] is True and decision["rules"] == [] and decision["failed"] == []
    assert decision["note"] == NO_RULES == "no rules configured"


def test_rules_from_params_dispatch_on_their_rule_name():
    p = Params.model_validate({"gate": {"rules": [
        {"rule": "latency", "percentile": "p50", "max_ms": 99.0},
        {"rule": "judged", "min": 0.8}]}})
    decision = decide(p.gate.rules, evidence())
    assert [(r["name"], r["passed"]) for r in decision["rules"]] == [
        ("latency p50", False), ("judged Judged@10", False)]
