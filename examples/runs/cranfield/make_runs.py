"""The three example runs over Cranfield (README: the runs-only road): BM25 with three
settings of k1 and b over title + text (bm25s, English stemmer and stopwords), top 100 per
query, written as TREC run files. ``flat`` was cut short: its last 25 queries are missing, as
in a run that stopped early. Run from a checkout beside ../shared:

    python examples/runs/cranfield/make_runs.py
"""

import json
from pathlib import Path

import bm25s
import Stemmer

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[3] / "shared" / "data" / "cranfield"
SYSTEMS = {"bm25": (1.2, 0.75), "tuned": (0.9, 0.4), "flat": (2.0, 0.0)}
CUT_SHORT = {"flat": 25}  # queries left out at the end


def main() -> None:
    corpus = [json.loads(line) for line in (DATA / "corpus.jsonl").open()]
    queries = [json.loads(line) for line in (DATA / "queries.jsonl").open()]
    stem = Stemmer.Stemmer("english")
    texts = [f"{d.get('title') or ''} {d.get('text') or ''}" for d in corpus]
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False)
    asked = bm25s.tokenize([q["text"] for q in queries], stopwords="en", stemmer=stem,
                           show_progress=False)
    for name, (k1, b) in SYSTEMS.items():
        index = bm25s.BM25(k1=k1, b=b)
        index.index(tokens, show_progress=False)
        docs, scores = index.retrieve(asked, k=100, show_progress=False)
        kept = len(queries) - CUT_SHORT.get(name, 0)
        with (HERE / f"{name}.trec").open("w") as out:
            for q, ranked, scored in list(zip(queries, docs, scores, strict=True))[:kept]:
                for rank, (d, s) in enumerate(zip(ranked, scored, strict=True), 1):
                    out.write(f"{q['_id']} Q0 {corpus[d]['_id']} {rank} {s:.4f} {name}\n")


if __name__ == "__main__":
    main()
