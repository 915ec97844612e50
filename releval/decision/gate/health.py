"""Gate rule ``health``: a system's health figures (stage ``health``) within bounds.

``METRICS`` names the figures a bound may name: the columns of data/health/health.parquet
that a bound makes sense of (``releval.decision.health`` computes them and writes why one is
undefined).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import model_validator

from releval.data import contracts as S
from releval.decision.gate.evidence import Evidence, Outcome, number
from releval.section import Section

METRICS = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
           *(f"{status}_rate" for status in S.RUN_STATUSES[1:]),
           "candidates_per_query", "empty_share", "near_duplicate_ratio",
           "embedding_cache_hit_rate", "cost_per_query", "freshness_median_days",
           "freshness_p95_days", "deletion_propagation_p95_days",
           "deletion_propagation_max_days")
Metric = Literal[METRICS]
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


class HealthRule(Section):
    """``system``'s (None: ``compare.candidate``) health figures: each ``max`` entry at most
    its bound, each ``min`` entry at least its bound (e.g. ``max: {error_rate: 0.01,
    latency_p99_ms: 100, deletion_propagation_max_days: 1}``)."""

    rule: Literal["health"] = "health"
    system: str | None = None
    max: dict[Metric, float] = {}
    min: dict[Metric, float] = {}

    @model_validator(mode="after")
    def _some_bound(self) -> HealthRule:
        if not self.max and not self.min:
            raise ValueError("a health rule needs at least one bound (max or min)")
        return self


def record(health: dict, system: str) -> dict | None:
    """``system``'s entry of health.json's ``systems`` (None when absent)."""
    return (health.get("systems") or {}).get(system)


def check(rule: HealthRule, ev: Evidence) -> list[Outcome]:
    """One outcome per bound: pass iff the figure ≤ its ``max`` (≥ its ``min``). A system
    without a health record, or a figure that is undefined (NaN / null: not measured, not
    recorded, no cost model, …), fails with the reason health.json gives for it."""
    system = rule.system or ev.candidate
    entry = record(ev.health, system)
    outcomes = []
    for bound, kind in BOUNDS.items():
        for metric, threshold in getattr(rule, bound).items():
            name = f"{rule.rule} {system} {metric} {bound}"
            if entry is None:
                outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                        f"no health record for {system} ({STAGE})"))
                continue
            value = number(entry.get(metric))
            if value is None:
                why = (entry.get("undefined") or {}).get(metric, "not in the health record")
                outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                        f"{metric} of {system} is undefined: {why}"))
                continue
            passed = kind.holds(value, threshold)
            outcomes.append(Outcome(rule.rule, name, passed, value, threshold,
                                    f"{metric} of {system} {value:.4g} "
                                    f"{kind.signs[0] if passed else kind.signs[1]} "
                                    f"{threshold:g}"))
    return outcomes
