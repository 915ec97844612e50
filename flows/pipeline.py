"""The Prefect flow: each DVC stage in order, its outputs validated before the next starts.

Stages run through ``dvc repro --single-item`` (so unchanged stages are skipped and
dvc.lock pins what ran); then the stage's outputs are checked with their Great
Expectations suites, and a failed check stops the flow with the suite, expectation, column
and example rows. Validation reports are saved as JSON under data/validation/. Without
PREFECT_API_URL, Prefect runs on a temporary local server.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.states import Failed

from flows.validation import ValidationFailed, check
from releval.errors import InputError
from releval.params import load_params

VALIDATION_DIR = Path("data/validation")


@dataclass(frozen=True)
class Check:
    """One suite applied to one output file (``{system}`` expands over candidate systems,
    ``{fused}`` over fusion systems)."""

    suite: str
    path: str
    params: tuple[tuple[str, str], ...] = ()  # suite keyword -> params.yaml dotted key


STAGES: dict[str, tuple[Check, ...]] = {
    "prepare": (Check("documents", "data/raw/documents.parquet"),
                Check("queries", "data/raw/queries.parquet"),
                Check("qrels", "data/raw/judgments.parquet",
                      (("max_grade", "prepare.max_grade"),))),
    "split": (Check("split", "data/split/split.parquet"),),
    "candidates": (Check("run", "data/candidates/{system}/run.parquet"),),
    "pool": (Check("pool", "data/pool/pool.parquet"),),
    "judgments": (Check("qrels", "data/judgments/qrels.parquet",
                        (("max_grade", "prepare.max_grade"),)),),
    "fuse": (Check("run", "data/fused/{fused}/run.parquet"),),
    "evaluate": (Check("metrics", "data/evaluate/per_query.parquet"),
                 Check("labels", "data/evaluate/labels.parquet")),
    "compare": (Check("diff", "data/compare/per_query_diff.parquet"),),
    "slices": (Check("slices", "data/slices/slices.parquet"),),
    "safety": (Check("violations", "data/safety/violations.parquet"),),
    "failures": (Check("failures", "data/failures/failures.parquet"),),
    "gate": (),
    "report": (),
}


@task(retries=1, retry_delay_seconds=2, task_run_name="dvc repro {stage}")
def repro(stage: str) -> str:
    """Run one stage through DVC: "ran", "skipped" (unchanged) or "failed: <why>". A stage
    that fails (bad input, a refused comparison) fails the same way again, so it is reported,
    not retried; only unexpected errors (I/O) raise and get the retry."""
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    bin_dir = str(Path(sys.executable).parent)  # stage commands call this ``python``
    if not os.environ.get("PATH", "").startswith(bin_dir):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    logging.getLogger("dvc").propagate = False  # DVC prints its own lines; no echo
    try:
        with Repo(".") as repo:
            ran = repo.reproduce(stage, single_item=True)
    except DvcException as exc:
        cause = f": {exc.__cause__}" if exc.__cause__ else ""
        return f"failed: stage {stage}: {exc}{cause}"
    get_run_logger().info("%s: %s", stage, "ran" if ran else "unchanged, skipped")
    return "ran" if ran else "skipped"


def _lookup(dotted: str, params: dict):
    for key in dotted.split("."):
        params = params[key]
    return params


def _targets(stage: str, params: dict) -> list[tuple[Check, Path, dict]]:
    out = []
    for c in STAGES[stage]:
        kwargs = {k: _lookup(dotted, params) for k, dotted in c.params}
        names = {"{system}": params["candidates"]["systems"],
                 "{fused}": params["fusion"]["systems"]}
        key = next((k for k in names if k in c.path), None)
        paths = [c.path.replace(key, s) for s in names[key]] if key else [c.path]
        out += [(c, Path(p), kwargs) for p in paths]
    return out


@task(task_run_name="validate {stage}")
def validate(stage: str, params: dict) -> str | None:
    """Check every output of ``stage``; the first failure's message, or None if all pass."""
    for c, path, kwargs in _targets(stage, params):
        name = path.parent.name if "{" in c.path else path.stem
        try:
            check(c.suite, pd.read_parquet(path),
                  VALIDATION_DIR / stage / f"{name}.{c.suite}.json", **kwargs)
        except ValidationFailed as exc:
            return f"validation failed after stage {stage} ({path}): {exc}"
    return None


@flow(name="releval-pipeline")
def pipeline(params_path: str = "params.yaml"):
    """prepare → split → candidates → pool → judgments → fuse → evaluate → compare → slices
    → safety → failures → gate → report, each stage's outputs validated before the next.
    Stops at the first stage that fails or whose outputs fail validation; no later stage runs."""
    params = load_params(params_path).model_dump()
    record: dict = {}
    for stage in STAGES:
        record[stage] = repro(stage)
        if record[stage].startswith("failed"):  # the stage printed its own one-line error
            get_run_logger().error(record[stage])
            return Failed(message=record[stage])
        problem = validate(stage, params)
        if problem:
            get_run_logger().error(problem)
            return Failed(message=problem)
    create_markdown_artifact(Path("reports/summary.md").read_text(), key="releval-summary",
                             description="releval summary")
    metrics = json.loads(Path("data/evaluate/metrics.json").read_text())
    create_table_artifact([{"system": s, **m} for s, m in metrics.items()],
                          key="releval-metrics", description="metrics per system")
    decision = json.loads(Path("data/gate/decision.json").read_text())
    create_table_artifact([{k: o[k] for k in ("name", "passed", "value", "threshold", "reason")}
                           for o in decision["rules"]], key="releval-gate",
                          description=f"release gate: {'PASS' if decision['passed'] else 'FAIL'}"
                                      f" ({decision['candidate']} vs {decision['baseline']})")
    record["decision"] = "PASS" if decision["passed"] else "FAIL"
    return record


def main() -> None:
    """``python -m flows.pipeline [--params params.yaml]``: exit 0 on success, else 1."""
    import argparse

    ap = argparse.ArgumentParser(description="Run the releval pipeline flow.")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    try:
        state = pipeline(args.params, return_state=True)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    if not state.is_completed():
        print(f"error: {state.message}", file=sys.stderr)
        sys.exit(1)
    stages = state.result()
    print("stages: " + ", ".join(f"{k} {v}" for k, v in stages.items()))


if __name__ == "__main__":
    main()
