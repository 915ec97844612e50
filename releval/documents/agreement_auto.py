"""agreement_auto.json (stage ``autojudge``): automatic labels validated against the human ones.

``configured`` False: no automatic judge (``judgments.automatic`` null), with the ``note``
saying so and every other part null. Otherwise every part is given:

- ``judge``: kind (``built-in``: the encoder of the dense system it reads, the fitted
  ``thresholds`` and each cross-fitting fold's, how it measures similarity, why it is weak;
  ``file``: the labels file and its labels naming no query or document of the data,
  ``unmatched``), name, model, the pairs it labelled of those asked.
- ``sample``: the validation queries (the judge is fitted on them; PPI's labelled sample)
  and the held-out ones (their human labels are the ground truth only), the pairs by role.
- ``labels``: label set (human, automatic, both) -> its pairs by source, the automatic share.
- ``judged``: Judged@k per system under each label set.
- ``agreement``: on the held-out pairs both judged: the confusion, exact agreement, the
  mean grade difference, κ (linear, quadratic) and α (ordinal, interval) with CIs, the
  per-query figure in brief.
- ``systems``: measure -> system -> label set -> mean on the held-out queries.
- ``ranking``: measure -> the two rankings (human vs automatic labels), τ and τ_AP with
  CIs and the flipped pairs; with fewer than 2 systems defined, ``undefined`` says why and
  those parts are null.
- ``ppi``: measure -> system -> the PPI intervals beside the human-only and automatic-only
  ones and the held-out human mean; ``undefined`` (the intervals null) where too few
  queries have a value. ``difference``: measure -> the same of the compared pair
  (candidate − baseline), the figures ``gate: ppi`` reads.
- ``holes``: the pooled pairs nobody judged that the judge filled.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from releval.documents import Document, Fixed


class Figure(Fixed):
    """A statistic and its bootstrap percentile CI over queries (None: undefined);
    ``undefined_resamples``: the resamples where it is undefined, left out."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    undefined_resamples: int


class Unmatched(Fixed):
    """A labels file's labels naming a query (a document) the data lacks, with the first of
    each (``query/doc``); ``unknown_documents`` None: a project of runs only."""

    labels: int
    unknown_queries: int
    unknown_documents: int | None
    first_unknown_query: str | None
    first_unknown_document: str | None


class Judge(Fixed):
    """The judge; the built-in one's parts and a labels file's are null for the other kind."""

    kind: Literal["built-in", "file"]
    name: str
    model: str | None
    labelled: int
    asked: int
    encoder_of: str | None = None
    thresholds: list[float] | None = None
    fold_thresholds: list[list[float]] | None = None
    similarity: str | None = None
    weak: str | None = None
    labels: str | None = None
    unmatched: Unmatched | None = None


class RolePairs(Fixed):
    """The labelled pairs by role."""

    validation: int
    heldout: int
    hole: int


class Sample(Fixed):
    validation_share: float
    seed: int
    evaluated: int
    judged: int
    validation: int
    heldout: int
    pairs: RolePairs


class LabelSet(Fixed):
    """A label set's pairs by source and what it is."""

    human: int
    automatic: int
    automatic_share: float
    describes: str


class Judged(Fixed):
    """``measure`` (Judged@k) on ``queries``: system -> label set -> value."""

    measure: str
    queries: int
    systems: dict[str, dict[str, float | None]]


class Confusion(Fixed):
    """counts[h][a]: the pairs people graded ``grades[h]`` and the judge ``grades[a]``."""

    grades: list[int]
    rows: str
    columns: str
    counts: list[list[int]]


class Kappas(Fixed):
    linear: Figure
    quadratic: Figure


class Alphas(Fixed):
    ordinal: Figure
    interval: Figure


class LowQuery(Fixed):
    """One of the queries that agree least."""

    query_id: str
    pairs: int
    exact: float
    kappa_quadratic: float


class PerQuery(Fixed):
    """The per-query ``figure``: its quartiles over the queries where it is defined, how
    many it is undefined for, and the ``lowest``."""

    figure: str
    queries: int
    undefined: int
    quartiles: list[float]
    lowest: list[LowQuery]


