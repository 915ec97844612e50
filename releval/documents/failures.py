"""failures.json (stage ``failures``): the failure layers counted for the compared pair,
the safety rows per system and the review of the worksheet (None: none given)."""

from __future__ import annotations

from releval.documents import Document, Fixed

Number = int | float | None


class Layer(Fixed):
    layer: str
    baseline: int
    candidate: int
    difference: int


class Review(Fixed):
    """The worksheet's review (``releval.diagnosis.worksheet.ingest``)."""

    rows_in: int
    reviewed: int
    unreviewed: int
    quarantined: int
    by_reason: dict[str, int]
    not_in_file: int
    disagreement_rate: Number


class Failures(Document):
    baseline: str
    candidate: str
    k: int
    deep_k: int
    queries: int
    layers: list[str]
    chunk_map: bool
    by_layer: list[Layer]
    safety: dict[str, int]  # system -> safety rows
    review: Review | None
    not_applicable: dict[str, str] | None = None  # layer -> why (no documents)
