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


class SplitSystem(Fixed):
    """One system under both protocols: measure -> value (``n``: the users scored), the
    inflation random − forward and the ratio random / forward (None where forward is 0)."""

    route: str
    forward: dict[str, float | int | None]
    random: dict[str, float | int | None]
    inflation: dict[str, float | None]
    ratio: dict[str, float | None]


class RandomSplit(Fixed):
    """The forward-in-time against a random split (``releval.retrieval.leakage.random_split``):
    the protocol, the cut and the issue time t2 + h, the interactions before it, those held
    out at random and their share, the test queries and each system's figures."""

    protocol: str
    cut: str
    issued_at: str
    horizon_days: int
    seed: int
    interactions: int
    held_out: int
    share: float | None
    queries: int
    systems: dict[str, SplitSystem]


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
    random_split: RandomSplit | None = None  # recommendation mode, recommend.random_split
