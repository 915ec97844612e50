"""The BM25 route's sharded search: ``BM25Retriever``'s run, bit for bit, from document shards
× query blocks on the active executor (``releval.executor``; layout and merge: ``shards.py``).

1. Each shard (``base.shards.documents`` contiguous rows) is tokenised once, by the
   retriever's tokenizer, and kept where it was; its document frequencies (keyed by term text)
   and document lengths go to the driver, which sums them into the corpus' N, df and average
   length (the mean of all lengths, as bm25s takes it).
2. Each shard turns its postings into float32 contributions under those global statistics,
   with bm25s' formulas, dtypes and operation order: idf rounded to float32, the tf part in
   float64 (atire's ``tf * (k1 + 1)`` in float32), their product rounded to float32.
3. Each (shard, block) task adds a query's contributions in float32 in sorted term order,
   a repeated term each time (as the retriever does), so every score is the single index's;
   drops what the shard's ``Visibility.mask`` forbids, then keeps the shard's best ``depth``
   positive scores in the global order (score descending, then doc_id ascending). Queries go
   in sub-batches of at most ``batch_size`` whose mask has at most ``CELLS`` cells; scoring
   and selection touch only the documents that hold a query term (one compiled loop).
4. ``shards.merge`` of the windows is the single-index window; a query's latency is the
   slowest shard's task time over its block size.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from dataclasses import dataclass
from itertools import chain, product

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.executor import active
from releval.params.executor import Shards
from releval.params.systems import BM25System
from releval.retrieval import shards as sh
from releval.retrieval.base import Candidates
from releval.retrieval.bm25 import MAX_CELLS, BM25Retriever

log = logging.getLogger(__name__)

CELLS = MAX_CELLS >> 4  # visibility-mask cells per sub-batch: small enough to stay in cache
LAST_KEY = np.iinfo(np.int64).max  # no candidate's key is above it

# bm25s' idf per method, in Python floats (robertson's ratio clamped at 1; float32 when stored).
IDF = {
    "lucene": lambda df, n: math.log(1 + (n - df + 0.5) / (df + 0.5)),
    "robertson": lambda df, n: math.log(max(1, (n - df + 0.5) / (df + 0.5))),
    "atire": lambda df, n: math.log(n / df),
}


@dataclass(frozen=True)
class _Tokens:
    """A tokenised shard: term ``t``'s postings are ``docs[ptr[t]:ptr[t + 1]]`` (local rows)
    with counts ``tf``; ``terms`` is sorted, so a term's id orders it as its text does."""

    terms: np.ndarray
    ptr: np.ndarray
    docs: np.ndarray
    tf: np.ndarray
    lengths: np.ndarray
    visibility: Visibility


@dataclass(frozen=True)
class _Index:
    """A shard's scoring structure: ``values`` are the float32 BM25 contributions of the
    postings; ``tie`` the global tie order of its rows; ``start`` its first global row."""

    lookup: pd.Index
    ptr: np.ndarray
    docs: np.ndarray
    values: np.ndarray
    visibility: Visibility
    tie: np.ndarray
    start: int


def _retriever(config: BM25System) -> BM25Retriever:
    return BM25Retriever(**config.model_dump(exclude={"route"}))


def _tokenized(rows: pd.DataFrame, config: BM25System) -> _Tokens:
    """Keep task: the shard's postings, tokenised as ``BM25Retriever.index`` does."""
    texts = (rows[S.TITLE].fillna("").astype(str) + " "
             + rows[S.TEXT].fillna("").astype(str)).tolist()
    ids, vocab = _retriever(config)._tokenize(texts, return_ids=True)
    names = np.empty(len(vocab), object)
    names[np.fromiter(vocab.values(), np.int64, len(vocab))] = list(vocab)
    order = np.argsort(names, kind="stable")
    rank = np.empty(len(vocab), np.int64)
    rank[order] = np.arange(len(vocab))
    lengths = np.fromiter(map(len, ids), np.int64, len(ids))
    flat = np.fromiter(chain.from_iterable(ids), np.int64, int(lengths.sum()))
    n = len(ids)
    keys, tf = np.unique(rank[flat] * n + np.repeat(np.arange(n), lengths),
                         return_counts=True)
    term, docs = np.divmod(keys, n)
    ptr = np.searchsorted(term, np.arange(len(vocab) + 1))
    return _Tokens(names[order], ptr, docs.astype(np.int32), tf.astype(np.float32), lengths,
                   Visibility(rows))


