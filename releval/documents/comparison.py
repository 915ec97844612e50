"""comparison.json (stage ``compare``): the paired comparison of the primary pair, its
over-time figures and the ``compare.also`` comparisons (each the same shape, without
``figures`` and ``also``)."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed

Number = int | float | None


class Paired(Fixed):
    """One paired row (measure × slice) of ``releval.decision.compare``."""

    measure: str
    n: int
    excluded: int
    mean_baseline: Number
    mean_candidate: Number
    mean_diff: Number
    median_diff: Number
    wins: int
    ties: int
    losses: int
    ci_low: Number
    ci_high: Number
    p_value: Number
    min_effect: Number
    verdict: str
    resamples: int
    alpha: float
    seed: int
    unit: str
    units: int
    p_holm: Number
    slice: str
    # the test behind p_value (releval.decision.significance) and the effect sizes beside Δ
    test: str = "randomization"
    effect_size: Number = None
    share_improved: Number = None
    # the comparison's power (stage compare: releval.decision.planning.detectability)
    sd: Number = None
    power: Number = None
    mde: Number = None
    mde_simulated: Number = None
    needed_queries: int | None = None
    needed_queries_low: int | None = None
    needed_queries_high: int | None = None


class Seed(Fixed):
    """One training seed's paired comparison against the baseline (``releval.decision.seeds``)."""

    seed: int
    n: int
    mean_candidate: Number
    mean_diff: Number
    ci_low: Number
    ci_high: Number


class Training(Fixed):
    """One measure's training variance over the candidate's seeds
    (``releval.decision.seeds.training_variance``)."""

    measure: str
    n_seeds: int
    seeds: list[Seed]
    n: int
    mean_baseline: Number
    mean_candidate: Number
    mean_diff: Number
    ci_low: Number
    ci_high: Number
    training_sd: Number
    training_low: Number
    training_high: Number
    seed_min: Number
    seed_max: Number
    resamples: int
    alpha: float
    seed: int


class Held(Fixed):
    """One condition a kind of change holds fixed, with both sides' values."""

    condition: str
    what: str
    baseline: Any
    candidate: Any
    same: bool


class Inspection(Fixed):
    """One inspection of a kind of change (``releval.decision.inspections``): its formula in
    words, its table (``rows``: one record per row, columns per inspection, None where
    undefined), the systems whose measured latency the report shows (``measured``), the
    slice tests it ran (``tested``) and Δ = candidate − baseline where it has one."""

    definition: str
    rows: list[dict[str, Any]]
    measured: list[str] = []
    tested: int | None = None
    delta: Number = None

    @property
    def has_delta(self) -> bool:
        return "delta" in self.model_fields_set


class Change(Fixed):
    """The kind of change: the conditions it holds fixed and its inspections (by name)."""

    kind: str | None
    label: str
    holds_fixed: list[Held]
    inspections: dict[str, Inspection]


class QuerySet(Fixed):
    """The judged queries the means run over (``releval.decision.missing.chosen``): the
    choice and its rule, judged and compared counts, each run's missing queries (``known``:
    whether its run says which it missed), whether none is missing, and one line."""

    choice: str
    rule: str
    judged: int
    compared: int
    missing: dict[str, int]
    missing_either: int
    left_out: int
    complete: bool
    known: dict[str, bool]
    label: str


class Aggregates(Fixed):
    """One system × measure's aggregates (``releval.decision.aggregation.aggregates``)."""

    n: int
    n_undefined: int
    n_slices: int
    macro: Number
    traffic_weighted: Number
    equal_slice: Number
    micro: Number


class SliceChange(Fixed):
    """One slice of a decomposition (``releval.decision.aggregation.SliceChange``)."""

    slice: Any
    n_before: int
    n_after: int
    n_undefined_before: int
    n_undefined_after: int
    share_before: float
    share_after: float
    mean_before: Number
    mean_after: Number
    rate: float
    mix: float


