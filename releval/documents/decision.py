"""decision.json (stage ``gate``): every rule's outcome, the verdict, the rollback
thresholds and the evaluated set's look count (``releval.decision.gate.decide``)."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed
from releval.documents.comparison import QuerySet

Number = int | float | None


class Rule(Fixed):
    """One outcome (``releval.decision.gate.evidence.Outcome``)."""

    rule: str
    name: str
    passed: bool
    value: Number
    threshold: Number
    reason: str
    applicable: bool = True
    measures: list[str] = []  # the rule's measures, its primary first (absent: none named)


class Rollback(Fixed):
    """One rollback threshold with the candidate's offline value."""

    metric: str
    bound: str
    threshold: Number
    of: str | None
    offline: Number
    source: str | None
    headroom: Number


class Looks(Fixed):
    """The evaluated set's reuse (``releval.decision.looks.count``)."""

    split: str
    digest: str
    candidate: str
    count: int
    since: str
    unrecorded: int


class Decision(Document):
    passed: bool
    baseline: str
    candidate: str
    controlled: bool
    differences: list[Any]
    rules: list[Rule]
    failed: list[str]
    not_applicable: list[str]
    note: str | None
    rollback: list[Rollback]
    looks: Looks | None = None  # absent from decisions written before looks were counted
    intervals: str | None = None  # judgments.automatic.gate ppi: which rows read PPI
    query_set: QuerySet | None = None  # the comparison's (releval.decision.missing)

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"
