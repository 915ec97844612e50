"""Gate rule ``no_answer``: the candidate refuses no-answer queries as well as the baseline."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, number
from releval.numbers import formatted
from releval.params.rules import NoAnswerRule


def check(rule: NoAnswerRule, ev: Evidence) -> list[Outcome]:
    """Pass iff correct_refusal_rate(candidate) ≥ correct_refusal_rate(baseline) − max_drop;
    a null rate (no no-answer queries) passes as not applicable, and says so."""
    name = f"{rule.rule} {ev.candidate}"
    records = ev.safety.get("no_answer") or {}
    missing = [s for s in (ev.candidate, ev.baseline) if s not in records]
    if missing:
        return [Outcome(rule.rule, name, False, None, None,
                        f"no no-answer record for {', '.join(missing)}")]
    cand = number(records[ev.candidate].get("correct_refusal_rate"))
    base = number(records[ev.baseline].get("correct_refusal_rate"))
    if cand is None or base is None:
        return [Outcome.not_applicable(rule.rule, name, "not applicable: no no-answer queries",
                                       cand)]
    threshold = base - rule.max_drop
    passed = cand >= threshold
    return [Outcome(rule.rule, name, passed, cand, threshold,
                    f"correct-refusal rate {formatted(cand)} {'≥' if passed else '<'} "
                    f"{formatted(threshold)} "
                    f"(baseline {ev.baseline} {formatted(base)} − max drop {rule.max_drop:g})")]
