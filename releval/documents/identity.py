"""identity.json (stage ``pool``): which pool the judgments belong to (its id from seed,
depth and the corpus digest), the pooled systems, pairs and rounds, and the guideline."""

from __future__ import annotations

from releval.documents import Document, Fixed


class Round(Fixed):
    round: int
    systems: list[str]
    pairs: int


class Identity(Document):
    pool_id: str
    seed: int
    depth: int
    corpus_digest: str
    systems: list[str]
    pairs: int
    rounds: list[Round]
    guideline: str | None = None
    note: str | None = None  # pool.systems empty: nothing pooled
