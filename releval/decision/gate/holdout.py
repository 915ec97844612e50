"""Gate rule ``holdout``: the evaluated set is still held out, i.e. it has informed at most
``query_set.max_looks`` decisions (``Evidence.looks``: distinct candidates compared on it,
this one included, ``releval.decision.looks.count``)."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome
from releval.decision.looks import sentence
from releval.params.rules import HoldoutRule

FRESH = ("draw a fresh split, sample new queries from the log, or run a new judging round "
         "(each makes a new set)")


def check(rule: HoldoutRule, ev: Evidence) -> list[Outcome]:
    """Pass iff the look count ≤ ``max_looks``; n/a, saying so, while ``max_looks`` is
    unset; no look count fails."""
    count = ev.looks.get("count")
    if ev.max_looks is None:
        return [Outcome.not_applicable(rule.rule, rule.rule, "not applicable: no max_looks set "
                                       "(query_set.max_looks): the set's reuse is unbounded"
                                       + (f"; {sentence(ev.looks)}" if ev.looks else ""),
                                       count)]
    if count is None:
        return [Outcome(rule.rule, rule.rule, False, None, ev.max_looks,
                        "no look count for the evaluated set: rerun the gate stage")]
    if count > ev.max_looks:
        return [Outcome(rule.rule, rule.rule, False, count, ev.max_looks,
                        f"{sentence(ev.looks)}, more than {ev.max_looks}: it is no longer "
                        f"held out; {FRESH}")]
    return [Outcome(rule.rule, rule.rule, True, count, ev.max_looks,
                    f"{sentence(ev.looks)} ≤ {ev.max_looks}")]
