"""ingest.json (stage ``judgments``): the judges' rows in, accepted and quarantined (by
reason, ``releval.judging.ingest``), the hard-negative marks and where the qrels came from."""

from __future__ import annotations

from releval.documents import Document, Fixed


class HardNegatives(Fixed):
    marked: int
    kept: int
    added: int
    overruled: int


class Ingest(Document):
    rows_in: int
    accepted_new: int
    already_accepted: int
    quarantined: int
    hard_negatives: HardNegatives
    source: str
    qrels: str
    by_reason: dict[str, int] = {}  # reason -> rows (judges' files only)
