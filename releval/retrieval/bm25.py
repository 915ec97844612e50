"""The BM25 route: bm25s scoring under the visibility rule, exact and deterministic.

Index text is ``title + " " + text``, tokenised by ``bm25s.tokenize`` (lowercasing,
stopwords, PyStemmer stemming). ``search`` scores every query against every document
(bm25s ``get_scores_from_ids``, the query's terms in sorted order, so the order of its
terms changes no score), zeroes the documents the query may not see, and keeps the
best ``depth`` positive scores (score descending, then doc_id ascending). So a forbidden
document never enters a window, and a window is short only when fewer than ``depth`` visible
documents contain a query term. Queries run in batches whose score matrix holds at most
``MAX_CELLS`` entries, so memory stays bounded for any corpus size. A query's latency is its
batch's wall time (tokenise, score, mask, select) divided by the batch size.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import Stemmer

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.progress import track
from releval.retrieval.base import (
    CANDIDATE_COLUMNS,
    Candidates,
    check_search,
    top_k,
)

if TYPE_CHECKING:  # imported where used: numba's JIT costs every stage's start
    import bm25s

log = logging.getLogger(__name__)

# bm25s variants in which a document holding no query term scores exactly 0 (bm25l and
# bm25+ give every document a positive floor, which would make every document a candidate).
METHODS = ("robertson", "lucene", "atire")
MAX_CELLS = 1 << 25  # score-matrix cells per batch (float32: 128 MiB)


class BM25Retriever:
    """BM25 over title + text with bm25s; see the module docstring for the search contract."""

    route = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene",
                 stemmer: str | None = "english", stopwords: str | None = "en",
                 lowercase: bool = True, batch_size: int = 256):
        if not k1 >= 0:
            raise InputError(f"k1 must be ≥ 0, got {k1!r}", "bm25")
        if not 0 <= b <= 1:
            raise InputError(f"b must be in [0, 1], got {b!r}", "bm25")
        if method not in METHODS:
            raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}", "bm25")
        if stemmer is not None and stemmer not in Stemmer.algorithms():
            raise InputError(f"unknown stemmer {stemmer!r}; PyStemmer has "
                             f"{', '.join(Stemmer.algorithms())}", "bm25")
        self.k1, self.b, self.method = k1, b, method
        self.stopwords, self.lowercase = stopwords, lowercase
        self.batch_size = S.integer("batch_size", batch_size, source="retriever")
        self._stemmer = Stemmer.Stemmer(stemmer) if stemmer is not None else None
        try:
            self._tokenize([], return_ids=False)
        except ValueError as exc:  # bm25s rejects an unknown stopword language
            raise InputError(f"stopwords: {exc}", "bm25") from None
        self._bm25: bm25s.BM25 | None = None

    def _tokenize(self, texts: list[str], return_ids: bool):
        import bm25s

        return bm25s.tokenize(texts, lower=self.lowercase, stopwords=self.stopwords,
                              stemmer=self._stemmer, return_ids=return_ids, show_progress=False)

    def index(self, documents: pd.DataFrame) -> None:
        """Index ``documents`` (doc_id unique, else InputError); replaces any earlier index."""
        import bm25s

        if documents.empty:
            raise InputError("no documents to index", documents.attrs.get("source", "documents"))
        S.require_unique(documents, S.DOC_ID, "documents")
        start = time.perf_counter()
        texts = (documents[S.TITLE].fillna("").astype(str) + " "
                 + documents[S.TEXT].fillna("").astype(str)).tolist()
        bm25 = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        bm25.index(self._tokenize(texts, return_ids=True), create_empty_token=False,
                   show_progress=False)
        self._bm25 = bm25
        self._doc_ids = documents[S.DOC_ID].to_numpy(dtype=object)
        self._tie_order = pd.factorize(self._doc_ids, sort=True)[0]  # doc_id's sorted position
        log.info("bm25: indexed %d documents (%d terms) in %.2f s", len(texts),
                 len(bm25.vocab_dict), time.perf_counter() - start)

    def _scores(self, texts: list[str]) -> np.ndarray:
        """(len(texts), n_documents) float32 BM25 scores, one bm25s score vector per query.

        bm25s adds the terms' float32 contributions in the order it is given them, so each
        query's terms are passed in sorted order (of the terms, not of their ids, which bm25s
        assigns in an order that changes from process to process): a query's scores, and so
        its ties, depend neither on the order of its terms nor on the process."""
        vocab = self._bm25.vocab_dict
        return np.stack([self._bm25.get_scores_from_ids([vocab[t] for t in sorted(tokens)
                                                         if t in vocab])
                         for tokens in self._tokenize(texts, return_ids=False)])

    def search(self, queries: pd.DataFrame, depth: int, visibility: Visibility) -> Candidates:
        """Top ``depth`` visible documents with a positive score, per query (module docstring).

        ``visibility`` must be built from the indexed documents table (same doc_ids, same
        order); query_id must be unique. Both are InputErrors otherwise.
        """
        depth = check_search(depth, None if self._bm25 is None else self._doc_ids, visibility,
                             queries)
        start = time.perf_counter()
        size = max(1, min(self.batch_size, MAX_CELLS // len(self._doc_ids)))
        firsts = range(0, len(queries), size)
        latency = np.zeros(len(queries))
        parts = [(np.zeros(0, np.intp),) * 3 + (np.zeros(0, np.float32),)]
        for first in track(firsts, description="bm25 search", disable=len(firsts) < 2,
                           transient=True):
            tick = time.perf_counter()
            batch = queries.iloc[first:first + size]
            scores = self._scores(batch[S.TEXT].fillna("").astype(str).tolist())
            scores *= visibility.mask(batch)
            rows, cols, ranks = top_k(scores, depth, self._tie_order)
            parts.append((rows + first, cols, ranks, scores[rows, cols]))
            latency[first:first + len(batch)] = (time.perf_counter() - tick) * 1e3 / len(batch)
        rows, cols, ranks, values = (np.concatenate(p) for p in zip(*parts, strict=True))
        qids = queries[S.QUERY_ID].to_numpy(dtype=object)
        run = pd.DataFrame(dict(zip(CANDIDATE_COLUMNS, (
            pd.Series(qids[rows], dtype="str"), pd.Series(self._doc_ids[cols], dtype="str"),
            ranks.astype(np.int64), values.astype(np.float64)), strict=True)))
        log.info("bm25: searched %d queries at depth %d in %.2f s (%d candidates)",
                 len(queries), depth, time.perf_counter() - start, len(run))
        return Candidates(run=run, latency_ms=latency)
