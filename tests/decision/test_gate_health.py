"""Gate rule ``health`` (one outcome per bound; missing or undefined evidence fails, saying
what is missing) and the rollback thresholds written into the decision."""

import pytest
from pydantic import ValidationError

from releval.decision.gate import decide
from releval.decision.gate.evidence import Evidence
from releval.decision.gate.health import check
from releval.errors import InputError
from releval.params import parse_params
from releval.params.rules import HealthRule, Rollback
from tests import documents

HEALTH = documents.health({
    "hybrid": {"error_rate": 0.004, "latency_p99_ms": 120.0, "embedding_cache_hit_rate": 0.9,
               "timeout_rate": None, "cost_per_query": None,
               "undefined": {"timeout_rate": "no query status recorded",
                             "cost_per_query": "no cost model in health.cost for hybrid"}},
    "bm25": {"error_rate": 0.05}})


def evidence(**changes) -> Evidence:
    values = dict(baseline="bm25", candidate="hybrid", comparison=documents.comparison(),
                  health=HEALTH, metrics={"hybrid": {"nDCG@10": 0.6, "RR@10": None}})
    return documents.evidence(**{**values, **changes})


def outcomes(rule: HealthRule, ev: Evidence | None = None) -> dict[str, tuple]:
    return {o.name: (o.passed, o.value, o.threshold, o.reason)
            for o in check(rule, ev or evidence())}


def test_one_outcome_per_bound_of_the_candidate():
    got = outcomes(HealthRule(max={"error_rate": 0.01, "latency_p99_ms": 100},
                              min={"embedding_cache_hit_rate": 0.95}))
    assert got == {
        "health hybrid error_rate max": (True, 0.004, 0.01, "error_rate of hybrid 0.004 ≤ 0.01"),
        "health hybrid latency_p99_ms max": (False, 120.0, 100.0,
                                             "latency_p99_ms of hybrid 120 > 100"),
        "health hybrid embedding_cache_hit_rate min": (
            False, 0.9, 0.95, "embedding_cache_hit_rate of hybrid 0.9 < 0.95")}


def test_a_named_system_is_checked_instead_of_the_candidate():
    [(passed, value, _, _)] = outcomes(HealthRule(system="bm25",
                                                  max={"error_rate": 0.01})).values()
    assert (passed, value) == (False, 0.05)


def test_undefined_evidence_fails_with_the_reason_health_gives():
    got = outcomes(HealthRule(max={"timeout_rate": 0.02, "cost_per_query": 1.0,
                                   "deletion_propagation_max_days": 1}))
    assert {name: (passed, value) for name, (passed, value, _, _) in got.items()} == {
        "health hybrid timeout_rate max": (False, None),
        "health hybrid cost_per_query max": (False, None),
        "health hybrid deletion_propagation_max_days max": (False, None)}
    reasons = [reason for *_, reason in got.values()]
    assert reasons == ["timeout_rate of hybrid is undefined: no query status recorded",
                       "cost_per_query of hybrid is undefined: no cost model in health.cost "
                       "for hybrid",
                       "deletion_propagation_max_days of hybrid is undefined: not in the "
                       "health record"]


def test_a_system_without_a_health_record_fails():
    for ev in (evidence(health=None), evidence(candidate="dense")):
        [(passed, value, _, reason)] = outcomes(HealthRule(max={"error_rate": 0.01}),
                                                ev).values()
        assert not passed and value is None
        assert reason.startswith(f"no health record for {ev.candidate}")


def test_a_health_rule_needs_a_bound_on_a_known_figure():
    with pytest.raises(ValidationError, match="at least one bound"):
        HealthRule()
    with pytest.raises(ValidationError):
        HealthRule(max={"error_rat": 0.01})


def test_the_decision_holds_the_rollback_thresholds_with_offline_values_and_headroom():
    rollback = [Rollback(metric="error_rate", max=0.02), Rollback(metric="nDCG@10", min=0.55),
                Rollback(metric="timeout_rate", max=0.05), Rollback(metric="RR@10", min=0.5)]
    decision = decide([HealthRule(max={"error_rate": 0.01})], evidence(), rollback)
    assert decision["passed"] is True  # the thresholds are no rule
    assert decision["rollback"] == [
        {"metric": "error_rate", "bound": "max", "threshold": 0.02, "of": None, "offline": 0.004,
         "source": "health", "headroom": pytest.approx(0.016)},
        {"metric": "nDCG@10", "bound": "min", "threshold": 0.55, "of": None, "offline": 0.6,
         "source": "metrics", "headroom": pytest.approx(0.05)},
        {"metric": "timeout_rate", "bound": "max", "threshold": 0.05, "of": None, "offline": None,
         "source": "health", "headroom": None},
        {"metric": "RR@10", "bound": "min", "threshold": 0.5, "of": None, "offline": None,
         "source": "metrics", "headroom": None}]
    assert decide([], evidence())["rollback"] == []


def test_a_candidate_already_past_a_threshold_offline_has_negative_headroom():
    [row] = decide([], evidence(), [Rollback(metric="latency_p99_ms", max=100)])["rollback"]
    assert row["headroom"] == -20.0


def test_a_rollback_metric_neither_health_nor_evaluated_is_refused():
    with pytest.raises(InputError, match="'nDCG@5' is neither a health figure"):
        decide([], evidence(), [Rollback(metric="nDCG@5", min=0.5)])


def test_a_rollback_threshold_has_exactly_one_bound():
    for bounds in ({}, {"max": 1.0, "min": 0.0}):
        with pytest.raises(ValidationError, match="exactly one of max and min"):
            Rollback(metric="error_rate", **bounds)


def test_params_read_the_health_rule_and_the_rollback_thresholds():
    p = parse_params({"gate": {
        "rules": [{"rule": "health", "max": {"error_rate": 0.01}}],
        "rollback": [{"metric": "error_rate", "max": 0.02}]}})
    assert p.gate.rules[0] == HealthRule(max={"error_rate": 0.01})
    assert p.gate.rollback == [Rollback(metric="error_rate", max=0.02)]
    with pytest.raises(InputError, match="gate.rollback"):
        parse_params({"gate": {"rollback": [{"metric": "error_rate", "above": 0.02}]}})
