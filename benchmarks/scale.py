"""Scale-out: releval's work on one process against a Dask LocalCluster of 1 and 2 workers.

A corpus of ``--docs`` documents and ``--queries`` queries comes from the demo generator
(its vocabulary, visibility rules and ground truth as qrels). The dense part reads stored
random 384-d unit vectors: they are written once into the content-keyed embedding cache
under the default model's key, so the dense route finds every text cached and encoding
time does not count. Each configuration runs in a process of its own, in order:

- bm25: every query to ``--depth``, ``--shard-docs`` documents per shard (corpus-wide
  statistics shared, per-shard top k merged); local runs the same shards one after the
  other, and also searches the first ``--single-queries`` queries on one ``BM25Retriever``
  index, whose windows must equal the sharded ones;
- dense: exact search for the first ``--dense-queries`` queries (exact per shard, merged),
  then the same with an IVF index per shard (``--nlist``, ``--nprobe``) and its ANN recall
  against the exact merged top k on a sample of those queries;
- evaluate: the BM25 run against the qrels (nDCG@10, R@100, RR@10, AP), in query blocks;
- bootstrap: the 95% CI of mean nDCG@10 over all queries from ``--resamples`` draws, in
  seeded blocks of draws (``releval.decision.stats``).

Prints, per phase and configuration, the wall time and the speed-up against ``local``
measured in the same run (the anchor), and the peak resident memory of the driver and of each
worker; then whether every configuration's runs (query_id, doc_id, rank, score, in order),
metrics and CI equal local's. Needs about 3 GB of disk for the stored vectors of 1M docs.
Usage: python benchmarks/scale.py [--docs N] [--queries N] [--dense-queries N] [--depth K]
  [--single-queries N] [--resamples B] [--workers 1 2] [--shard-docs N] [--block-queries N]
  [--nlist N] [--nprobe N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from releval import executor
from releval.data import contracts as S
from releval.decision.stats import mean_ci
from releval.demo.generator import generate
from releval.metrics.engine import evaluate
from releval.retrieval.routes import ROUTES, search

MEASURES = ["nDCG@10", "R@100", "RR@10", "AP"]
DIM = 384


def digest(frame: pd.DataFrame) -> str:
    return hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).to_numpy()
                          .tobytes()).hexdigest()[:16]


def prepare(folder: Path, args) -> None:
    """The corpus, queries and qrels as parquet, and random vectors in the embedding cache."""
    start = time.perf_counter()
    data = generate(n_docs=args.docs, n_queries=args.queries, seed=7)
    data.documents.to_parquet(folder / "documents.parquet", index=False)
    data.queries.to_parquet(folder / "queries.parquet", index=False)
    data.ground_truth.to_parquet(folder / "qrels.parquet", index=False)
    route = ROUTES["dense"]
    config = route.params(cache_dir=str(folder / "cache"))
    dense = route.retriever(**{k: v for k, v in config.model_dump().items() if k != "route"})
    rng = np.random.default_rng(7)

    def random_vectors(texts: list[str]) -> np.ndarray:
        v = rng.standard_normal((len(texts), DIM), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    dense.document_cache.encode(dense.document_texts(data.documents), random_vectors)
    dense.query_cache.encode(data.queries[S.TEXT].fillna("").astype(str).tolist(),
                             random_vectors)
    print(f"prepared {len(data.documents):,} documents, {len(data.queries):,} queries, "
          f"{len(data.ground_truth):,} judgments and their stored vectors in "
          f"{time.perf_counter() - start:.0f} s", flush=True)


def measure(folder: Path, config: str, args) -> dict:
    """One configuration ("local" or "dask<N>"): timings, peak memory and result digests."""
    documents = pd.read_parquet(folder / "documents.parquet")
    queries = pd.read_parquet(folder / "queries.parquet")
    qrels = pd.read_parquet(folder / "qrels.parquet")
    workers = 0 if config == "local" else int(config.removeprefix("dask"))
    shards = executor.Shards(documents=args.shard_docs, queries=args.block_queries)
    dense = ROUTES["dense"].params(cache_dir=str(folder / "cache"))
    ivf = dense.model_copy(update={"index": "ivf", "nlist": args.nlist,
                                   "nprobe": args.nprobe})
    out: dict = {"config": config, "seconds": {}, "digests": {}}
    settings = executor.DaskSettings(n_workers=max(workers, 1))
    with executor.opened("dask" if workers else "local", settings) as ex:
        if workers:
            ex.map(abs, [0] * workers)  # start the cluster before the clock
        timed = out["seconds"]

        def phase(name: str, fn):
            start = time.perf_counter()
            result = fn()
            timed[name] = time.perf_counter() - start
            print(f"  {config:>6} {name:<10} {timed[name]:8.1f} s", flush=True)
            return result

        bm25 = phase("bm25", lambda: search(ROUTES["bm25"].params(), documents, queries,
                                            args.depth, shards=shards))
        some = queries.iloc[:args.dense_queries]
        exact = phase("dense", lambda: search(dense, documents, some, args.depth,
                                              shards=shards))
        approx = phase("dense_ivf", lambda: search(ivf, documents, some, args.depth,
                                                   shards=shards))
        if not workers:  # the single index on a sample: the sharded windows must equal it
            sample = queries.iloc[:args.single_queries]
            single = phase("bm25_one", lambda: search(ROUTES["bm25"].params(), documents,
                                                      sample, args.depth))
            out["single_equal"] = bool(single.run.equals(
                bm25.run[bm25.run[S.QUERY_ID].isin(sample[S.QUERY_ID])]
                .reset_index(drop=True)))
        scored = phase("evaluate", lambda: evaluate(bm25.run, qrels, MEASURES))
        values = scored.per_query.loc[scored.per_query[S.MEASURE] == "nDCG@10", S.VALUE]
        ci = phase("bootstrap", lambda: mean_ci(values.to_numpy(), resamples=args.resamples,
                                                alpha=0.05, seed=0))
        out["memory_mib"] = {"driver": executor.peak_rss_mib(),
                             "workers": ex.peak_memory_mib() if workers else []}
    recall = f"ann_recall@{args.depth}"
    out["ann_recall"] = approx.stats.get(recall)
    out["ann_sample"] = approx.stats.get("ann_recall_sample")
    out["digests"] = {"bm25": digest(bm25.run), "dense": digest(exact.run),
                      "per_query": digest(scored.per_query),
                      "summary": digest(scored.summary), "ci": json.dumps(ci)}
    out["candidates"] = {"bm25": len(bm25.run), "dense": len(exact.run)}
    return out


def table(results: list[dict]) -> None:
    anchor = results[0]["seconds"]
    phases = [p for p in anchor if p != "bm25_one"]
    print(f"\nsingle BM25 index ({anchor['bm25_one']:.1f} s for the sample) equals the "
          f"sharded windows: {'yes' if results[0]['single_equal'] else 'NO'}")
    print(f"\n{'phase':<10}" + "".join(f"{r['config']:>20}" for r in results))
    for name in [*phases, "total"]:
        cells = []
        for r in results:
            s = r["seconds"]
            value = sum(s[p] for p in phases) if name == "total" else s[name]
            base = sum(anchor[p] for p in phases) if name == "total" else anchor[name]
            cells.append(f"{value:8.1f} s ({base / value:4.2f}x)")
        print(f"{name:<10}" + "".join(f"{c:>20}" for c in cells))
    memory = []
    for r in results:
        peaks = r["memory_mib"]
        memory.append(" ".join([f"drv {peaks['driver']:.0f}",
                                *(f"w {w:.0f}" for w in peaks["workers"])]))
    print("peak MiB  " + "".join(f"{m:>20}" for m in memory))
    for r in results:
        if r["ann_recall"] is not None:
            print(f"{r['config']}: IVF ann_recall@k {r['ann_recall']:.4f} on "
                  f"{r['ann_sample']} sampled queries")
    same = {k: all(r["digests"][k] == results[0]["digests"][k] for r in results)
            for k in results[0]["digests"]}
    print("identical to local: " + ", ".join(f"{k} {'yes' if v else 'NO'}"
                                              for k, v in same.items()))
    if not all(same.values()) or not results[0]["single_equal"]:
        sys.exit(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--dense-queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--single-queries", type=int, default=1_000)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--shard-docs", type=int, default=250_000)
    ap.add_argument("--block-queries", type=int, default=10_000)
    ap.add_argument("--nlist", type=int, default=1024)
    ap.add_argument("--nprobe", type=int, default=16)
    ap.add_argument("--keep", type=Path, help="folder for the generated data (kept)")
    ap.add_argument("--config", help=argparse.SUPPRESS)  # one configuration, in a child
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.config:
        print("RESULT " + json.dumps(measure(args.data, args.config, args)), flush=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "qrels.parquet").exists():
            prepare(folder, args)
        results = []
        passed = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items()
                  if k not in ("keep", "config", "data", "workers")]
        for config in ["local", *(f"dask{w}" for w in args.workers)]:
            child = subprocess.run(
                [sys.executable, __file__, *passed, "--config", config, "--data", str(folder)],
                stdout=subprocess.PIPE, text=True, check=True)
            for line in child.stdout.splitlines():
                if line.startswith("RESULT "):
                    results.append(json.loads(line[7:]))
                elif line.strip():
                    print(line, flush=True)
        table(results)


if __name__ == "__main__":
    main()
