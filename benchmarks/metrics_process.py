"""The whole process from TREC files: ``releval metrics`` against pytrec_eval and trec_eval.

Writes a synthetic TREC run (``--queries`` × ``--depth``, ordered by query and score, as
search systems write them) and qrels (a fifth of the ranked documents judged, grades 0..3,
grouped by query) under a temporary folder (``--workdir``, default under /tmp; never the
repository), then times each tool as its own process, start to output, best of
``--repeat``, with each process's peak RSS:

- releval: ``releval metrics QRELS RUN -m nDCG@10 -m R@100 -m RR -m P@10 -m AP
  --format trec`` (Python start-up and imports included);
- pytrec_eval: a Python process that parses both files with ``pytrec_eval.parse_qrel`` /
  ``parse_run``, evaluates the same five measures and prints their means (run with its
  address space capped at ``--anchor-memory-gb``: past it, it is reported as not fitting);
- trec_eval's C binary, built here with ``make`` from a copy of its source given by
  ``--trec-eval-src`` or ``$TREC_EVAL_SRC`` (a folder, or an already built binary); without
  one, that anchor is skipped and says so.

Prints every time, RSS and the ratios releval / anchor (target ≤ 0.33 against pytrec_eval).
releval is timed once first with an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a new
folder: the first process after an install, which compiles the engine's loops), then from
the cache. Also times ``releval --help`` (start-up alone). The 1,000,000 × 100 check:
``python benchmarks/metrics_process.py --queries 1000000 --repeat 1`` (target: ≤ 30 s,
peak RSS ≤ 4 GB; the files take about 4 GB of disk in the workdir, created if missing). Also
prints each process's CPU seconds (user + system) and the load average before and after: on a
loaded machine the wall time says little alone.
Usage: python benchmarks/metrics_process.py [--queries N] [--depth K] [--repeat R]
       [--trec-eval-src PATH] [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv

MEASURES = ["nDCG@10", "R@100", "RR", "P@10", "AP"]
TREC = ["ndcg_cut.10", "recall.100", "recip_rank", "P.10", "map"]
PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrel = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
measures = sys.argv[3:]
result = pytrec_eval.RelevanceEvaluator(qrel, set(measures)).evaluate(run)
for m in measures:
    key = m.replace(".", "_")
    print(key, "all", f"{sum(v[key] for v in result.values()) / len(result):.4f}")
"""
BLOCK = 20_000  # queries written per batch
RATIO, SECONDS, GB = 0.33, 30.0, 4.0  # the targets: against pytrec_eval; at 1,000,000 queries
print = functools.partial(print, flush=True)  # noqa: A001 (progress survives a killed run)


def _ids(prefix: str, numbers: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")


def write_files(folder: Path, n_queries: int, depth: int, seed: int = 0) -> tuple[Path, Path]:
    """A run and its qrels as TREC files (space-separated, one line per record)."""
    rng = np.random.default_rng(seed)
    run_path, qrels_path = folder / "run.trec", folder / "qrels.txt"
    n_docs = max(1_000_000, depth * 10)
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_schema = pa.schema([(c, pa.string()) for c in ("q", "q0", "d", "r", "s", "t")])
    qrels_schema = pa.schema([(c, pa.string()) for c in ("q", "i", "d", "g")])
    with csv.CSVWriter(run_path, run_schema, write_options=options) as run_out, \
            csv.CSVWriter(qrels_path, qrels_schema, write_options=options) as qrels_out:
        for q0 in range(0, n_queries, BLOCK):
            nq = min(BLOCK, n_queries - q0)
            q = np.repeat(np.arange(q0, q0 + nq), depth)
            doc = (rng.integers(0, n_docs - depth, nq)[:, None] + np.arange(depth)).ravel()
            rank = np.tile(np.arange(1, depth + 1), nq)
            score = np.round(30.0 - 25.0 * np.log1p(rank) / np.log1p(depth)
                             + rng.random(len(rank)) * 1e-4, 4)
            score = -np.sort(-score.reshape(nq, depth), axis=1).ravel()
            n = len(q)
            run_out.write_table(pa.table([
                _ids("q", q), pa.array(["Q0"] * n), _ids("doc", doc),
                pc.cast(pa.array(rank), pa.string()), pc.cast(pa.array(score), pa.string()),
                pa.array(["bench"] * n)], schema=run_schema))
            judged = rng.random(n) < 0.2
            grades = rng.integers(0, 4, int(judged.sum()))
            qrels_out.write_table(pa.table([
                _ids("q", q[judged]), pa.array(["0"] * len(grades)), _ids("doc", doc[judged]),
                pc.cast(pa.array(grades), pa.string())], schema=qrels_schema))
    return qrels_path, run_path


def _limit(gb: float | None):
    if gb is None:
        return None
    size = int(gb * 2**30)
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (size, size))


class Timed(NamedTuple):
    """One process: wall seconds (start to exit), peak RSS in GB, exit status, output, CPU
    seconds (user + system); the RSS and CPU are the process's own (``os.wait4``)."""

    wall: float
    rss: float
    status: int
    text: str
    cpu: float


