"""split_report.json (stage ``split``): the method, rule and cuts, the counts per split and
per split × tag, the leakage between test and train (``releval.data.split.split_report``),
the judgments pointing nowhere, the evaluated query set (``releval.data.query_set.describe``)
and, in recommendation mode, the forward against the random split
(``releval.retrieval.leakage.random_split``)."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed

Number = int | float | None


class SharedSource(Fixed):
    source_id: str
    train_queries: int
    test_queries: int


class SharedSources(Fixed):
    count: int
    test_queries_affected: int
    sources: list[SharedSource]


class DuplicateText(Fixed):
    query_id: str
    text: str
    train_query_ids: list[str]


class DuplicateTexts(Fixed):
    count: int
    examples: list[DuplicateText]


class Leakage(Fixed):
    shared_sources: SharedSources
    duplicate_texts: DuplicateTexts


class SourceShare(Fixed):
    """One sampling source of the evaluated queries."""

    count: int
    share: Number
    weight: Number
    weight_share: Number


class Category(Fixed):
    """One risk category of the evaluated queries, its minimum and the rules it underwrites."""

    label: str
    count: int
    from_text: int
    share: Number
    weight_share: Number
    minimum: int | None
    covered: bool | None
    underwrites: list[str]


class QuerySet(Fixed):
    """The evaluated query set; ``minimums`` "auto": derived at the gate."""

    splits: list[str]
    queries: int
    weight: Number
    untagged: int
    source_given: bool
    note: str | None
    sources: dict[str, SourceShare]  # sampling source -> its share
    categories: dict[str, Category]  # category -> its coverage
    undercovered: list[str]
    minimums: str | None = None


class SplitReport(Document):
    method: str
    temporal: bool
    rule: str | None
    cuts: list[str] | None
    counts: dict[str, int]  # split -> queries
    counts_by_tag: dict[str, dict[str, int]]  # split -> tag -> queries
    leakage: Leakage
    note: str | None = None  # a given split
    qrels_pointing_nowhere: dict[str, Any] | None = None
    query_set: QuerySet | None = None
    random_split: dict[str, Any] | None = None  # recommendation mode
