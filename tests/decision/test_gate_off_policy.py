"""Gate rule off_policy: the candidate policy's estimate against the log's on-policy value,
only when the diagnostics pass."""

from releval.decision.gate import RULES, decide
from releval.decision.gate.evidence import Evidence
from releval.documents.offpolicy import OffPolicyDoc
from releval.params.rules import OffPolicyRule


def doc(low: float = 0.004, on_policy: float = 0.0042, passed: bool = True,
        reasons: tuple = ()) -> OffPolicyDoc:
    estimate = {"estimator": "dr", "position": "all", "value": low + 0.001, "ci_low": low,
                "ci_high": low + 0.002, "n": 5000, "clip": None, "covers": None}
    return OffPolicyDoc.model_validate({
        "applicable": True, "estimators": ["dr"],
        "on_policy": {"value": on_policy, "ci_low": 0.003, "ci_high": 0.005, "n": 5000},
        "estimates": [estimate, estimate | {"position": "1"}],
        "diagnostics": {"ess": 800.0, "ess_share": 0.16, "max_weight": 40.0,
                        "mean_weight": 1.0, "unsupported_share": 0.0, "mass_off_support": 0.0,
                        "min_ess": 100.0, "passed": passed, "reasons": list(reasons)}})


def check(document: OffPolicyDoc | None, margin: float = 0.0) -> dict:
    ev = Evidence(baseline="a", candidate="b", offpolicy=document)
    rule = OffPolicyRule(margin=margin)
    [outcome] = RULES["off_policy"].check(rule, ev)
    return outcome.as_dict() | {"gate": decide([rule], ev)["passed"]}


def test_passes_when_the_ci_lower_bound_clears_the_on_policy_value_less_the_margin():
    out = check(doc(low=0.0035), margin=0.001)
    assert out["passed"] and out["gate"] and out["applicable"]
    assert out["value"] == 0.0035 and abs(out["threshold"] - 0.0032) < 1e-12
    assert "CI lower bound 0.0035 ≥ on-policy 0.0042 − margin 0.001" in out["reason"]


def test_fails_by_the_margin():
    out = check(doc(low=0.0035), margin=0.0)
    assert not out["passed"] and not out["gate"]
    assert "0.0035 < on-policy 0.0042 − margin 0 = 0.0042" in out["reason"]


def test_failing_diagnostics_fail_with_their_reason_whatever_the_estimate():
    out = check(doc(low=0.01, passed=False, reasons=("ESS 12 < min_ess 100",)), margin=0.001)
    assert not out["passed"] and not out["gate"]
    assert out["reason"].startswith("the estimate cannot be trusted: ESS 12 < min_ess 100")


def test_missing_estimate_fails_saying_so():
    document = doc().model_copy(update={"estimates": []})
    out = check(document)
    assert not out["passed"] and out["reason"].startswith("no estimate for dr")


def test_not_applicable_without_a_log():
    for document in (None, OffPolicyDoc.model_validate(
            {"applicable": False, "reason": "offpolicy.log is not set: no off-policy "
                                            "evaluation"})):
        out = check(document)
        assert out["passed"] and out["gate"] and not out["applicable"]
        assert out["reason"].startswith("not applicable: offpolicy.log is not set")
