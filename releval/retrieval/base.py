"""What every retrieval route provides, and the shared pieces of the candidates contract.

A route indexes one documents table, then answers a queries table: for each query, at most
``depth`` candidates, ranked by score (descending, then doc_id ascending), drawn only from
the documents that ``Visibility.mask`` lets that query see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError

CANDIDATE_COLUMNS = (S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE)
LATENCY_MS = "latency_ms"


@dataclass(frozen=True)
class Candidates:
    """One route's answer to a queries table.

    ``run``: columns query_id, doc_id, rank (int, 1..n contiguous per query), score (float,
    non-increasing with rank, never NaN); queries with an empty window have no rows.
    ``latency_ms``: per query, aligned with the queries table that was searched.
    ``stats``: route-specific, JSON-ready figures merged into run_stats (e.g. ANN recall,
    cache hits, flagged documents).
    """

    run: pd.DataFrame
    latency_ms: np.ndarray
    stats: dict = field(default_factory=dict)


class Retriever(Protocol):
    """A retrieval route: ``index`` a documents table once, then ``search`` queries."""

    def index(self, documents: pd.DataFrame) -> None:
        """Build the index over ``documents`` (the documents contract)."""

    def search(self, queries: pd.DataFrame, depth: int, visibility: Visibility) -> Candidates:
        """Top ``depth`` visible candidates per query; ``visibility`` is for the indexed table."""


def check_search(depth: int, indexed: np.ndarray | None, visibility: Visibility,
                 queries: pd.DataFrame) -> int:
    """Validate a ``search`` call: the route was indexed, ``visibility`` was built from the
    indexed documents (same doc_ids, same order), query_ids are unique; returns depth."""
    depth = S.integer("depth", depth, source="retriever")
    if indexed is None:
        raise RuntimeError("search called before index")
    if not np.array_equal(visibility.doc_ids, indexed):
        raise InputError("visibility was built from a different documents table than the "
                         "one indexed", "visibility")
    S.require_unique(queries, S.QUERY_ID, "queries")
    return depth


def top_k(scores: np.ndarray, depth: int, tie_order: np.ndarray):
    """Each row's best ``depth`` positive entries of a (queries × documents) score matrix.

    Entries ≤ 0 are never selected (callers zero out what a query may not see). Order is
    score descending, then ``tie_order`` (one int per column, e.g. doc_id's sorted position)
    ascending, and ties at the cut are resolved by that order, so the result is exact and
    deterministic. Returns ``(rows, cols, ranks)``, sorted by row then rank (1-based).
    """
    n_docs = scores.shape[1]
    floor = np.nextafter(scores.dtype.type(0), scores.dtype.type(1))  # the least positive
    if depth < n_docs:
        cut = np.partition(scores, n_docs - depth, axis=1)[:, n_docs - depth]
        floor = np.maximum(cut, floor)[:, None]
    rows, cols = np.nonzero(scores >= floor)
    order = np.lexsort((tie_order[cols], -scores[rows, cols], rows))
    rows, cols = rows[order], cols[order]
    first = np.searchsorted(rows, rows, side="left")
    ranks = np.arange(1, len(rows) + 1) - first
    within = ranks <= depth
    return rows[within], cols[within], ranks[within]


def latency_table(queries: pd.DataFrame, latency_ms: np.ndarray) -> pd.DataFrame:
    """Per-query latency (query_id, latency_ms), aligned with ``queries``; NaN = not measured."""
    return pd.DataFrame({S.QUERY_ID: queries[S.QUERY_ID].to_numpy(),
                         LATENCY_MS: np.asarray(latency_ms, dtype=float)})


def latency_of(latencies: pd.DataFrame | None, queries: pd.DataFrame) -> np.ndarray:
    """A latency table's (query_id, latency_ms) values in ``queries``' order; NaN where not
    measured (and everywhere without a table)."""
    if latencies is None:
        return np.full(len(queries), np.nan)
    table = latencies.set_index(S.QUERY_ID)[LATENCY_MS]
    return table.reindex(queries[S.QUERY_ID]).to_numpy(dtype=float)


def run_stats(candidates: Candidates, queries: pd.DataFrame) -> dict:
    """JSON-ready summary of one search over ``queries``.

    ``n_queries``; ``candidates_per_query``: mean, min, max over all queries (a query with
    no candidates counts as 0) and ``empty`` (how many had none); ``latency_ms``: p50, p95,
    p99 over the queries whose latency was measured (NaN = not measured). Statistics over
    zero queries are ``None``.
    """
    if len(candidates.latency_ms) != len(queries):
        raise InputError(f"latency_ms has {len(candidates.latency_ms)} entries for "
                         f"{len(queries)} queries", "candidates")
    counts = (candidates.run.groupby(S.QUERY_ID).size()
              .reindex(queries[S.QUERY_ID], fill_value=0).to_numpy())
    latency = np.asarray(candidates.latency_ms, dtype=float)
    latency = latency[~np.isnan(latency)]  # routes that measure none (external, fused)
    some = len(queries) > 0
    return {
        "n_queries": len(queries),
        "candidates_per_query": {
            "mean": float(counts.mean()) if some else None,
            "min": int(counts.min()) if some else None,
            "max": int(counts.max()) if some else None,
            "empty": int((counts == 0).sum()),
        },
        "latency_ms": {f"p{p}": float(np.percentile(latency, p)) if len(latency) else None
                       for p in (50, 95, 99)},
    } | candidates.stats
