"""releval's BM25 route against bm25s called directly, on one synthetic corpus.

Documents and queries draw words from a Zipf-distributed synthetic vocabulary. releval is
timed on ``BM25Retriever.index`` + ``search`` (visibility computed for every batch, here
allowing every document; candidates returned as a run frame); bm25s on ``tokenize`` +
``BM25.index`` + ``retrieve(k=depth)`` with the same tokenisation settings. Prints both
best-of-``--repeat`` times and the ratio releval / bm25s (target ≤ 1.25).
Usage: python benchmarks/bm25_speed.py [--docs N] [--queries N] [--depth K] [--repeat R]
"""

from __future__ import annotations

import argparse

import bm25s
import numpy as np
import pandas as pd
import Stemmer
from timing import best_of

from releval.data.visibility import Visibility
from releval.retrieval.bm25 import BM25Retriever


def words(rng: np.random.Generator, n_vocab: int) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 10, n_vocab)
    return np.array(["".join(rng.choice(letters, n)) for n in lengths], dtype=object)


def texts(rng: np.random.Generator, vocab: np.ndarray, n: int, low: int, high: int) -> list[str]:
    lengths = rng.integers(low, high, n)
    ids = np.minimum(rng.zipf(1.2, lengths.sum()), len(vocab)) - 1
    return [" ".join(part) for part in np.split(vocab[ids], np.cumsum(lengths)[:-1])]


def make(n_docs: int, n_queries: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    vocab = words(rng, 50_000)
    published = pd.Timestamp("2024-01-01", tz="UTC")
    documents = pd.DataFrame({
        "doc_id": [f"d{i}" for i in range(n_docs)],
        "title": texts(rng, vocab, n_docs, 3, 10),
        "text": texts(rng, vocab, n_docs, 30, 120),
        "source_id": [f"s{i}" for i in range(n_docs)],
        "published_at": published,
        "status": "published",
        "deleted_at": pd.Series(pd.NaT, index=range(n_docs), dtype="datetime64[ns, UTC]"),
        "tenant": "t",
        "acl": [[] for _ in range(n_docs)],
    })
    queries = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(n_queries)],
        "text": texts(rng, vocab, n_queries, 2, 6),
        "issued_at": published + pd.Timedelta(days=1),
        "user_id": "u",
        "tenant": "t",
        "groups": [[] for _ in range(n_queries)],
        "role": "employee",
        "tags": [[] for _ in range(n_queries)],
        "weight": 1.0,
    })
    return documents, queries


def releval_bm25(documents: pd.DataFrame, queries: pd.DataFrame, depth: int) -> int:
    retriever = BM25Retriever()
    retriever.index(documents)
    return len(retriever.search(queries, depth, Visibility(documents)).run)


def direct_bm25s(documents: pd.DataFrame, queries: pd.DataFrame, depth: int) -> int:
    stemmer = Stemmer.Stemmer("english")
    corpus = (documents["title"] + " " + documents["text"]).tolist()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    query_tokens = bm25s.tokenize(queries["text"].tolist(), stopwords="en", stemmer=stemmer,
                                  return_ids=False, show_progress=False)
    docs, _ = retriever.retrieve(query_tokens, k=depth, show_progress=False)
    return docs.size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = ap.parse_args()
    documents, queries = make(args.docs, args.queries)
    print(f"{args.docs:,} documents, {args.queries:,} queries, depth {args.depth}")

    ours, _ = best_of(lambda: releval_bm25(documents, queries, args.depth), args.repeat)
    theirs, _ = best_of(lambda: direct_bm25s(documents, queries, args.depth), args.repeat)

    print(f"releval BM25Retriever {ours:8.2f} s  (index + search, with visibility)")
    print(f"bm25s direct          {theirs:8.2f} s  (tokenize + index + retrieve)")
    print(f"ratio releval / bm25s = {ours / theirs:.2f}  (target ≤ 1.25)")


if __name__ == "__main__":
    main()
