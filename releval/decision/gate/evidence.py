"""What the gate's rules read (``Evidence``) and what each check yields (``Outcome``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from releval.documents.comparison import Comparison
from releval.documents.health import Health, SystemHealth
from releval.documents.offpolicy import OffPolicyDoc
from releval.documents.run_stats import Latency
from releval.documents.summary import Entry
from releval.errors import InputError


@dataclass(frozen=True)
class Evidence:
    """Everything the rules read. ``comparison``: comparison.json (``Comparison``; None:
    none, which is not controlled); ``slices``: slices.parquet; ``safety``: safety.json;
    ``metrics``: system -> measure -> mean (or None); ``latency``: system -> its
    run_stats.json's ``latency_ms`` (``Latency``: p50 / p95 / p99 in ms, None = not
    measured); ``health``: data/health/health.json (``Health``: its ``systems``, system ->
    figure -> value, and why one is ``undefined``; None: no health report); ``summary``:
    system -> measure -> ``Entry`` (the ``systems`` of evaluate/summary.json: a system-level
    value or a mean, applicable or what is ``missing``); ``better``: measure -> "higher" |
    "lower", the direction in which the measure improves (the measure registry's);
    ``query_set``: split_report.json's ``query_set``
    (``releval.data.query_set.describe``); ``looks``: the evaluated set's look count
    (``releval.decision.looks.count``; empty: not counted) and ``max_looks``, its bound
    (``query_set.max_looks``, None: unbounded); ``basis``: measure -> how its overall paired
    interval was made where it is not the paired bootstrap (``gate.intervals``: PPI);
    ``offpolicy``: data/offpolicy/offpolicy.json (``OffPolicyDoc``: the candidate policy's
    estimates from the logged feedback; None: not read)."""

    baseline: str
    candidate: str
    comparison: Comparison | None = None
    slices: pd.DataFrame = field(default_factory=pd.DataFrame)
    safety: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    latency: dict[str, Latency] = field(default_factory=dict)
    summary: dict[str, dict[str, Entry]] = field(default_factory=dict)
    better: dict = field(default_factory=dict)
    health: Health | None = None
    query_set: dict = field(default_factory=dict)
    looks: dict = field(default_factory=dict)
    max_looks: int | None = None
    offpolicy: OffPolicyDoc | None = None
    basis: dict[str, str] = field(default_factory=dict)

    @property
    def controlled(self) -> bool:
        """Only a comparison that says ``controlled: true`` counts as controlled."""
        return self.comparison is not None and self.comparison.controlled

    @property
    def differences(self) -> list:
        """What differs between the compared systems (none without a comparison)."""
        return [] if self.comparison is None else self.comparison.differences

    @property
    def query_set_block(self) -> dict | None:
        """The comparison's query set as written (None: no comparison, or none recorded)."""
        block = None if self.comparison is None else self.comparison.query_set
        return None if block is None else block.model_dump()

    @property
    def missing_note(self) -> str:
        """The comparison's query set in words where a run misses judged queries (scored 0,
        or left out), else ""."""
        block = None if self.comparison is None else self.comparison.query_set
        if not block or block.complete:
            return ""
        return f"query set {block.choice}: {block.label}"

    def entry(self, system: str, measure: str) -> Entry | None:
        """``system``'s summary entry of ``measure`` (None when not evaluated)."""
        return self.summary.get(system, {}).get(measure)

    def health_of(self, system: str) -> SystemHealth | None:
        """``system``'s health record (its figures, ``undefined`` and ``not_applicable``:
        figure -> why); None when absent."""
        return None if self.health is None else self.health.systems.get(system)


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
    measures: tuple[str, ...] = ()  # the rule's measures, its primary first (gate.outcomes)

    @classmethod
    def not_applicable(cls, rule: str, name: str, reason: str,
                       value: float | int | None = None) -> Outcome:
        """The outcome of a rule with nothing in the data to check: it passes, n/a."""
        return cls(rule, name, True, value, None, reason, applicable=False)

    def as_dict(self) -> dict:
        """The outcome as decision.json writes it (``measures`` only where the rule names
        one)."""
        out = dataclasses.asdict(self)
        out["measures"] = list(self.measures)
        return out if self.measures else {k: v for k, v in out.items() if k != "measures"}


def check_sides(evidence: Evidence) -> None:
    """InputError when the comparison names another baseline or candidate than the evidence
    (a stale comparison); a side it does not name passes."""
    for side in ("baseline", "candidate"):
        name = getattr(evidence, side)
        if evidence.comparison is None:
            return
        found = getattr(evidence.comparison, side)
        if found != name:
            raise InputError(f"the comparison's {side} is {found!r} but compare.{side} is "
                             f"{name!r}; rerun compare", "comparison")


def not_applicable(entry: Entry) -> str:
    """What the data lacks for an evaluation summary entry marked not applicable (its
    ``missing``, written by the evaluation from the measure registry)."""
    return entry.missing or "the evaluation lacks what it needs"


def measure_value(ev: Evidence, system: str, measure: str) -> tuple[float | None, str | None]:
    """A system's summary value of ``measure``, or None and why there is none: not
    evaluated, not applicable (what is missing) or undefined (with its counts)."""
    entry = ev.entry(system, measure)
    if entry is None:
        return None, f"no {measure} for {system} in the evaluation summary"
    if not entry.applicable:
        return None, f"{measure} is not applicable to {system}: {not_applicable(entry)}"
    value = number(entry.value)
    if value is None:
        return None, (f"{measure} of {system} is undefined (n={entry.n}, "
                      f"undefined={entry.undefined})")
    return value, None


def latency_of(ev: Evidence, system: str, percentile: str) -> float | None:
    """``system``'s latency percentile in ms; None when not measured."""
    measured = ev.latency.get(system)
    return None if measured is None else number(getattr(measured, percentile))


def number(value: Any) -> float | None:
    """A finite float, or None for null / NaN."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def detectable(row: Any) -> str:
    """What a comparison row (a ``Paired`` or a slices row) could have detected, for a
    reason: "; MDE m > min_effect e: about N queries would be needed" (or "≤ min_effect e");
    "" when the row has no MDE (an older comparison, or fewer than 2 units)."""
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name, None)
    mde, effect = number(get("mde")), number(get("min_effect"))
    needed = number(get("needed_queries"))
    if mde is None or effect is None:
        return ""
    if mde <= effect:
        return f"; MDE {mde:.3f} ≤ min_effect {effect:g}"
    more = f": about {int(needed):,} queries would be needed" if needed is not None else ""
    return f"; MDE {mde:.3f} > min_effect {effect:g}{more}"
