"""The run ledger's rows (reports/runs/, as ``releval.project.history.entries`` reads it): one
row per file, oldest first, ``run`` its place in the ledger (1 the oldest, unreadable files
counted too). Not a JSON artifact: rows are built from the receipts (``Receipt``), never
written.

- ``Entry``, a receipt it can read: file, sha256 (its first 12 characters), finished_at,
  schedule (a scheduled run's, else None), commit (10 characters), dirty, queries (evaluated),
  inputs (path -> md5), the headline (measure, baseline, candidate, values: system -> the
  headline measure's value, decision, failed rules, controlled), the receipt's typed parts
  as it keeps them (figures, fixture, over_time, looks: None for a receipt written before
  looks were recorded, unknown) and its ``Lineage``;
- ``Unreadable``, a file it sets aside (not JSON, edited, of another schema, not of the
  receipt's shape): run, file and the problem, which says why.

``Row`` is either; rows are frozen and read by attribute. ``plain`` is a row as JSON-ready
data (``releval history --json``): its fields in this order, the receipt's parts with their
keys sorted as the receipt file keeps them.
"""

from __future__ import annotations

from typing import Any

from releval.documents import Fixed
from releval.documents.fixture import FixtureSummary
from releval.documents.receipt import Figures, Number, OverTime, Schedule, Taken


class Lineage(Fixed):
    """What makes two runs' figures comparable (``releval.project.history.lineage``): mode
    (retrieval | recommendation | ?), data source, compared measures, ``key`` (their digest)
    and ``derived``: what the receipt lacked and how it was made up instead."""

    mode: str
    data: str
    measures: list[str]
    key: str
    derived: list[str]


class Unreadable(Fixed):
    """A ledger file set aside: its place, name and why."""

    run: int
    file: str
    problem: str

    def plain(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Entry(Fixed):
    """A kept run (module docstring)."""

    run: int
    file: str
    sha256: str
    finished_at: str | None
    schedule: Schedule | None
    commit: str
    dirty: bool | None
    queries: int
    inputs: dict[str, str | None]
    measure: str | None
    baseline: str | None
    candidate: str | None
    values: dict[str, Number]
    decision: str | None
    failed: list[str]
    controlled: bool
    figures: Figures | None
    fixture: FixtureSummary | None
    over_time: OverTime | None
    lineage: Lineage
    looks: list[Taken] | None

    def plain(self) -> dict[str, Any]:
        out = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return {k: v if k == "lineage" else _sorted(v) for k, v in out.items()}


Row = Entry | Unreadable


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
