"""The dense route's sharded search (``routes.Route.sharded``): the DenseRetriever's windows
from document shards searched on the active executor (``releval.executor``).

The queries are encoded once, here, through the query ``EmbeddingCache`` and sent to every
worker. Each shard of ``shards.documents`` contiguous documents is one kept task: it encodes
its documents through the document cache (the DenseRetriever's own content-keyed cache, so
either reads what the other stored; a remote cluster needs ``cache_dir`` on storage its
workers share) and builds its index with the system's settings (an IVF shard trains its own
lists, at most one per document of the shard). Each (shard, block of ``shards.queries``
queries) is one task where the shard lives: the visibility of the shard's documents, then,
batch by batch as in the DenseRetriever, the shard's best ``depth`` visible documents per
query in the global order (score descending, then doc_id). Exact: scored by
``dense.scores``, so ``shards.merge`` returns the single index's windows, bit for bit; ANN:
the shard's ANN search with the same refills, so no forbidden document enters and windows
are as full as the exact ones. ``min_score`` cuts the merged windows.

ANN recall: for the seeded sample of ``ann_sample`` queries (the DenseRetriever's), each
task returns the shard's exact windows too; merged, they are the exact windows the merged
ANN windows are compared with (``stats["ann_recall@<depth>"]``, over
``stats["ann_recall_sample"]`` queries). Each shard has its own graph or lists, so a sharded
ANN search and its recall are not the single index's.

A query's latency is its share of the query-embedding wall time plus the slowest shard's
search time for its block over the block's size (``shards.latency_ms``). ``stats`` are the
DenseRetriever's plus ``shards`` (``shards.layout``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval import executor
from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.params.executor import Shards
from releval.params.systems import DenseSystem
from releval.retrieval import shards as sharding
from releval.retrieval.base import Candidates
from releval.retrieval.dense import (
    SEARCH_BATCH,
    DenseRetriever,
    Segment,
    ann_sample,
    batches,
    overlap,
    recall_stats,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Shard:
    """A kept shard: its searched segment, its documents' visibility, and how many of its
    documents were encoded and read from the cache."""

    segment: Segment
    visibility: Visibility
    counts: dict[str, int]


def _retriever(config: DenseSystem) -> DenseRetriever:
    return DenseRetriever(**config.model_dump(exclude={"route"}))


def _index(block: tuple[int, pd.DataFrame, np.ndarray], config: DenseSystem) -> _Shard:
    """The shard (first position, documents, their global tie order) encoded and indexed."""
    start, documents, tie_order = block
    retriever = _retriever(config)
    vectors, counts = retriever.document_vectors(documents)
    index, stored = retriever.build(vectors)
    return _Shard(Segment(index, stored, start, tie_order, config.index, config.ef_search,
                          config.nprobe), Visibility(documents), counts)


def _window(parts: list[tuple], seconds: float) -> sharding.Window:
    rows, cols, values = (np.concatenate(p) for p in zip(*parts, strict=True))
    return sharding.Window(rows, cols, values, seconds)


def _search(block: tuple[_Shard, slice], queries: pd.DataFrame, vectors: np.ndarray,
            depth: int, sample: np.ndarray) -> tuple:
    """One shard's windows for one query block (rows: the block's; cols: the documents
    table's), the exact windows of the block's sampled queries (None for an exact index),
    the shard's encoding counts and its vectors' dimension."""
    shard, part = block
    segment = shard.segment
    ann = segment.kind != "exact"
    empty = (np.zeros(0, np.intp),) * 2 + (np.zeros(0, np.float32),)
    found, exact, seconds = [empty], [empty], 0.0
    for batch in batches(part.start, part.stop, len(segment.vectors), SEARCH_BATCH):
        tick = time.perf_counter()
        q, mask = vectors[batch], shard.visibility.mask(queries.iloc[batch])
        rows, cols, _, values = (segment.ann(q, mask, depth) if ann
                                 else segment.exact(q, batch.start, mask, depth))
        seconds += time.perf_counter() - tick
        at = batch.start - part.start
        found.append((rows + at, cols + segment.start, values))
        if ann:
            rows, cols, _, values = segment.sampled(q, mask, depth, batch, sample)
            exact.append((rows + at, cols + segment.start, values))
    return (_window(found, seconds), _window(exact, 0.0) if ann else None, shard.counts,
            int(segment.index.d))


def search_sharded(config: DenseSystem, documents: pd.DataFrame, queries: pd.DataFrame,
                   depth: int, shards: Shards) -> Candidates:
    """``config``'s dense search of ``queries`` over ``documents`` to ``depth`` under the
    documents' visibility, sharded as ``shards`` says on the active executor (module
    docstring). Bad documents, queries or depth are InputErrors, as in the DenseRetriever."""
    if documents.empty:
        raise InputError("no documents to index", documents.attrs.get("source", "documents"))
    S.require_unique(documents, S.DOC_ID, "documents")
    S.require_unique(queries, S.QUERY_ID, "queries")
    depth = S.integer("depth", depth, source="retriever")
    retriever = _retriever(config)
    S.require_columns(documents, retriever.doc_fields, "documents")
    start = time.perf_counter()
    vectors, query_counts = retriever.query_vectors(queries)
    n_queries, n_docs = len(queries), len(documents)
    latency = np.full(n_queries, (time.perf_counter() - start) * 1e3 / max(1, n_queries))
    doc_ids = documents[S.DOC_ID].to_numpy(dtype=object)
    tie_order = pd.factorize(doc_ids, sort=True)[0]  # doc_id's sorted position
    cuts = sharding.cut(n_docs, shards.documents)
    parts = sharding.cut(n_queries, shards.queries)
    ann = config.index != "exact"
    sample = ann_sample(n_queries, config.ann_sample) if ann else np.zeros(0, np.intp)
    runner = executor.active()
    portable = sharding.portable(documents)
    kept = runner.keep(_index, [(c.start, portable.iloc[c], tie_order[c]) for c in cuts],
                       shared={"config": config}, description="dense shards")
    answers = runner.map(_search, [(shard, part) for shard in kept for part in parts],
                         shared={"queries": queries, "vectors": vectors, "depth": depth,
                                 "sample": sample}, description="dense shard search")
    del kept  # the shards' indexes are let go on the workers
    blocks = [part for _ in cuts for part in parts]
    windows = [(part, answer[0]) for part, answer in zip(blocks, answers, strict=True)]
    rows, cols, ranks, values = sharding.merge(windows, n_queries, depth, tie_order)
    latency += sharding.latency_ms(windows, n_queries)
    counts = {k: sum(answer[2][k] for answer in answers[::len(parts)])  # one per shard
              for k in ("documents_encoded", "documents_cached")}
    stats = retriever.stats(counts | query_counts, answers[0][3])
    stats["shards"] = sharding.layout(n_docs, n_queries, shards.documents, shards.queries,
                                      runner.workers)
    if ann:
        truth = sharding.merge([(part, answer[1]) for part, answer in zip(
            blocks, answers, strict=True)], n_queries, depth, tie_order)
        stats |= recall_stats(*overlap((rows, cols), truth[:2], n_queries, n_docs), depth)
    if config.min_score is not None:  # the similarity floor cuts each window's tail
        keep = values >= config.min_score
        rows, cols, ranks, values = rows[keep], cols[keep], ranks[keep], values[keep]
    run = sharding.run_frame(queries, doc_ids, rows, cols, ranks, values)
    log.info("dense: searched %d queries at depth %d over %d shards in %.2f s "
             "(%d candidates)", n_queries, depth, len(cuts), time.perf_counter() - start,
             len(run))
    return Candidates(run=run, latency_ms=latency, stats=stats)
