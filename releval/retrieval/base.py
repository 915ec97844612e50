"""What every retrieval route provides, and the shared pieces of the candidates contract.

A route indexes one documents table, then answers a queries table: for each query, at most
``depth`` candidates, ranked by score (descending, then doc_id ascending), drawn only from
the documents that ``Visibility.mask`` lets that query see.

The recommendation routes (``routes.Route.needs_history``: users as queries, items as
documents) share ``HistoryRetriever``: each learns at a query's cut t only from
``History.fitting(t)`` and answers from the user's own ``History.profile``.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
import scipy.sparse as sp

from releval.data import contracts as S
from releval.data.history import History
from releval.data.visibility import Visibility
from releval.errors import InputError

log = logging.getLogger(__name__)

CANDIDATE_COLUMNS = (S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE)
LATENCY_MS = "latency_ms"
MAX_CELLS = 1 << 25  # score-matrix cells per batch of a recommendation route (float32: 128 MiB)


@dataclass(frozen=True)
class Candidates:
    """One route's answer to a queries table.

    ``run``: columns query_id, doc_id, rank (int, 1..n contiguous per query), score (float,
    non-increasing with rank, never NaN); queries with an empty window have no rows. A route
    that estimates P(relevant) (a team's rec table) adds ``S.PROBABILITY`` (float in [0, 1])
    on every row.
    ``latency_ms``: per query, aligned with the queries table that was searched.
    ``stats``: route-specific, JSON-ready figures merged into run_stats (e.g. ANN recall,
    cache hits, flagged documents).
    ``status``: per query, aligned like ``latency_ms``, one of ``S.RUN_STATUSES`` or NaN (not
    recorded); None for a route that answered every query it searched ("ok" each).
    """

    run: pd.DataFrame
    latency_ms: np.ndarray
    stats: dict = field(default_factory=dict)
    status: np.ndarray | None = None


class Retriever(Protocol):
    """A retrieval route: ``index`` a documents table once, then ``search`` queries.

    A route whose entry ``needs_history`` is indexed with the interaction log too:
    ``index(documents, history)`` (a ``releval.data.history.History``); ``routes.search``
    passes it.
    """

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


def rank_entries(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, depth: int,
                 tie_order: np.ndarray):
    """Order scored entries by row, then value descending, then ``tie_order[col]`` ascending,
    and keep each row's first ``depth``: ``top_k``'s order for entries given as triples (an
    ANN answer, or the per-shard windows of a sharded search being merged). Returns
    ``(rows, cols, ranks, values)``, ranks 1-based."""
    order = np.lexsort((tie_order[cols], -values, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    ranks = np.arange(1, len(rows) + 1) - np.searchsorted(rows, rows, side="left")
    within = ranks <= depth
    return rows[within], cols[within], ranks[within], values[within]


def statuses(status: np.ndarray | None, n: int) -> np.ndarray:
    """A route's per-query status as an object array: ``status`` as given, or "ok" for each
    of the ``n`` queries when None (``Candidates.status``)."""
    if status is None:
        return np.full(n, S.RUN_STATUSES[0], dtype=object)
    return np.asarray(status, dtype=object)


def latency_table(queries: pd.DataFrame, latency_ms: np.ndarray,
                  status: np.ndarray | None = None) -> pd.DataFrame:
    """Per-query latency and status (query_id, latency_ms, status), aligned with ``queries``;
    latency NaN = not measured, status NaN = not recorded (``status`` None: "ok" each, as
    ``statuses``)."""
    return pd.DataFrame({S.QUERY_ID: queries[S.QUERY_ID].to_numpy(),
                         LATENCY_MS: np.asarray(latency_ms, dtype=float),
                         S.RUN_STATUS: pd.Series(statuses(status, len(queries)), dtype="str")})


def latency_of(latencies: pd.DataFrame | None, queries: pd.DataFrame) -> np.ndarray:
    """A latency table's (query_id, latency_ms) values in ``queries``' order; NaN where not
    measured (and everywhere without a table)."""
    if latencies is None:
        return np.full(len(queries), np.nan)
    table = latencies.set_index(S.QUERY_ID)[LATENCY_MS]
    return table.reindex(queries[S.QUERY_ID]).to_numpy(dtype=float)


def status_of(latencies: pd.DataFrame | None, queries: pd.DataFrame) -> np.ndarray:
    """A latency table's per-query status in ``queries``' order (object array); NaN where not
    recorded: a query the table lacks, a table without the column, or no table."""
    if latencies is None or S.RUN_STATUS not in latencies.columns:
        return np.full(len(queries), np.nan, dtype=object)
    table = latencies.set_index(S.QUERY_ID)[S.RUN_STATUS].astype(object)
    return table.reindex(queries[S.QUERY_ID]).to_numpy(dtype=object)


def status_counts(status: np.ndarray) -> dict[str, int]:
    """Queries per status of ``S.RUN_STATUSES``, plus ``not_recorded`` (NaN)."""
    values = pd.Series(status, dtype=object)
    counts = values.value_counts()
    return ({s: int(counts.get(s, 0)) for s in S.RUN_STATUSES}
            | {"not_recorded": int(values.isna().sum())})


def run_stats(candidates: Candidates, queries: pd.DataFrame) -> dict:
    """JSON-ready summary of one search over ``queries``.

    ``n_queries``; ``candidates_per_query``: mean, min, max over all queries (a query with
    no candidates counts as 0) and ``empty`` (how many had none); ``latency_ms``: p50, p95,
    p99 over the queries whose latency was measured (NaN = not measured); ``status``: queries
    per status (``status_counts``). Statistics over zero queries are ``None``.
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
        "status": status_counts(statuses(candidates.status, len(queries))),
    } | candidates.stats


