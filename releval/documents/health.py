"""health.json (stage ``health``): every system's health figures (null where undefined, with
the reason in ``undefined``; a figure the data cannot have in ``not_applicable``), the
figures' definitions and the qrels they were read against. The figures are
``releval.decision.health``'s ``COLUMNS``; ``figure(name)`` reads one by its name (a gate
rule's metric)."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed


class Qrels(Fixed):
    path: str
    sha256: str


class NearDuplicates(Fixed):
    """Window entries, those duplicating a higher-ranked one (by source, by text, either)."""

    entries: int
    duplicates: int
    same_source: int
    same_text: int


class Revisions(Fixed):
    """What identifies a system's index, model and analyzer (``releval.decision.health
    .revisions``): the route's settings (``params``, keys per route), the dense model and
    index kind, a team run's file digest, a fused system's frozen fusion."""

    route: str | None
    params: dict[str, Any] | None
    model: str | None
    index: str | None
    run_sha256: str | None
    fusion: dict[str, Any] | None


class SystemHealth(Fixed):
    """One system's figures (``releval.decision.health.DEFINITIONS``), None where undefined."""

    system: str
    route: str | None
    n_queries: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    latency_p99_ms: float | None
    status_recorded: int
    error_rate: float | None
    timeout_rate: float | None
    partial_rate: float | None
    fallback_rate: float | None
    candidates_per_query: float | None
    empty_share: float | None
    near_duplicate_ratio: float | None
    embedding_cache_hit_rate: float | None
    cost_per_query: float | None
    cost_unit: str | None
    freshness_eligible: int
    freshness_appeared: int
    freshness_median_days: float | None
    freshness_p95_days: float | None
    deleted_eligible: int
    deleted_still_appearing: int
    deletion_propagation_p95_days: float | None
    deletion_propagation_max_days: float | None
    undefined: dict[str, str]  # figure -> why it is undefined
    not_applicable: dict[str, str] = {}  # figure -> why the data cannot have it
    status: dict[str, int]  # status -> queries
    near_duplicates: NearDuplicates | None
    cost_model: dict[str, dict[str, Any]]  # system -> its health.cost model
    revisions: Revisions

    def figure(self, name: str) -> float | int | None:
        """The figure called ``name`` (None: undefined, or not a figure of this record)."""
        return getattr(self, name) if name in FIGURES else None


FIGURES = frozenset(SystemHealth.model_fields) - {
    "system", "route", "cost_unit", "undefined", "not_applicable", "status", "near_duplicates",
    "cost_model", "revisions"}


class Health(Document):
    systems: dict[str, SystemHealth]  # system -> its health
    definitions: dict[str, str]  # figure -> its definition
    qrels: Qrels
