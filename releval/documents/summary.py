"""summary.json (stage ``evaluate``): what was evaluated, per system and measure the counts
(n, undefined, empty, ties), and where the qrels came from."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed


class Judgments(Fixed):
    evaluated: int
    invisible_left_out: int
    relevant_invisible_left_out: int


class Summary(Document):
    splits: list[str]
    queries: int
    systems: dict[str, dict[str, dict[str, Any]]]  # system -> measure -> its entry
    no_answer_left_out: int
    skipped: list[Any]
    depth: int
    route_hits: dict[str, dict[str, Any]]  # "lexical|dense" -> counts
    judgments: Judgments
    qrels: str
    unjudged: int
    recommendation: dict[str, Any] | None = None  # recommendation mode only