def _statistics(block: tuple[_Tokens]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Map task: the shard's (terms, document frequencies, document lengths)."""
    tokens, = block
    return tokens.terms, np.diff(tokens.ptr), tokens.lengths


def _idf(df: np.ndarray, n_docs: int, method: str) -> np.ndarray:
    """float32 idf per document frequency, as bm25s computes and stores it."""
    values, inverse = np.unique(df, return_inverse=True)
    idf = np.array([IDF[method](int(v), n_docs) for v in values], np.float64)
    return idf.astype(np.float32)[inverse]


def _indexed(block: tuple[_Tokens, np.ndarray, np.ndarray, int], config: BM25System,
             avg_length: np.float64) -> _Index:
    """Keep task: the shard's contributions ``float32(idf * tfc)`` under the global statistics
    (bm25s' operations in its order: ``k1 * ((1 - b) + b * l_d / l_avg)`` in float64)."""
    tokens, idf, tie, start = block
    k1, b = config.k1, config.b
    norm = tokens.lengths[tokens.docs].astype(np.float64)
    norm *= b
    norm /= avg_length
    norm += 1 - b
    norm *= k1
    norm += tokens.tf
    numerator = tokens.tf * np.float32(k1 + 1) if config.method == "atire" else tokens.tf
    tfc = np.divide(numerator, norm, out=norm)
    tfc *= np.repeat(idf, np.diff(tokens.ptr))
    return _Index(pd.Index(tokens.terms), tokens.ptr, tokens.docs, tfc.astype(np.float32),
                  tokens.visibility, tie, start)


def _select(qptr, qterms, ptr, docs, values, mask, tie, depth):
    """Each query's best ``depth`` visible positive scores on one shard: (rows, cols, values).

    Query ``r``'s terms are ``qterms[qptr[r]:qptr[r + 1]]``, in order; a document's score is
    their float32 contributions added in that order. Candidates are ordered by the key
    (score descending, then ``tie`` ascending), i.e. ``top_k``'s order; rows come unsorted."""
    n_rows, n_docs = mask.shape
    scores = np.zeros(n_docs, np.float32)
    bits = scores.view(np.int32)  # a positive float32's bits order it as its value
    seen = np.zeros(n_docs, np.bool_)
    touched = np.empty(n_docs, np.int64)
    found = np.empty(n_docs, np.int64)
    keys = np.empty(n_docs, np.int64)
    width = min(depth, n_docs)
    rows = np.empty(n_rows * width, np.int64)
    cols = np.empty(n_rows * width, np.int64)
    out = np.empty(n_rows * width, np.float32)
    n = 0
    for r in range(n_rows):
        m = 0
        for k in range(qptr[r], qptr[r + 1]):
            t = qterms[k]
            for j in range(ptr[t], ptr[t + 1]):
                d = docs[j]
                if not seen[d]:
                    seen[d] = True
                    touched[m] = d
                    m += 1
                scores[d] += values[j]
        c = 0
        for i in range(m):
            d = touched[i]
            if scores[d] > 0 and mask[r, d]:
                keys[c] = ((0x7F800000 - np.int64(bits[d])) << 32) | tie[d]
                found[c] = d
                c += 1
        cut = np.partition(keys[:c], width - 1)[width - 1] if c > width else LAST_KEY
        for i in range(c):
            if keys[i] <= cut:
                rows[n], cols[n], out[n] = r, found[i], scores[found[i]]
                n += 1
        for i in range(m):
            scores[touched[i]] = 0
            seen[touched[i]] = False
    return rows[:n], cols[:n], out[:n]


@functools.cache
def _compiled():
    from numba import njit  # imported where used: numba's JIT costs every stage's start

    return njit(cache=True, nogil=True)(_select)


def _query_terms(index: _Index, tokens: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(qptr, qterms): each query's shard term ids in sorted term order, repeats kept, terms
    the shard lacks left out."""
    counts = np.fromiter(map(len, tokens), np.int64, len(tokens))
    local = index.lookup.get_indexer(list(chain.from_iterable(tokens)))
    rows = np.repeat(np.arange(len(tokens)), counts)[local >= 0]
    local = local[local >= 0]
    order = np.lexsort((local, rows))
    qptr = np.zeros(len(tokens) + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=len(tokens)), out=qptr[1:])
    return qptr, local[order].astype(np.int64)


def _searched(block: tuple[_Index, pd.DataFrame], config: BM25System, depth: int) -> sh.Window:
    """Map task: one shard's window for one query block (rows: the block's queries)."""
    index, queries = block
    tick = time.perf_counter()
    tokens = _retriever(config)._tokenize(queries[S.TEXT].fillna("").astype(str).tolist(),
                                          return_ids=False)
    qptr, qterms = _query_terms(index, tokens)
    size = max(1, min(config.batch_size, CELLS // len(index.tie)))
    select = _compiled()
    parts = [(np.zeros(0, np.int64),) * 2 + (np.zeros(0, np.float32),)]
    for first in range(0, len(queries), size):
        mask = index.visibility.mask(queries.iloc[first:first + size])
        rows, cols, values = select(qptr[first:first + size + 1], qterms, index.ptr,
                                    index.docs, index.values, mask, index.tie, depth)
        parts.append((rows + first, cols + index.start, values))
    rows, cols, values = (np.concatenate(p) for p in zip(*parts, strict=True))
    return sh.Window(rows, cols, values, time.perf_counter() - tick)


def search_sharded(config: BM25System, documents: pd.DataFrame, queries: pd.DataFrame,
                   depth: int, shards: Shards) -> Candidates:
    """``BM25Retriever`` indexed on ``documents`` and searched for ``queries`` to ``depth``
    under ``Visibility(documents)``, as document shards × query blocks on the active executor
    (module docstring). Bad input is an InputError, as for the retriever."""
    _retriever(config)
    if documents.empty:
        raise InputError("no documents to index", documents.attrs.get("source", "documents"))
    S.require_unique(documents, S.DOC_ID, "documents")
    S.require_unique(queries, S.QUERY_ID, "queries")
    depth = S.integer("depth", depth, source="retriever")
    start = time.perf_counter()
    executor = active()
    doc_slices = sh.cut(len(documents), shards.documents)
    query_slices = sh.cut(len(queries), shards.queries)
    portable = sh.portable(documents)
    tokens = executor.keep(_tokenized, [portable.iloc[s] for s in doc_slices],
                           shared={"config": config}, description="bm25 tokenize")
    terms, dfs, lengths = zip(*executor.map(_statistics, [(t,) for t in tokens],
                                            description="bm25 statistics"), strict=True)
    codes, uniques = pd.factorize(np.concatenate(terms))
    df = np.bincount(codes, weights=np.concatenate(dfs), minlength=len(uniques))
    idf = _idf(df.astype(np.int64), len(documents), config.method)[codes]
    bounds = np.cumsum([0, *map(len, terms)])
    doc_ids = documents[S.DOC_ID].to_numpy(dtype=object)
    tie = pd.factorize(doc_ids, sort=True)[0]
    index = executor.keep(_indexed, [(t, idf[a:z], tie[s], s.start) for t, a, z, s in zip(
        tokens, bounds[:-1], bounds[1:], doc_slices, strict=True)], shared={
        "config": config, "avg_length": np.concatenate(lengths).mean()},
        description="bm25 shards")
    del tokens  # the tokenised shards, no longer needed where they were kept
    blocks = list(product(index, query_slices))
    windows = executor.map(_searched, [(i, queries.iloc[q]) for i, q in blocks],
                           shared={"config": config, "depth": depth},
                           description="bm25 search")
    answers = [(q, w) for (_, q), w in zip(blocks, windows, strict=True)]
    run = sh.run_frame(queries, doc_ids, *sh.merge(answers, len(queries), depth, tie))
    log.info("bm25: searched %d queries over %d documents in %d shards at depth %d in %.2f s "
             "(%d candidates)", len(queries), len(documents), len(doc_slices), depth,
             time.perf_counter() - start, len(run))
    return Candidates(run=run, latency_ms=sh.latency_ms(answers, len(queries)), stats={
        "shards": sh.layout(len(documents), len(queries), shards.documents, shards.queries,
                            executor.workers)})
