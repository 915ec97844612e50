"""The shard layout of a sharded search and the merge of its per-shard windows.

The documents table is cut into contiguous shards of ``base.shards.documents`` rows and the
queries into blocks of ``base.shards.queries``; a shard's index is built once (a kept task of
the active executor, ``releval.executor``) and searched block by block where it lives. Each
(shard, block) task returns its best ``depth`` visible candidates per query with *global*
document positions, ordered as a single index would order them (score descending, then the
global ``tie_order``). Since every document of the merged top ``depth`` is in the top
``depth`` of its own shard under the same order, ``merge`` (``base.rank_entries`` over the
union) gives exactly the single-index window: same documents, scores, ranks and ties.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from releval.data import contracts as S
from releval.retrieval.base import CANDIDATE_COLUMNS, rank_entries


def cut(n: int, size: int) -> list[slice]:
    """Contiguous slices of at most ``size`` covering range(n) (one empty slice for n = 0)."""
    return [slice(a, min(a + size, n)) for a in range(0, max(n, 1), size)]


def portable(documents: pd.DataFrame) -> pd.DataFrame:
    """``documents`` with its ACL lists as an Arrow list column, so a shard sent to a worker
    pickles as buffers (an object column of group arrays costs ~2 s per 250,000 rows, ten
    times the rest of the table); the visibility rule reads either the same."""
    if S.ACL not in documents.columns or isinstance(documents[S.ACL].dtype, pd.ArrowDtype):
        return documents
    acl = pa.array(documents[S.ACL].to_numpy(), pa.list_(pa.large_string()))
    return documents.assign(**{S.ACL: pd.Series(pd.arrays.ArrowExtensionArray(acl),
                                                index=documents.index)})


@dataclass(frozen=True)
class Window:
    """One (shard, query block) answer: ``rows`` index the block's queries, ``cols`` the
    whole documents table; ``seconds`` is the task's search wall time."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    seconds: float


def merge(windows: list[tuple[slice, Window]], n_queries: int, depth: int,
          tie_order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The single-index window from the per-shard ones: ``windows`` pairs each query block's
    slice with one shard's answer for it. Returns ``(rows, cols, ranks, values)`` over all
    queries, sorted by query then rank."""
    empty = (np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.float32))
    parts = [empty] + [(w.rows + block.start, w.cols, w.values) for block, w in windows]
    rows, cols, values = (np.concatenate(p) for p in zip(*parts, strict=True))
    return rank_entries(rows, cols, values, depth, tie_order)


def latency_ms(windows: list[tuple[slice, Window]], n_queries: int) -> np.ndarray:
    """A query's latency in a sharded search: the slowest shard's time for its block (the
    shards answer in parallel), over the block's size."""
    out = np.zeros(n_queries)
    for block, w in windows:
        size = max(1, block.stop - block.start)
        out[block] = np.maximum(out[block], w.seconds * 1e3 / size)
    return out


def run_frame(queries: pd.DataFrame, doc_ids: np.ndarray, rows: np.ndarray, cols: np.ndarray,
              ranks: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    """The candidates run (query_id, doc_id, rank, score) of merged entries."""
    qids = queries[S.QUERY_ID].to_numpy(dtype=object)
    return pd.DataFrame(dict(zip(CANDIDATE_COLUMNS, (
        pd.Series(qids[rows], dtype="str"), pd.Series(doc_ids[cols], dtype="str"),
        ranks.astype(np.int64), values.astype(np.float64)), strict=True)))


def layout(n_docs: int, n_queries: int, documents: int, queries: int, workers: int) -> dict:
    """The shard layout, as kept in run_stats and the receipt."""
    return {"document_shards": len(cut(n_docs, documents)), "documents_per_shard": documents,
            "query_blocks": len(cut(n_queries, queries)), "queries_per_block": queries,
            "workers": workers}