class Agreement(Fixed):
    """Agreement on the pairs both judged (``on``); CIs at 1 − ``ci_alpha``."""

    on: str
    max_grade: int
    pairs: int
    queries: int
    human_only_pairs: int
    automatic_only_pairs: int
    confusion: Confusion
    exact: float
    mean_difference: float
    kappa: Kappas
    alpha: Alphas
    per_query: PerQuery
    resamples: int
    ci_alpha: float
    seed: int


class Systems(Fixed):
    """measure -> system -> label set -> mean on ``queries`` (None: undefined)."""

    on: str
    queries: int
    measures: dict[str, dict[str, dict[str, float | None]]]


class Rank(Fixed):
    """A system's mean and rank (1: best) under each label set."""

    system: str
    mean_human: float
    mean_automatic: float
    rank_human: int
    rank_automatic: int


class Flip(Fixed):
    """A pair of systems whose difference (b − a) is significant under one label set only,
    or under both in opposite directions (``flip``: which)."""

    system_a: str
    system_b: str
    diff_human: float | None
    ci_low_human: float | None
    ci_high_human: float | None
    significant_human: bool
    diff_automatic: float | None
    ci_low_automatic: float | None
    ci_high_automatic: float | None
    significant_automatic: bool
    flip: str


class MeasureRanking(Fixed):
    """One measure's rankings; ``left_out``: systems undefined under a label set. With
    ``undefined`` (the reason) every part after it is null."""

    systems: int
    higher_is_better: bool
    left_out: list[str]
    undefined: str | None = None
    queries: int | None = None
    tau: Figure | None = None
    tau_ap: Figure | None = None
    rankings: list[Rank] | None = None
    flips: list[Flip] | None = None
    resamples: int | None = None
    alpha: float | None = None
    seed: int | None = None


class Ranking(Fixed):
    on: str
    labels: list[str]
    measures: dict[str, MeasureRanking]


class Interval(Fixed):
    """An estimate and its interval; ``lambda``: PPI's power-tuning weight (PPI only);
    ``clipped`` to the measure's ``bounds``."""

    estimate: float
    ci_low: float
    ci_high: float
    lambda_: float | None = Field(None, alias="lambda")
    clipped: bool = False
    bounds: list[float] | None = None


class Intervals(Fixed):
    """PPI (λ = 1 and tuned), automatic-only and human-only intervals of one mean over
    ``n_labelled`` + ``n_unlabelled`` queries; with ``undefined`` (the reason) all null."""

    undefined: str | None = None
    ppi: Interval | None = None
    ppi_tuned: Interval | None = None
    automatic_only: Interval | None = None
    human_only: Interval | None = None
    n_labelled: int | None = None
    n_unlabelled: int | None = None
    excluded_labelled: int | None = None
    excluded_unlabelled: int | None = None
    alpha: float | None = None


class SystemPPI(Intervals):
    """A system's mean; ``heldout_human``: its held-out queries' human mean."""

    heldout_human: float | None


class Difference(Intervals):
    """The mean difference ``candidate`` − ``baseline``."""

    baseline: str
    candidate: str


class PPI(Fixed):
    """What PPI's ``labelled`` and ``unlabelled`` samples are; measure -> system -> figures."""

    labelled: str
    unlabelled: str
    measures: dict[str, dict[str, SystemPPI]]


class Holes(Fixed):
    """The pairs filled (``fill_holes``), how many the judge called relevant, their queries."""

    filled: int
    fill_holes: bool
    relevant: int
    queries: int


class AgreementAuto(Document):
    configured: bool
    note: str | None = None
    judge: Judge | None = None
    sample: Sample | None = None
    labels: dict[str, LabelSet] | None = None
    judged: Judged | None = None
    agreement: Agreement | None = None
    systems: Systems | None = None
    ranking: Ranking | None = None
    ppi: PPI | None = None
    difference: dict[str, Difference] | None = None
    holes: Holes | None = None
