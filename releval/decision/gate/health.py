"""Gate rule ``health``: a system's health figures (stage ``health``) within bounds.

The figures a bound may name are ``releval.params.rules.HEALTH_METRICS``: the columns of
data/health/health.parquet that a bound makes sense of (``releval.decision.health`` computes
them and writes why one is undefined).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from releval.decision.gate.evidence import Evidence, Outcome, number
from releval.numbers import formatted
from releval.params.rules import HealthRule

STAGE = "stage health, data/health/health.json"


@dataclass(frozen=True)
class Bound:
    """A kind of bound: ``holds(value, threshold)``, its signs when it holds and when not, and
    ``headroom(value, threshold)``: how far the value is inside the bound (< 0: outside)."""

    holds: Callable[[float, float], bool]
    signs: tuple[str, str]
    headroom: Callable[[float, float], float]


BOUNDS: dict[str, Bound] = {
    "max": Bound(operator.le, ("≤", ">"), lambda value, threshold: threshold - value),
    "min": Bound(operator.ge, ("≥", "<"), lambda value, threshold: value - threshold),
}


def check(rule: HealthRule, ev: Evidence) -> list[Outcome]:
    """One outcome per bound: pass iff the figure ≤ its ``max`` (≥ its ``min``). A system
    without a health record, or a figure that is undefined (NaN / null: not measured, not
    recorded, no cost model, …), fails with the reason health.json gives for it."""
    system = rule.system or ev.candidate
    entry = ev.health_of(system)
    outcomes = []
    for bound, kind in BOUNDS.items():
        for metric, threshold in getattr(rule, bound).items():
            name = f"{rule.rule} {system} {metric} {bound}"
            if entry is None:
                outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                        f"no health record for {system} ({STAGE})"))
                continue
            value = number(entry.figure(metric))
            na = entry.not_applicable.get(metric)
            if value is None and na:
                outcomes.append(Outcome.not_applicable(rule.rule, name,
                                                       f"{metric} of {system}: {na}"))
                continue
            if value is None:
                why = entry.undefined.get(metric, "not in the health record")
                outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                        f"{metric} of {system} is undefined: {why}"))
                continue
            passed = kind.holds(value, threshold)
            outcomes.append(Outcome(rule.rule, name, passed, value, threshold,
                                    f"{metric} of {system} {formatted(value, '.4g')} "
                                    f"{kind.signs[0] if passed else kind.signs[1]} "
                                    f"{threshold:g}"))
    return outcomes
