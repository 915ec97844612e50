"""releval's metrics engine against pytrec_eval and ranx.

100,000 queries × 100 results; nDCG@10, R@100, RR, P@10, AP. pytrec_eval is timed on its
evaluate call alone (dicts prebuilt); releval on ``evaluate`` from DataFrames, including
validation, joining and ordering. ranx (numba) is not a dependency of releval: it is
installed into a throwaway virtual environment (``--ranx-venv``, default a temporary folder
removed afterwards; ``--no-ranx`` skips it) and timed there on the same data, its first call
(numba's compile) apart from its warm time. Prints the times and the ratios releval /
pytrec_eval (target ≤ 0.5) and releval / ranx warm (target ≤ 1).
Usage: python benchmarks/metrics_speed.py [--queries N] [--depth K] [--repeat R]
       [--no-ranx] [--ranx-venv DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytrec_eval
from timing import best_of

from releval.metrics.engine import evaluate

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
    ap.add_argument("--no-ranx", action="store_true", help="skip the ranx anchor")
    ap.add_argument("--ranx-venv", default=None,
                    help="an existing or new venv for ranx (default: a temporary one)")
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
    if args.no_ranx:
        print("ranx: skipped (--no-ranx)")
        return
    timed = ranx_times(run, qrels, args.repeat, args.ranx_venv)
    if timed is not None:
        cold, warm = timed
        print(f"ranx evaluate (warm) {warm:8.2f} s   first call (numba compile) {cold:.2f} s")
        print(f"ratio releval / ranx warm = {ours / warm:.2f}  (target ≤ 1.00)")


RANX = """
import json, sys, time
from ranx import Qrels, Run, evaluate
with open(sys.argv[1]) as f:
    data = json.load(f)
qrels, run = Qrels(data["qrels"]), Run(data["run"])
metrics = ["ndcg@10", "recall@100", "mrr", "precision@10", "map"]
start = time.perf_counter()
evaluate(qrels, run, metrics)
cold = time.perf_counter() - start
warm = float("inf")
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    evaluate(qrels, run, metrics)
    warm = min(warm, time.perf_counter() - start)
print(cold, warm)
"""


def ranx_times(run: pd.DataFrame, qrels: pd.DataFrame, repeat: int,
               venv: str | None) -> tuple[float, float] | None:
    """(first call, best warm call) of ranx's evaluate on the same data, in its own venv;
    None (said why) when it cannot be installed there."""
    scratch = Path(tempfile.mkdtemp(prefix="releval-ranx-"))
    home = Path(venv) if venv else scratch / "venv"
    try:
        python = home / "bin" / "python"
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
        installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "ranx"],
                                   capture_output=True, text=True, timeout=600)
        if installed.returncode != 0:
            print(f"ranx: could not be installed in {home}: {installed.stderr[-500:]}")
            return None
        data = {"qrels": {}, "run": {}}
        for q, d, g in zip(qrels.query_id, qrels.doc_id, qrels.grade, strict=True):
            data["qrels"].setdefault(q, {})[d] = int(g)
        for q, d, sc in zip(run.query_id, run.doc_id, run.score, strict=True):
            data["run"].setdefault(q, {})[d] = float(sc)
        path = scratch / "data.json"
        with open(path, "w") as f:
            json.dump(data, f)
        del data
        out = subprocess.run([str(python), "-c", RANX, str(path), str(repeat)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"ranx: failed: {out.stderr[-800:]}")
            return None
        cold, warm = map(float, out.stdout.split())
        return cold, warm
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"ranx: could not be run ({exc})")
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
