"""A stage's overhead against its work: DVC's stock way against the flow's, in one run.

In a project that has run (``releval demo``, or ``releval run`` after ``releval init``), for
each light stage (every stage but candidates, selftest and autojudge, whose work is heavy):

- work: ``stages.common.main`` in a process that already imported what every stage imports
  (the stage's own reading, computing and writing);
- stock: ``dvc repro --single-item --force`` of the stage through DVC's API as DVC ships
  (the command runs in its own interpreter; dvc.lock parsed and dumped whole in Python);
- flow: the same through the flow's way (``flows.pipeline.warm_worker`` and
  ``flows.dvc_files``): the anchor is the stock figure measured in the same run.

Prints per stage the three times, the flow's overhead share ((flow - work) / flow) and the
ratio flow / stock. The project's outputs are rewritten as by ``--force`` (same inputs, same
bytes).

Usage: python benchmarks/stage_overhead.py PROJECT [--stages a,b,...]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
import time
from pathlib import Path

HEAVY = ("candidates", "selftest", "autojudge")


def _reproduce(stage: str) -> float:
    from dvc.repo import Repo

    start = time.perf_counter()
    with Repo(".") as repo, contextlib.redirect_stdout(io.StringIO()):
        repo.reproduce(stage, single_item=True, force=True)
    return time.perf_counter() - start


def _work(stage: str, items: list[str]) -> float:
    from stages.common import main

    start = time.perf_counter()
    for item in items:
        system = item.partition("@")[2]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(stage, ["--params", "params.yaml", *(["--system", system] if system else [])])
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("project", type=Path)
    ap.add_argument("--stages", help="comma-separated (default: every light stage)")
    args = ap.parse_args()
    os.chdir(args.project)
    sys.path.insert(0, str(Path.cwd()))
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    from flows import dvc_files
    from flows.pipeline import dvc_stages, warm_worker
    from stages.worker import ENV

    dag = dvc_stages()
    names = args.stages.split(",") if args.stages else [s for s in dag if s not in HEAVY]
    with warm_worker():  # started first, as the flow starts it
        address = os.environ.pop(ENV)  # not named: the stock commands run alone
        stock = {name: _reproduce(name) for name in names}  # before anything is patched
        for name in names:  # what the worker holds imported (DVC's progress bars left threads
            importlib.import_module(f"stages.{name}")  # here: _preload would refuse)
        work = {name: _work(name, list(dag[name])) for name in names}
        dvc_files.install()
        os.environ[ENV] = address
        flow = {name: _reproduce(name) for name in names}
    print(f"{'stage':<11}{'work':>7}{'stock':>8}{'flow':>7}{'overhead':>10}{'flow/stock':>12}")
    for name in names:
        share = (flow[name] - work[name]) / flow[name]
        print(f"{name:<11}{work[name]:>6.2f}s{stock[name]:>7.2f}s{flow[name]:>6.2f}s"
              f"{share:>9.0%}{flow[name] / stock[name]:>12.2f}")
    total = {k: sum(v.values()) for k, v in (("work", work), ("stock", stock), ("flow", flow))}
    print(f"{'all':<11}{total['work']:>6.2f}s{total['stock']:>7.2f}s{total['flow']:>6.2f}s"
          f"{(total['flow'] - total['work']) / total['flow']:>9.0%}"
          f"{total['flow'] / total['stock']:>12.2f}")


if __name__ == "__main__":
    main()