def run_once(cmd: list[str], memory_gb: float | None = None, env: dict | None = None
             ) -> Timed:
    """One process of ``cmd``, timed."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_limit(memory_gb),
                                env=None if env is None else {**os.environ, **env})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return Timed(wall, usage.ru_maxrss / 2**20, proc.returncode, text,
                 usage.ru_utime + usage.ru_stime)


def best(cmd: list[str], repeat: int, memory_gb: float | None = None) -> Timed:
    """The fastest of ``repeat`` processes, with the greatest peak RSS of them (the first
    that failed, if one did)."""
    runs = [run_once(cmd, memory_gb) for _ in range(repeat)]
    failed = [r for r in runs if r.status != 0]
    if failed:
        return failed[0]
    return min(runs, key=lambda r: r.wall)._replace(rss=max(r.rss for r in runs))


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def trec_eval_binary(source: str | None, scratch: Path) -> Path | None:
    """trec_eval built from ``source`` (a source folder, or a binary), or None."""
    if not source:
        print("SKIPPED trec_eval anchor: no trec_eval source given (--trec-eval-src or "
              "$TREC_EVAL_SRC)")
        return None
    path = Path(source)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    if not (path / "Makefile").exists():
        print(f"SKIPPED trec_eval anchor: {path} holds no trec_eval Makefile")
        return None
    build = scratch / "trec_eval_src"
    shutil.copytree(path, build)
    made = subprocess.run(["make", "-C", str(build)], capture_output=True, text=True)
    if made.returncode != 0 or not (build / "trec_eval").exists():
        print(f"SKIPPED trec_eval anchor: make failed in {build}:\n{made.stderr[-1500:]}")
        return None
    return build / "trec_eval"


def _means(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all":
            out[parts[0]] = parts[2]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trec-eval-src", default=os.environ.get("TREC_EVAL_SRC"))
    ap.add_argument("--anchor-memory-gb", type=float, default=16.0)
    ap.add_argument("--no-anchors", action="store_true", help="time releval alone")
    ap.add_argument("--workdir", default=None, help="folder for the generated files")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)  # a folder it may create
    scratch = Path(tempfile.mkdtemp(prefix="releval-bench-", dir=args.workdir))
    try:
        start = time.perf_counter()
        qrels, run = write_files(scratch, args.queries, args.depth)
        print(f"{args.queries:,} queries × {args.depth} results: {run.stat().st_size / 2**20:,.0f}"
              f" MiB run, {qrels.stat().st_size / 2**20:,.0f} MiB qrels "
              f"(written in {time.perf_counter() - start:.0f} s)")
        print(f"{len(os.sched_getaffinity(0))} cores, {_load()}")
        releval = str(Path(sys.executable).with_name("releval"))
        startup = best([releval, "--help"], args.repeat)
        print(f"releval --help (start-up)       {startup.wall:8.2f} s")
        command = [releval, "metrics", str(qrels), str(run), "--format", "trec",
                   *[a for m in MEASURES for a in ("-m", m)]]
        cold = run_once(command, env={"NUMBA_CACHE_DIR": str(scratch / "numba-cache")})
        ours = best(command, args.repeat)  # the compiled loops now come from the disk cache
        if ours.status != 0 or cold.status != 0:
            failed = ours if ours.status else cold
            print(f"releval metrics FAILED (exit {failed.status}):\n{failed.text[-2000:]}")
            sys.exit(1)
        print(f"releval metrics, first process  {cold.wall:8.2f} s   (numba compiles the loops: "
              f"its on-disk cache is empty)")
        print(f"releval metrics                 {ours.wall:8.2f} s   peak RSS {ours.rss:6.2f} GB"
              f"   CPU {ours.cpu:6.2f} s   (loops from the cache)")
        anchors = {}
        if args.no_anchors:
            print("anchors: skipped (--no-anchors)")
            args.trec_eval_src = None
        theirs = None if args.no_anchors else best(
            [sys.executable, "-c", PYTREC, str(qrels), str(run), *TREC], args.repeat,
            args.anchor_memory_gb)
        if theirs is None:
            pass
        elif theirs.status != 0:
            print(f"pytrec_eval (parse + evaluate): did not complete within "
                  f"{args.anchor_memory_gb:g} GB of address space (exit {theirs.status}): "
                  "skipped")
        else:
            anchors["pytrec_eval (parse + evaluate)"] = theirs
        binary = None if args.no_anchors else trec_eval_binary(args.trec_eval_src, scratch)
        if binary is not None:
            te = best([str(binary), *[a for m in TREC for a in ("-m", m)], str(qrels),
                       str(run)], args.repeat)
            if te.status == 0:
                anchors["trec_eval (C binary)"] = te
            else:
                print(f"trec_eval FAILED (exit {te.status}): {te.text[-500:]}")
        ours_means = _means(ours.text)
        for name, it in anchors.items():
            target = f"  (target ≤ {RATIO:.2f})" if name.startswith("pytrec") else ""
            print(f"{name:<32}{it.wall:8.2f} s   peak RSS {it.rss:6.2f} GB   CPU {it.cpu:6.2f} s"
                  f"   ratio releval / it = {ours.wall / it.wall:.2f}{target}; first process "
                  f"{cold.wall / it.wall:.2f}")
            theirs_means = _means(it.text)
            shared = sorted(set(ours_means) & set(theirs_means))
            diff = [k for k in shared if abs(float(ours_means[k]) - float(theirs_means[k]))
                    > 1e-4]
            print(f"  means agree on {len(shared) - len(diff)}/{len(shared)} measures"
                  + (f"; differ: {diff}" if diff else ""))
        if args.queries >= 1_000_000:
            met = ours.wall <= SECONDS and ours.rss <= GB
            print(f"1M-scale target: {ours.wall:.1f} s, peak RSS {ours.rss:.2f} GB (target ≤ "
                  f"{SECONDS:g} s, ≤ {GB:g} GB): " + ("met" if met else "NOT met"))
        print(_load())
    finally:
        if args.keep:
            print(f"files kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
