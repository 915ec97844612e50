"""Gate rule ``latency``: the candidate's latency percentile within a bound."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, latency_of
from releval.numbers import formatted
from releval.params.rules import LatencyRule


def check(rule: LatencyRule, ev: Evidence) -> list[Outcome]:
    """Pass iff latency[candidate][percentile] ≤ max_ms; not measured (null) fails."""
    name = f"{rule.rule} {rule.percentile}"
    value = latency_of(ev, ev.candidate, rule.percentile)
    if value is None:
        return [Outcome(rule.rule, name, False, None, rule.max_ms,
                        f"latency not measured for {ev.candidate}")]
    passed = value <= rule.max_ms
    return [Outcome(rule.rule, name, passed, value, rule.max_ms,
                    f"{rule.percentile} latency of {ev.candidate} {formatted(value, '.1f')} ms "
                    f"{'≤' if passed else '>'} {rule.max_ms:g} ms")]
