"""slices.json (stage ``slices``): the slice family tested (``releval.decision.slices``) and
the slices whose verdict changed."""

from __future__ import annotations

from releval.documents import Document, Fixed

Number = int | float | None


class Changed(Fixed):
    dimension: str
    slice: str
    measure: str
    verdict: str
    n: int
    mean_diff: Number
    p_holm: Number


class SlicesSummary(Document):
    baseline: str
    candidate: str
    measures: list[str]
    alpha: float
    unit: str | None
    family: int
    slices: int
    tested: int
    too_small: int
    changed: list[Changed]
