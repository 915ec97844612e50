"""Deliberately broken subjects, one per relation: each is the defect its relation exists to
catch, so the relation must go red on it."""

import zlib

import bm25s
import faiss
import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import visible_pairs
from releval.metrics.engine import evaluate
from releval.retrieval.base import Candidates
from releval.retrieval.bm25 import BM25Retriever
from releval.retrieval.dense import DenseRetriever
from releval.retrieval.fusion import fuse
from releval.selftest.cases import Subjects, build_retriever


def _reranked(run: pd.DataFrame) -> pd.DataFrame:
    """``run``'s rows (in rank order per query) ranked 1..n again."""
    run = run.sort_values([S.QUERY_ID, S.RANK], kind="stable")
    return run.assign(**{S.RANK: run.groupby(S.QUERY_ID).cumcount().to_numpy() + 1})


class FirstTermDouble(BM25Retriever):
    """Weights the query's first term double."""

    def _scores(self, texts):
        vocab = self._bm25.vocab_dict
        rows = []
        for tokens in self._tokenize(texts, return_ids=False):
            ids = [vocab[t] for t in tokens if t in vocab]
            rows.append(self._bm25.get_scores_from_ids(ids + ids[:1]))
        return np.stack(rows)


class UnknownTermsAsCommonest(BM25Retriever):
    """Reads a term missing from the vocabulary as the indexed term most documents hold."""

    def _scores(self, texts):
        vocab = self._bm25.vocab_dict
        postings = np.diff(self._bm25.scores["indptr"])
        commonest = min(vocab, key=lambda t: (-postings[vocab[t]], t))
        return np.stack([self._bm25.get_scores_from_ids([vocab.get(t, vocab[commonest])
                                                         for t in tokens])
                         for tokens in self._tokenize(texts, return_ids=False)])


class UnstemmedQueries(BM25Retriever):
    """Stems the indexed text but not the queries."""

    def _tokenize(self, texts, return_ids):
        return bm25s.tokenize(texts, lower=self.lowercase, stopwords=self.stopwords,
                              stemmer=self._stemmer if return_ids else None,
                              return_ids=return_ids, show_progress=False)


class SaltedByDocId(BM25Retriever):
    """Scales each document's score by a factor drawn from its doc_id's hash."""

    def index(self, documents):
        super().index(documents)
        self._salt = np.array([1 + zlib.crc32(str(d).encode()) % 7 / 100 for d in self._doc_ids],
                              np.float32)

    def _scores(self, texts):
        return super()._scores(texts) * self._salt


class ShallowPool(BM25Retriever):
    """A first stage cut at the depth asked (BM25 with b = 0, k1 = 0.1), re-ranked by BM25:
    a deeper window draws on a deeper pool."""

    def index(self, documents):
        super().index(documents)
        self._pool = BM25Retriever(k1=0.1, b=0.0)
        self._pool.index(documents)

    def search(self, queries, depth, visibility):
        pool = self._pool.search(queries, depth, visibility).run[[S.QUERY_ID, S.DOC_ID]]
        full = super().search(queries, len(self._doc_ids), visibility)
        run = _reranked(full.run.merge(pool, on=[S.QUERY_ID, S.DOC_ID]))
        return Candidates(run, full.latency_ms)


class _Everyone:
    """A visibility under which every query sees every indexed document."""

    def __init__(self, visibility):
        self.doc_ids = visibility.doc_ids

    def mask(self, queries):
        return np.ones((len(queries), len(self.doc_ids)), bool)


class FilterAfterTopK(BM25Retriever):
    """Takes the top depth of every document, then drops the ones the query may not see."""

    def search(self, queries, depth, visibility):
        found = super().search(queries, depth, _Everyone(visibility))
        seen = visible_pairs(visibility, queries, found.run)
        return Candidates(_reranked(found.run[seen]), found.latency_ms)


class PerturbedVectors(DenseRetriever):
    """Indexes each document vector plus Gaussian noise (σ = 0.05)."""

    def index(self, documents):
        super().index(documents)
        noise = np.random.default_rng(0).normal(0, 0.05, self._vectors.shape)
        self._vectors += noise.astype(np.float32)


