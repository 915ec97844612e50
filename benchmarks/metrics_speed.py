"""releval's metrics engine against pytrec_eval (and ranx, when installed).

100,000 queries × 100 results; nDCG@10, R@100, RR, P@10, AP. pytrec_eval is timed on its
evaluate call alone (dicts prebuilt); releval on ``evaluate`` from DataFrames, including
validation, joining and ordering. Prints the times and the ratio releval / pytrec_eval
(target ≤ 0.5). Usage: python benchmarks/metrics_speed.py [--queries N] [--depth K]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytrec_eval
from timing import best_of

from releval.metrics import evaluate

MEASURES = ["nDCG@10", "R@100", "RR", "P@10", "AP"]
TREC = {"ndcg_cut.10", "recall.100", "recip_rank", "P.10", "map"}


def make(n_queries: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    docs = np.array([f"doc{i}" for i in range(max(1_000_000, depth * 10))], dtype=object)
    run = pd.DataFrame({
        "query_id": np.repeat(qids, depth),
        "doc_id": docs[(rng.integers(0, len(docs) - depth, n_queries)[:, None]
                        + np.arange(depth)).ravel()],
        "rank": np.tile(np.arange(1, depth + 1), n_queries),
    })
    run["score"] = -run["rank"].astype(float)
    judged = run.sample(frac=0.2, random_state=seed)[["query_id", "doc_id"]]
    qrels = judged.assign(grade=rng.integers(0, 4, len(judged)))
    return run, qrels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    run, qrels = make(args.queries, args.depth)
    print(f"{args.queries:,} queries × {args.depth} results, {len(qrels):,} judgments")

    ours, _ = best_of(lambda: evaluate(run, qrels, MEASURES), args.repeat)

    qd: dict = {}
    for q, d, g in zip(qrels.query_id, qrels.doc_id, qrels.grade, strict=True):
        qd.setdefault(q, {})[d] = int(g)
    rd: dict = {}
    for q, d, s in zip(run.query_id, run.doc_id, run.score, strict=True):
        rd.setdefault(q, {})[d] = float(s)
    evaluator = pytrec_eval.RelevanceEvaluator(qd, TREC)
    theirs, _ = best_of(lambda: evaluator.evaluate(rd), args.repeat)

    print(f"releval evaluate     {ours:8.2f} s")
    print(f"pytrec_eval evaluate {theirs:8.2f} s")
    print(f"ratio releval / pytrec_eval = {ours / theirs:.2f}  (target ≤ 0.50)")
    try:
        from ranx import Qrels, Run
        from ranx import evaluate as ranx_evaluate
    except ImportError:
        print("ranx not installed: skipped")
        return
    rq, rr = Qrels(qd), Run(rd)
    metrics = ["ndcg@10", "recall@100", "mrr", "precision@10", "map"]
    ranx_evaluate(rq, rr, metrics)  # compile (numba) outside the timing
    warm, _ = best_of(lambda: ranx_evaluate(rq, rr, metrics), args.repeat)
    print(f"ranx evaluate (warm) {warm:8.2f} s   ratio releval / ranx = {ours / warm:.2f}")


if __name__ == "__main__":
    main()
