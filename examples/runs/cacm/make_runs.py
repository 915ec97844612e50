"""The two example runs over CACM (docs/api.md): BM25 over title + abstract (``bm25``: k1 1.2,
b 0.75) and a tuned variant that also indexes the authors and keywords (``tuned``: k1 1.2,
b 0.5), bm25s with the English stemmer and stopwords, top 100 for each of CACM's judged
queries, written as TREC run files. Run from a checkout beside ../shared:

    python examples/runs/cacm/make_runs.py
"""

import csv
import json
from pathlib import Path

import bm25s
import Stemmer

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[3] / "shared" / "data" / "cacm"
SYSTEMS = {"bm25": (1.2, 0.75, False), "tuned": (1.2, 0.5, True)}  # k1, b, with metadata


def text(document: dict, metadata: bool) -> str:
    """What a system indexes of ``document``: title and abstract, and with ``metadata`` its
    authors and keywords."""
    parts = [document.get("title") or "", document.get("text") or ""]
    if metadata:
        meta = document.get("metadata") or {}
        parts += [" ".join(meta.get("authors") or []), meta.get("keywords") or ""]
    return " ".join(parts)


def main() -> None:
    corpus = [json.loads(line) for line in (DATA / "corpus.jsonl").open()]
    with (DATA / "qrels" / "test.tsv").open() as f:
        judged = {row["query-id"] for row in csv.DictReader(f, delimiter="\t")}
    queries = [q for q in map(json.loads, (DATA / "queries.jsonl").open()) if q["_id"] in judged]
    stem = Stemmer.Stemmer("english")
    asked = bm25s.tokenize([q["text"] for q in queries], stopwords="en", stemmer=stem,
                           show_progress=False)
    for name, (k1, b, metadata) in SYSTEMS.items():
        tokens = bm25s.tokenize([text(d, metadata) for d in corpus], stopwords="en",
                                stemmer=stem, show_progress=False)
        index = bm25s.BM25(k1=k1, b=b)
        index.index(tokens, show_progress=False)
        docs, scores = index.retrieve(asked, k=100, show_progress=False)
        with (HERE / f"{name}.trec").open("w") as out:
            for q, ranked, scored in zip(queries, docs, scores, strict=True):
                for rank, (d, s) in enumerate(zip(ranked, scored, strict=True), 1):
                    out.write(f"{q['_id']} Q0 {corpus[d]['_id']} {rank} {s:.4f} {name}\n")


if __name__ == "__main__":
    main()
