"""Gate rule ``safety``: zero tolerance for safety violations in the candidate's windows."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome
from releval.params.rules import SafetyRule


def check(rule: SafetyRule, ev: Evidence) -> list[Outcome]:
    """Pass iff violations ≤ max_violations, counted over the candidate and every route it
    is built from. Zero tolerance by default: no other number offsets a violation. n/a,
    with its reason, where the safety report says nothing could be checked."""
    name = f"{rule.rule} {ev.candidate}"
    if ev.safety.get("not_applicable"):  # nothing to check: no documents to be forbidden
        return [Outcome.not_applicable(rule.rule, name, str(ev.safety["not_applicable"]))]
    record = (ev.safety.get("systems") or {}).get(ev.candidate)
    if record is None or record.get("violations") is None:
        return [Outcome(rule.rule, name, False, None, rule.max_violations,
                        f"no safety record for {ev.candidate}")]
    count = int(record["violations"])
    routes = [str(r) for r in record.get("routes") or [] if str(r) != ev.candidate]
    where = ev.candidate + (f" and its routes {', '.join(routes)}" if routes else "")
    reasons = ", ".join(f"{k}={int(v)}" for k, v in (record.get("by_reason") or {}).items()
                        if v)
    passed = count <= rule.max_violations
    reason = (f"{count} violation(s) {'≤' if passed else '>'} max {rule.max_violations} over "
              f"{where}" + (f" ({reasons})" if reasons else ""))
    return [Outcome(rule.rule, name, passed, count, rule.max_violations, reason)]
