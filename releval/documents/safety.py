"""safety.json (stage ``safety``): each system's forbidden documents by reason and rank band,
the no-answer refusals (``releval.decision.no_answer``), the systems skipped (no run)."""

from __future__ import annotations

from releval.documents import Document, Fixed

Number = int | float | None


class Violations(Fixed):
    routes: list[str]  # the system and every route it is built from
    violations: int
    by_reason: dict[str, int]  # reason -> violations
    queries_affected: int
    below_top_k: int
    own: int


class Refusals(Fixed):
    no_answer_queries: int
    correct_refusals: int
    correct_refusal_rate: Number
    answerable_queries: int
    no_result: int
    no_result_rate: Number
    threshold: Number


class Safety(Document):
    top_k: int
    systems: dict[str, Violations]
    no_answer: dict[str, Refusals]
    skipped: list[str]
    not_applicable: str | None = None  # no documents and no must_not_return pairs
