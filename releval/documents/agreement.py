"""agreement.json (stage ``judgments``): the judges' agreement
(``releval.judging.agreement.agreement``); the dataset's own qrels: only a ``note``."""

from __future__ import annotations

from releval.documents import Document, Fixed

Number = int | float | None


class Pair(Fixed):
    annotator_a: str
    annotator_b: str
    n: int
    kappa: Number


class Confusion(Fixed):
    grades: list[int]
    counts: list[list[int]]


class Agreement(Document):
    note: str | None = None
    max_grade: int | None = None
    judges: int | None = None
    items: int | None = None
    items_with_2_or_more_judges: int | None = None
    pairs: list[Pair] = []
    mean_pairwise_kappa_weighted: Number = None
    krippendorff_alpha_interval: Number = None
    confusion: Confusion | None = None
    low: Number = None
    low_agreement: list[Pair] = []