class Composition(Fixed):
    """One measure's rate/mix decomposition (``releval.decision.aggregation.Decomposition``):
    Δ = after − before = rate + mix."""

    before: Number
    after: Number
    delta: Number
    rate: Number
    mix: Number
    equal_slice_before: Number
    equal_slice_after: Number
    mix_shift: bool
    slices: list[SliceChange]
    controlled: bool
    note: str


class HorizonRow(Fixed):
    """The paired comparison of one measure at one further horizon
    (``releval.decision.horizons``)."""

    horizon_days: int
    measure: str
    n: int
    baseline: Number
    candidate: Number
    delta: Number
    ci_low: Number
    ci_high: Number
    p_holm: Number
    verdict: str


class Novelty(Fixed):
    """One measure's gain at the shortest and the longest horizon, and the novelty flag."""

    measure: str
    short_days: int
    long_days: int
    delta_short: Number
    ci_short: list[Number]
    delta_long: Number
    ci_long: list[Number]
    gain_short: Number
    gain_long: Number
    shrink: Number
    min_effect: float
    novelty: bool | None


class Horizons(Fixed):
    """The primary pair at each of ``recommend.horizons_days``."""

    days: list[int]
    rows: list[HorizonRow]
    novelty: list[Novelty]


class FamilyPair(Fixed):
    """One pair of a family (``releval.decision.family``)."""

    baseline: str
    candidate: str
    n: int
    mean_baseline: Number
    mean_candidate: Number
    mean_diff: Number
    ci_low: Number
    ci_high: Number
    p_value: Number
    effect_size: Number
    share_improved: Number
    p_adjusted: Number
    verdict: str
    differ: bool


class Standing(Fixed):
    """One system on a family's leaderboard: its mean, n, letter group and rank."""

    system: str
    mean: Number
    n: int
    group: str
    rank: int
    ci_low: Number
    ci_high: Number


class FamilyMeasure(Fixed):
    """One measure's family comparison (``releval.decision.family.FamilyResult``)."""

    measure: str
    family: str
    correction: str
    test: str
    alpha: float
    resamples: int
    seed: int
    n: int
    left_out: int
    leaderboard: list[Standing]
    pairs: list[FamilyPair]


class Family(Fixed):
    """``compare.systems`` in one decision: the systems, the family, correction and test, the
    query set over all of them and one ``FamilyMeasure`` per compared measure."""

    systems: list[str]
    left_out_systems: list[str]
    family: str
    correction: str
    test: str
    query_set: QuerySet
    measures: list[FamilyMeasure]


class Comparison(Document):
    baseline: str
    candidate: str
    controlled: bool
    differences: list[Any]
    conditions: dict[str, dict[str, Any]]  # system -> condition -> its value
    measures: list[str]
    note: str
    unit: str | None
    strata: str
    paired: list[Paired]
    unpaired: list[dict[str, Any]]
    aggregates: dict[str, dict[str, Aggregates]]  # system -> measure -> aggregates
    composition: dict[str, Composition]  # measure -> rate/mix decomposition
    change: Change
    training: list[Training]
    figures: dict[str, Any] | None = None  # the primary comparison only
    also: list[Comparison] | None = None  # the primary comparison only
    horizons: Horizons | None = None  # the primary comparison, recommend.horizons_days only
    # the judged queries the means run over (releval.decision.missing.chosen)
    query_set: QuerySet | None = None
    # compare.systems as one family per measure (stage compare: family_block), primary only
    family: Family | None = None

    def row(self, measure: str) -> Paired | None:
        """The paired row of ``measure`` over every query, None when there is none."""
        return next((r for r in self.paired if r.measure == measure), None)

    def of(self, candidate: str) -> Comparison | None:
        """The comparison (this one, or one of ``also``) whose candidate is ``candidate``."""
        return next((c for c in self.comparisons if c.candidate == candidate), None)

    @property
    def comparisons(self) -> list[Comparison]:
        """This comparison, then each ``compare.also`` one."""
        return [self, *(self.also or [])]