def profile_matrix(profile: pd.DataFrame, query_ids: np.ndarray, doc_ids: pd.Index,
                   values: np.ndarray | None = None) -> sp.csr_matrix:
    """A ``History.profile`` frame as a (len(query_ids) × len(doc_ids)) float32 matrix: entry
    (q, i) sums ``values`` (1 per interaction by default) over q's interactions with item i;
    items that are no document are dropped."""
    rows = pd.Index(query_ids).get_indexer(profile[S.QUERY_ID])
    cols = doc_ids.get_indexer(profile[S.ITEM_ID])
    data = np.ones(len(profile), np.float32) if values is None else values.astype(np.float32)
    keep = (rows >= 0) & (cols >= 0)
    return sp.csr_matrix((data[keep], (rows[keep], cols[keep])),
                         shape=(len(query_ids), len(doc_ids)))


class HistoryRetriever(ABC):
    """The shared index and search of the recommendation routes.

    ``index(documents, history)`` keeps the catalogue and the history. ``search`` takes the
    queries cut by cut (one distinct issued_at t each): ``fit(history.fitting(t), t)`` builds
    the cut's model once, then each batch of that cut's queries (at most ``MAX_CELLS`` score
    cells) gets ``score(model, t, batch, profile)``, a (batch × documents) array ≥ 0 where
    ``profile`` is the batch's ``history.profile``. Scores are zeroed where the query may not
    see the item (``visibility``) or its user already has it (``history.seen_mask``, when
    exclude_seen), and ``top_k`` keeps the best ``depth`` positive ones (ties: doc_id
    ascending). A query's latency is its cut's fit time over the cut's queries plus its
    batch's time (profile, seen, score, mask, select) over the batch size.

    ``stats``: ``fitting``, per cut, the interactions, users and catalogue items of
    ``History.fitting(t)`` (what the route may learn from); ``empty_profile``, the queries
    whose user had no positive before their cut; plus the route's own ``_stats``.
    """

    route: str

    def index(self, documents: pd.DataFrame, history: History) -> None:
        """Keep ``documents`` (doc_id unique, else InputError) and ``history``."""
        if documents.empty:
            raise InputError("no documents to index", documents.attrs.get("source", "documents"))
        S.require_unique(documents, S.DOC_ID, "documents")
        self._history = history
        self._doc_ids = documents[S.DOC_ID].to_numpy(dtype=object)
        self._doc_index = pd.Index(documents[S.DOC_ID].astype(str))
        self._tie_order = pd.factorize(self._doc_ids, sort=True)[0]  # doc_id's sorted position
        self._stats: dict = {}

    @abstractmethod
    def fit(self, fitting: pd.DataFrame, cut: pd.Timestamp):
        """The model at ``cut`` from ``fitting`` (``History.fitting(cut)``)."""

    @abstractmethod
    def score(self, model, cut: pd.Timestamp, batch: pd.DataFrame,
              profile: pd.DataFrame) -> np.ndarray:
        """(len(batch) × documents) scores ≥ 0 of ``batch``'s queries issued at ``cut``."""

    def search(self, queries: pd.DataFrame, depth: int, visibility: Visibility) -> Candidates:
        """Top ``depth`` visible, unseen items with a positive score per query (class
        docstring). ``visibility`` must be built from the indexed documents; query_id must
        be unique. Both are InputErrors otherwise."""
        indexed = getattr(self, "_doc_ids", None)
        depth = check_search(depth, indexed, visibility, queries)
        start = time.perf_counter()
        history, n_docs = self._history, len(self._doc_ids)
        cuts = pd.to_datetime(queries[S.ISSUED_AT], utc=True)
        codes, distinct = pd.factorize(cuts, sort=True)
        size = max(1, MAX_CELLS // n_docs)
        latency = np.zeros(len(queries))
        parts = [(np.zeros(0, np.intp),) * 3 + (np.zeros(0, np.float32),)]
        fitting, empty = [], 0
        for code, cut in enumerate(distinct):
            positions = np.flatnonzero(codes == code)
            tick = time.perf_counter()
            learnt = history.fitting(cut)
            model = self.fit(learnt, cut)
            latency[positions] += (time.perf_counter() - tick) * 1e3 / len(positions)
            fitting.append({"cut": cut.isoformat(), "interactions": len(learnt),
                            "users": int(learnt[S.USER_ID].nunique()),
                            "items": int((self._doc_index.get_indexer(
                                learnt[S.ITEM_ID].unique()) >= 0).sum())})
            for first in range(0, len(positions), size):
                tick = time.perf_counter()
                rows = positions[first:first + size]
                batch = queries.iloc[rows]
                profile = history.profile(batch)
                empty += len(batch) - profile[S.QUERY_ID].nunique()
                scores = self.score(model, cut, batch, profile).astype(np.float32, copy=False)
                scores = scores * (visibility.mask(batch)
                                   & ~history.seen_mask(batch, self._doc_index.to_numpy()))
                sub, cols, ranks = top_k(scores, depth, self._tie_order)
                parts.append((rows[sub], cols, ranks, scores[sub, cols]))
                latency[rows] += (time.perf_counter() - tick) * 1e3 / len(rows)
        rows, cols, ranks, values = (np.concatenate(p) for p in zip(*parts, strict=True))
        order = np.lexsort((ranks, rows))  # queries' order, then rank
        rows, cols, ranks, values = rows[order], cols[order], ranks[order], values[order]
        qids = queries[S.QUERY_ID].to_numpy(dtype=object)
        run = pd.DataFrame(dict(zip(CANDIDATE_COLUMNS, (
            pd.Series(qids[rows], dtype="str"), pd.Series(self._doc_ids[cols], dtype="str"),
            ranks.astype(np.int64), values.astype(np.float64)), strict=True)))
        log.info("%s: searched %d queries at %d cuts, depth %d, in %.2f s (%d candidates)",
                 self.route, len(queries), len(distinct), depth, time.perf_counter() - start,
                 len(run))
        return Candidates(run=run, latency_ms=latency,
                          stats={"fitting": fitting, "empty_profile": int(empty)} | self._stats)
