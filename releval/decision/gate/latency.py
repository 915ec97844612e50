"""Gate rule ``latency``: the candidate's latency percentile within a bound.

n/a when no evaluated system measured latency (team runs carry none: the data has nothing
for the bound to check); a candidate without a measurement where another system has one
fails (missing evidence never passes)."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, latency_of
from releval.numbers import formatted
from releval.params.rules import LatencyRule


def check(rule: LatencyRule, ev: Evidence) -> list[Outcome]:
    """Pass iff latency[candidate][percentile] ≤ max_ms; not measured (null) fails, n/a
    when no system measured it."""
    name = f"{rule.rule} {rule.percentile}"
    if not any(latency_of(ev, s, rule.percentile) is not None for s in ev.latency):
        return [Outcome.not_applicable(
            rule.rule, name, f"no system measured latency ({rule.percentile} is null for "
            f"{', '.join(ev.latency) or 'every system'}: team runs carry none): nothing to "
            f"hold to {rule.max_ms:g} ms")]
    value = latency_of(ev, ev.candidate, rule.percentile)
    if value is None:
        return [Outcome(rule.rule, name, False, None, rule.max_ms,
                        f"latency not measured for {ev.candidate}")]
    passed = value <= rule.max_ms
    return [Outcome(rule.rule, name, passed, value, rule.max_ms,
                    f"{rule.percentile} latency of {ev.candidate} {formatted(value, '.1f')} ms "
                    f"{'≤' if passed else '>'} {rule.max_ms:g} ms")]
