"""run_stats.json (stages ``candidates`` and ``fuse``): one system's window in numbers. The
keys every window has are typed; a route adds its own (a team run's source and visibility,
a fused system's sources and tuning, the shard layout, the seeds)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from releval.documents import Document, Fixed

Number = int | float | None


class PerQuery(Fixed):
    mean: Number
    min: Number
    max: Number
    empty: int


class Latency(Fixed):
    p50: Number
    p95: Number
    p99: Number


class RunStats(Document):
    model_config = ConfigDict(extra="allow", frozen=True)  # a route's own keys

    n_queries: int
    candidates_per_query: PerQuery
    latency_ms: Latency
    status: dict[str, int]
    system: str
    route: str
    depth: int
    shards: dict[str, Any] | None = None  # a sharded search's layout
    # a route's own keys the report reads (others: ``model_extra``, e.g. ``ann_recall@k``)
    ann_recall_sample: int | None = None  # an ANN search: the sampled queries
    embeddings: dict[str, Any] | None = None  # an encoding route: documents encoded, cached
    visibility: dict[str, Any] | None = None  # an unfiltered (external) run's forbidden pairs
    fusion: dict[str, Any] | None = None  # a fused system: the chosen fusion
    tuning: str | None = None  # a fused system: how it was tuned