class UnrefilledGraph(DenseRetriever):
    """Asks the HNSW graph for exactly depth neighbours at efSearch 1 and drops the ones the
    query may not see, without asking again."""

    def _ann(self, q, mask, depth):
        params = faiss.SearchParametersHNSW(efSearch=1)
        values, labels = self._index.search(q, depth, params=params)
        rows, cols = np.nonzero(labels >= 0)
        docs = labels[rows, cols]
        keep = mask[rows, docs]
        rows, docs, values = rows[keep], docs[keep], values[rows[keep], cols[keep]]
        ranks = np.arange(1, len(rows) + 1) - np.searchsorted(rows, rows, side="left")
        return rows, docs, ranks, values


def drops_ties(runs, depth, params):
    """Fuses, then keeps only the first document of each run of equal fused scores."""
    fused = fuse(runs, depth, params)
    return _reranked(fused[~fused.duplicated([S.QUERY_ID, S.SCORE])])


def equal_weights(runs, depth, params):
    """Linear fusion that weighs every route alike, whatever the weights say."""
    if params["method"] == "linear":
        params = params | {"weights": dict.fromkeys(runs, 0.5)}
    return fuse(runs, depth, params)


def file_order(run, qrels, measures, **options):
    """Ranks a query's documents in the order of the run's rows, not by rank."""
    return evaluate(run.assign(**{S.RANK: run.groupby(S.QUERY_ID).cumcount() + 1}), qrels,
                    measures, **options)


def truncated_ids(run, qrels, measures, **options):
    """Keys documents by the first six characters of their doc_id."""
    def cut(table):
        table = table.assign(**{S.DOC_ID: table[S.DOC_ID].astype(str).str[:6]})
        return table.drop_duplicates([S.QUERY_ID, S.DOC_ID])
    return evaluate(_reranked(cut(run)) if S.RANK in run.columns else cut(run), cut(qrels),
                    measures, **options)


def first_block(run, qrels, measures, **options):
    """Reads only the first contiguous block of each query's rows."""
    block = (run[S.QUERY_ID] != run[S.QUERY_ID].shift()).cumsum()
    first = block.groupby(run[S.QUERY_ID]).transform("min")
    return evaluate(run[block == first], qrels, measures, **options)


def reversed_ranks(run, qrels, measures, **options):
    """Reads rank 1 as the last position of the list."""
    last = run.groupby(S.QUERY_ID)[S.RANK].transform("max")
    return evaluate(run.assign(**{S.RANK: last - run[S.RANK] + 1}), qrels, measures, **options)


def retrievers(route: str, cls) -> Subjects:
    """Subjects whose ``route`` systems are built as ``cls`` (the others as releval's)."""
    def build(config):
        if config.route != route:
            return build_retriever(config)
        settings = config.model_dump()
        settings.pop("route")
        return cls(**settings)
    return Subjects(retriever=build)


# relation -> (the broken subjects that must turn it red, the route they break: None for the
# fusion and the evaluator)
MUTANTS = {
    "term_permutation": (retrievers("bm25", FirstTermDouble), "bm25"),
    "absent_term": (retrievers("bm25", UnknownTermsAsCommonest), "bm25"),
    "analyzer_agreement": (retrievers("bm25", UnstemmedQueries), "bm25"),
    "doc_rename": (retrievers("bm25", SaltedByDocId), "bm25"),
    "prefix_stability": (retrievers("bm25", ShallowPool), "bm25"),
    "invisible_document": (retrievers("bm25", FilterAfterTopK), "bm25"),
    "brute_force": (retrievers("dense", PerturbedVectors), "dense"),
    "hnsw_exact": (retrievers("dense", UnrefilledGraph), "dense"),
    "self_fusion": (Subjects(fuse=drops_ties), None),
    "unit_weights": (Subjects(fuse=equal_weights), None),
    "row_permutation": (Subjects(evaluate=file_order), None),
    "id_rename": (Subjects(evaluate=truncated_ids), None),
    "split_files": (Subjects(evaluate=first_block), None),
    "ideal_ndcg": (Subjects(evaluate=reversed_ranks), None),
}
