"""``base.dask`` and ``base.shards``: where heavy work runs (``releval.executor``). A leaf."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from releval.section import Section

_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+)"
                      r":(?P<port>[^:/]*)$")


def scheduler_address(text: str) -> str:
    """``text`` if it is a Dask scheduler's address, ``[protocol://]host:port`` with a port
    1..65535 (e.g. tcp://10.0.0.5:8786); ValueError saying what is wrong otherwise."""
    m = _ADDRESS.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a scheduler address [protocol://]host:port "
                         "(e.g. tcp://10.0.0.5:8786)")
    if not (m["port"].isdigit() and 0 < int(m["port"]) < 65536):
        raise ValueError(f"{text!r}: the port {m['port']!r} is not a number in 1..65535")
    return text.strip()


class DaskSettings(Section):
    """``base.dask``: the cluster of ``executor: dask``."""

    address: str | None = None  # a team's scheduler, e.g. tcp://10.0.0.5:8786; None: local
    n_workers: int = Field(2, ge=1)  # worker processes of a LocalCluster
    threads_per_worker: int = Field(1, ge=1)
    memory_limit: str = "auto"  # per worker (LocalCluster), e.g. "4GiB"

    @field_validator("address")
    @classmethod
    def _an_address(cls, value: str | None) -> str | None:
        return None if value is None else scheduler_address(value)


class Shards(Section):
    """``base.shards``: how big a coarse block is (each block is one task)."""

    documents: int = Field(250_000, ge=1)  # documents per index shard (BM25, dense)
    queries: int = Field(10_000, ge=1)  # queries per block of search and evaluation
