"""looks.json (``releval.project.run_receipt.write_looks``): every distinct look at an
evaluated set (``releval.decision.looks``) and the runs whose looks were not recorded."""

from __future__ import annotations

from pydantic import Field

from releval.documents import Document, Fixed


class Look(Fixed):
    candidate: str
    first_seen: str
    set_: str = Field(alias="set")
    split: str
    system: str


class LooksFile(Document):
    looks: list[Look]
    unrecorded: int
