"""A large run evaluated in blocks of whole queries, on threads or on a Dask cluster.

A ranked list's rows are usually consecutive (a TREC file, a retriever's output). Such a run
is cut at query boundaries into blocks of about ``BLOCK_ROWS`` rows; each block is evaluated
with the judgments of its queries as a run of its own, and a last block holds the judged (or
listed) queries the run does not rank. Per-query values do not depend on the cut, so the
blocks' values, put back in query order, are the whole run's. The judgments are read, checked
and hashed once (``Judgments``) and shared by the blocks. Where a block runs: when
``releval.executor.active()`` is a Dask executor, each block is a task on its cluster (the
judgments scattered to every worker once); otherwise on a thread of its own (Arrow, numpy and
the compiled loops release the GIL), with only the blocks in flight held in memory. The
values are the same either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.metrics import ids
from releval.metrics.judgments import Judgments

BLOCK_ROWS = 1 << 19
MAX_WORKERS = 8


@dataclass(frozen=True)
class Block:
    """A block's ranked rows and the queries it evaluates: with ``common_only`` its judged (or,
    with ``queries``, listed) queries that it ranks; else exactly ``queries``."""

    run: pd.DataFrame
    common_only: bool
    queries: list[str] | None


def workers(asked: int | None) -> int:
    """Threads to use: ``asked``, or the cores this process may use (at most MAX_WORKERS)."""
    if asked:
        return max(1, asked)
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))


@dataclass(frozen=True)
class Plan:
    """The blocks of a run's rows, and the queries they rank (``heads``)."""

    blocks: list[Block]
    heads: pa.Array
    listed: pa.Array | None

    def unranked(self, judgments: Judgments) -> Block:
        """The block of the judged (or listed) queries the run does not rank: scored empty."""
        rest = judgments.uniques if self.listed is None else self.listed
        return Block(self.blocks[0].run.iloc[:0], False,
                     rest.filter(pc.invert(pc.is_in(rest, self.heads))).to_pylist())


def plan(run: pd.DataFrame, queries: list[str] | None) -> Plan | None:
    """The blocks of ``run``, or None when it is small or a query's rows are not consecutive
    (it is then evaluated whole)."""
    if len(run) <= BLOCK_ROWS:
        return None
    found = ids.query_runs(run, "run")
    if found is None:
        return None
    heads, starts = found
    listed = None if queries is None else pc.unique(pa.array(queries, pa.large_string()))
    bounds = np.r_[starts, len(run)]  # each block ends at the first query start past its size
    cuts = np.unique(np.r_[bounds[np.searchsorted(starts, np.arange(0, len(run), BLOCK_ROWS))],
                           len(run)])
    out = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        i, j = np.searchsorted(starts, [a, b])
        mine = heads[i:j]
        out.append(Block(run.iloc[a:b], True, None if listed is None else
                         mine.filter(pc.is_in(mine, listed)).to_pylist()))
    return Plan(out, heads, listed)
