"""selftest.json (stage ``selftest``): the metamorphic relations' totals, overall and per
system (``releval.selftest.totals``), and the differential parity against each oracle."""

from __future__ import annotations

from releval.documents import Document, Fixed


class Counts(Fixed):
    """Relations that apply, their trials, reached, passed, failed, not_passed, not_applicable;
    ``ok`` None for a system where none applies."""

    relations: int
    trials: int
    reached: int
    passed: int
    failed: int
    not_passed: int
    not_applicable: int
    ok: bool | None


class Oracle(Fixed):
    """One oracle library: its version (None: not installed) and what it compared."""

    version: str | None
    measures: int
    paths: int
    cases: int
    agree: int
    differ: int


class Differential(Fixed):
    oracles: dict[str, Oracle]  # oracle -> its parity
    ok: bool


class SelfTest(Counts, Document):
    systems: dict[str, Counts]  # system -> its totals
    differential: Differential
    ok: bool
