"""What the gate's rules read (``Evidence``) and what each check yields (``Outcome``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from releval.errors import InputError


@dataclass(frozen=True)
class Evidence:
    """Everything the rules read. ``comparison``: comparison.json; ``slices``:
    slices.parquet; ``safety``: safety.json; ``metrics``: system -> measure -> mean (or
    None); ``latency``: system -> {"p50", "p95", "p99"} in ms (None = not measured);
    ``health``: data/health/health.json (``systems``: system -> figure -> value, and why one
    is ``undefined``); ``summary``: system -> measure -> {value, n, undefined, applicable,
    level, …} (the "systems" of evaluate/summary.json: a system-level value or a mean; an
    entry without ``applicable`` is applicable); ``better``: measure -> "higher" | "lower",
    the direction in which the measure improves (the measure registry's); ``query_set``:
    split_report.json's ``query_set`` (``releval.data.query_set.describe``)."""

    baseline: str
    candidate: str
    comparison: dict = field(default_factory=dict)
    slices: pd.DataFrame = field(default_factory=pd.DataFrame)
    safety: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    latency: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    better: dict = field(default_factory=dict)
    health: dict = field(default_factory=dict)
    query_set: dict = field(default_factory=dict)

    @property
    def controlled(self) -> bool:
        """Only an explicit ``controlled: true`` counts as controlled."""
        return self.comparison.get("controlled") is True


@dataclass(frozen=True)
class Outcome:
    """One checked condition: ``passed`` iff ``value`` meets ``threshold`` (per the rule);
    ``applicable`` False: the data has nothing for it to check (it passes, listed apart as
    n/a, with the reason)."""

    rule: str
    name: str
    passed: bool
    value: float | int | None
    threshold: float | int | None
    reason: str
    applicable: bool = True

    @classmethod
    def not_applicable(cls, rule: str, name: str, reason: str,
                       value: float | int | None = None) -> Outcome:
        """The outcome of a rule with nothing in the data to check: it passes, n/a."""
        return cls(rule, name, True, value, None, reason, applicable=False)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def check_sides(evidence: Evidence) -> None:
    """InputError when the comparison names another baseline or candidate than the evidence
    (a stale comparison); a side it does not name passes."""
    for side in ("baseline", "candidate"):
        name = getattr(evidence, side)
        found = evidence.comparison.get(side, name)
        if found != name:
            raise InputError(f"the comparison's {side} is {found!r} but compare.{side} is "
                             f"{name!r}; rerun compare", "comparison")


def not_applicable(entry: dict) -> str:
    """What the data lacks for an evaluation summary entry marked not applicable (its
    ``missing``, written by the evaluation from the measure registry)."""
    return entry.get("missing") or "the evaluation lacks what it needs"


def number(value: Any) -> float | None:
    """A finite float, or None for null / NaN."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value
