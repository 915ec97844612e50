"""``base.dask`` and ``base.shards``: where heavy work runs (``releval.executor``). A leaf."""

from __future__ import annotations

from pydantic import Field

from releval.section import Section


class DaskSettings(Section):
    """``base.dask``: the cluster of ``executor: dask``."""

    address: str | None = None  # a team's scheduler, e.g. tcp://10.0.0.5:8786; None: local
    n_workers: int = Field(2, ge=1)  # worker processes of a LocalCluster
    threads_per_worker: int = Field(1, ge=1)
    memory_limit: str = "auto"  # per worker (LocalCluster), e.g. "4GiB"


class Shards(Section):
    """``base.shards``: how big a coarse block is (each block is one task)."""

    documents: int = Field(250_000, ge=1)  # documents per index shard (BM25, dense)
    queries: int = Field(10_000, ge=1)  # queries per block of search and evaluation
