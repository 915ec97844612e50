"""Gate rule ``off_policy``: the candidate policy, estimated from the logged feedback
(offpolicy.json), not worse than the logging policy's own on-policy value beyond a margin,
and only when the estimate can be trusted."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, number
from releval.numbers import formatted
from releval.params.rules import OffPolicyRule

ALL = "all"  # the estimate over every position


def check(rule: OffPolicyRule, ev: Evidence) -> list[Outcome]:
    """Pass iff the diagnostics passed (ESS ≥ min_ess, no mass off the logger's support) and
    ``estimator``'s estimate over every position has ci_low ≥ on-policy value − ``margin``.
    Failing diagnostics fail the rule with their reasons, whatever the estimate; a missing
    estimate, CI or on-policy value fails, saying which; n/a, saying so, without a log."""
    name = f"{rule.rule} {rule.estimator}"
    doc = ev.offpolicy
    if doc is None or not doc.applicable:
        why = doc.reason if doc is not None and doc.reason else "offpolicy.log is not set"
        return [Outcome.not_applicable(rule.rule, name, f"not applicable: {why}")]
    estimate = next((e for e in doc.estimates
                     if e.estimator == rule.estimator and e.position == ALL), None)
    base = number(doc.on_policy.value) if doc.on_policy is not None else None
    low = number(estimate.ci_low) if estimate is not None else None
    if estimate is None or low is None or base is None:
        missing = ("no estimate" if estimate is None else "no CI" if low is None
                   else "no on-policy value of the log")
        return [Outcome(rule.rule, name, False, low, None,
                        f"{missing} for {rule.estimator} over all positions: cannot show the "
                        "candidate policy is not worse")]
    threshold = base - rule.margin
    value = number(estimate.value)
    said = (f"{rule.estimator} estimate {formatted(value)} [{formatted(low)}, "
            f"{formatted(number(estimate.ci_high))}], CI lower bound {formatted(low)} "
            f"{'≥' if low >= threshold else '<'} on-policy {formatted(base)} − margin "
            f"{rule.margin:g} = {formatted(threshold)}")
    diagnostics = doc.diagnostics
    if diagnostics is None or not diagnostics.passed:
        reasons = "; ".join(diagnostics.reasons) if diagnostics else "no diagnostics"
        return [Outcome(rule.rule, name, False, low, threshold,
                        f"the estimate cannot be trusted: {reasons} ({said})")]
    return [Outcome(rule.rule, name, low >= threshold, low, threshold,
                    f"{said}; ESS {diagnostics.ess:,.0f} ≥ {diagnostics.min_ess:g}")]
