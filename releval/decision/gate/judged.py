"""Gate rule ``judged``: the judgments cover what the candidate retrieves."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, number
from releval.numbers import formatted
from releval.params.rules import JudgedRule


def check(rule: JudgedRule, ev: Evidence) -> list[Outcome]:
    """Pass iff metrics[candidate][measure] ≥ min; missing or null fails."""
    name = f"{rule.rule} {rule.measure}"
    measures = ev.metrics.get(ev.candidate) or {}
    if rule.measure not in measures:
        return [Outcome(rule.rule, name, False, None, rule.min,
                        f"no {rule.measure} for {ev.candidate} in the metrics")]
    value = number(measures[rule.measure])
    if value is None:
        return [Outcome(rule.rule, name, False, None, rule.min,
                        f"{rule.measure} of {ev.candidate} is undefined")]
    passed = value >= rule.min
    return [Outcome(rule.rule, name, passed, value, rule.min,
                    f"{rule.measure} of {ev.candidate} {formatted(value)} {'≥' if passed else '<'} "
                    f"{rule.min:g}" + ("" if passed else
                                       ": the judgments do not cover what it retrieves"))]
