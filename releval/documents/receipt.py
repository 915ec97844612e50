"""receipt.json and reproduced.json (the flow, ``releval.project.receipt``): what a run was
made of (``receipt``: code, params, seeds, packages, routes, the digests of its inputs and
outputs, the self-test, metrics, figures, looks and the work done), its digest (``sha256``)
and how it ran (``run``: times, executor, headline, over-time comparison, the outputs kept
apart). Receipts of older schemas lack some parts: absent ones are None.

The parts the run ledger shows (``releval.documents.ledger``) are typed: the live window's
``figures`` (``Figures``: ``releval.decision.over_time.figures``), the pinned ``fixture``
(fixture.json as written: ``FixtureSummary``), the ``looks`` taken (``Taken``:
``releval.decision.looks.taken``; None: written before looks were recorded), and of ``run``
the ``schedule`` (``flows.schedule``), the ``headline`` (``run_receipt._headline``) and
``over_time`` (``OverTime``: ``releval.project.history.over_time``). The writer keeps writing
dicts; every key it emits is a field, a key that some receipts lack has the default its
readers assume. The other parts stay dicts (``Part``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from releval.documents import Document, Fixed
from releval.documents.fixture import Figure, FixtureSummary

Part = dict[str, Any] | None
Number = int | float | None  # as written: an int stays an int


class SliceRow(Fixed):
    """One slice of a figure (``releval.decision.aggregation.slice_rows``): its size, traffic
    weight W_i and traffic-weighted mean m_i (None: no defined value)."""

    slice: Any
    n: int
    n_undefined: int
    weight: int | float
    mean: Number


class SlicedFigure(Figure):
    """A figure of the live window: the fixture's figure (mean, CI, n, n_undefined) and its
    per-slice table, which a later run's decomposition reads."""

    slices: list[SliceRow]


class Figures(Fixed):
    """The run's figures on its live window (``releval.decision.over_time.figures``): the
    slicing dimension (``compare.strata``), the CI's alpha, system -> measure -> figure."""

    dimension: str
    alpha: int | float
    systems: dict[str, dict[str, SlicedFigure]]


class Taken(Fixed):
    """One look the run took (``releval.decision.looks.taken``)."""

    candidate: str
    set_: str = Field(alias="set")
    split: str
    system: str


class Schedule(Fixed):
    """A scheduled run's deployment, flow run and window of params values
    (``flows.schedule.scheduled``)."""

    deployment: str | None
    flow_run: str | None
    flow_run_id: str | None
    scheduled_at: str | None
    window: dict[str, str]


class Headline(Fixed):
    """The run's headline (``releval.project.run_receipt._headline``): the first compared
    measure, each system's value of it, the gate's pair, decision and failed rules; a key an
    older receipt lacks has the default its readers assume (``controlled``: True)."""

    measure: str | None = None
    systems: dict[str, Number] = {}
    baseline: str | None = None
    candidate: str | None = None
    decision: str | None = None
    failed: list[str] = []
    controlled: bool = True


class SliceMove(Fixed):
    """One slice of an over-time decomposition (``releval.decision.aggregation.SliceChange``)."""

    slice: Any
    n_before: int
    n_after: int
    n_undefined_before: int
    n_undefined_after: int
    share_before: int | float
    share_after: int | float
    mean_before: Number
    mean_after: Number
    rate: int | float
    mix: int | float


class Moved(Fixed):
    """One system and measure of an over-time comparison
    (``releval.decision.over_time.compare_figures``): the traffic-weighted aggregate before
    and after, Δ = rate + mix, the equal-slice aggregates, the composition flag, the slices
    and the plain means (``macro_before``/``macro_after``)."""

    before: int | float
    after: int | float
    delta: int | float
    rate: int | float
    mix: int | float
    equal_slice_before: int | float
    equal_slice_after: int | float
    mix_shift: bool
    slices: list[SliceMove]
    controlled: bool
    note: str
    macro_before: Number
    macro_after: Number


class Previous(Fixed):
    """The run an over-time comparison is set against: its sha256[:12] and finish time."""

    sha256: str
    finished_at: str | None


class Attribution(Fixed):
    """Why the mean of one system and measure moved (``releval.project.history.over_time``):
    the change on the live window and on the pinned fixture (None: not both runs), the
    verdict (system, drift, stable, unattributed, n/a) and its reason."""

    live: Number
    fixture: Number
    verdict: str
    why: str


class OverTime(Fixed):
    """The run against the previous run of its lineage (``releval.project.history.over_time``):
    never controlled; ``comparable`` with ``systems`` (system -> measure -> ``Moved``),
    ``dimension`` and ``note``, else ``why``; ``previous`` (None: the first run of its
    lineage) and ``attribution`` (system -> measure), where there was a run before."""

    controlled: bool
    comparable: bool
    previous: Previous | None = None
    why: str | None = None
    note: str | None = None
    dimension: str | None = None
    systems: dict[str, dict[str, Moved]] = {}
    attribution: dict[str, dict[str, Attribution]] = {}


class RouteRecord(BaseModel):
    """One system's route as the run used it: the route's own settings (keys per route, kept
    as given) and, for an encoder, the digest of the model's files."""

    model_config = ConfigDict(extra="allow", frozen=True)
    route: str
    model_digest: str | None = None


class Body(Fixed):
    """The digested part: every key is covered by ``sha256``."""

    schema_: str | None = Field(None, alias="schema")
    code: Part = None
    params: Part = None
    seeds: Part = None
    tie_policy: str | None = None
    packages: Part = None
    routes: dict[str, RouteRecord] | None = None  # system -> its route
    metric_definitions_sha256: str | None = None
    inputs: Part = None
    outputs: Part = None
    selftest: Part = None
    metrics: Part = None
    figures: Figures | None = None
    fixture: FixtureSummary | None = None
    results: Part = None
    looks: list[Taken] | None = None  # None: written before looks were recorded
    work: Part = None


class Run(Fixed):
    """How the run went: not digested."""

    started_at: str | None = None
    finished_at: str | None = None
    schedule: Schedule | None = None
    executor: Part = None
    headline: Headline | None = None
    inputs_lock: Part = None
    looks_file: Part = None
    over_time: OverTime | None = None
    apart: Part = None


class Receipt(Document):
    receipt: Body
    sha256: str
    run: Run = Run()
