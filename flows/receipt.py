"""The run's receipt, written after every stage ran: the catalog's ``reports.receipt`` and a
copy in the ledger (``reports.ledger``), from the pipeline's outputs (read where the catalog,
``releval.artifacts``, puts them) and dvc.lock (releval.project.receipt); and the looks file
(``reports.looks``, ``releval.decision.looks``), kept before the gate reads it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import yaml

from releval import artifacts
from releval.decision import looks
from releval.decision.compare import canonical
from releval.decision.no_answer import evaluated_queries
from releval.params import load_params, read_raw
from releval.project import history, receipt
from releval.retrieval.embeddings import model_digest, resolve_model
from stages.common import read_doc, read_table, system_files

RECEIPT = artifacts.path("reports.receipt")
LEDGER = artifacts.path("reports.ledger")
LOOKS = artifacts.path("reports.looks")
SYSTEMS = (artifacts.group_folder("candidates"), artifacts.group_folder("fused"))


def _current(lock: dict, names: set[str]) -> dict:
    """dvc.lock without entries of stages dvc.yaml no longer has (a system since removed)."""
    return lock | {"stages": {k: v for k, v in lock.get("stages", {}).items() if k in names}}


def _results(p, queries: pd.Series) -> dict[str, dict[str, str]]:
    return {name: receipt.result_digests(read_table(path), queries)
            for name, path in system_files(p, *SYSTEMS, "run").items()}


def _looks(p) -> list[dict]:
    """This run's looks (``looks.taken``) from its split, qrels and runs."""
    split, qrels = (read_table(artifacts.path(n)) for n in ("split.split", "judgments.qrels"))
    return looks.taken(p, split, qrels, system_files(p, *SYSTEMS, "run"))


def _recorded() -> dict | None:
    """``LOOKS`` as written, None when missing or unreadable."""
    try:
        doc = json.loads(LOOKS.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def write_looks(params_path: str) -> bool:
    """Add this run's looks to ``LOOKS`` (rebuilt from the ledger where it is missing or
    unreadable), each first seen today; the file is rewritten only when a look is new, so a
    rerun of the same candidates leaves the gate's input as it was. True when it changed."""
    before = _recorded()
    recorded = before if before is not None else looks.from_ledger(
        (run.get("looks"), run.get("finished_at")) for run in history.entries(LEDGER))
    after = looks.record(recorded, _looks(load_params(params_path)),
                         datetime.now(UTC).date().isoformat())
    if after == before:
        return False
    receipt.write(LOOKS, after)
    return True


def _headline(p, metrics: dict, decision: dict) -> dict:
    first = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)[0][0]
    return {"measure": first,
            "systems": {s: m.get(first) for s, m in metrics.items()},
            "baseline": p.compare.baseline, "candidate": p.compare.candidate,
            "decision": "PASS" if decision.get("passed") else "FAIL",
            "failed": decision.get("failed") or [],
            "controlled": decision.get("controlled", True)}


def _executed(params_path: str, executed: dict | None) -> dict:
    """``executed`` with each system's shard layout (run_stats ``shards``), where sharded."""
    p = load_params(params_path)
    layouts = {name: stats["shards"] for name, path in system_files(p, *SYSTEMS, "stats").items()
               if "shards" in (stats := read_doc(path))}
    return (executed or {"executor": p.base.executor}) | (
        {"sharded": layouts} if layouts else {})


def collect(params_path: str, validations: int, ran: dict, stages: set[str]) -> dict:
    """The receipt document of the run whose outputs are in the working directory."""
    p = load_params(params_path)
    lock = _current(yaml.safe_load(Path("dvc.lock").read_text()), stages)
    split, queries = (read_table(artifacts.path(n)) for n in ("split.split", "raw.queries"))
    evaluated, _ = evaluated_queries(split, queries, p.evaluate.splits, p.no_answer.tag)
    metrics = read_doc(artifacts.path("evaluate.metrics"))
    checked = read_doc(artifacts.path("selftest.totals"))
    models = {name: model_digest(resolve_model(s.model))
              for name, s in p.candidates.systems.items() if s.route == "dense"}
    comparison = read_doc(artifacts.path("compare.comparison"))
    work = receipt.work(p, read_doc(artifacts.path("evaluate.summary")),
                        len(read_table(artifacts.path("judgments.qrels"))),
                        read_doc(artifacts.path("slices.summary")), comparison, validations,
                        checked)
    decision = read_doc(artifacts.path("gate.decision"))
    fixture = read_doc(artifacts.path("fixture.summary"))
    return receipt.build(p=p, raw_params=read_raw(params_path), lock=lock,
                         code=receipt.code_state(Path(".")), metrics=metrics,
                         results=_results(p, evaluated), models=models, work_done=work,
                         checked=checked,
                         figures=comparison.get("figures"),
                         fixture=fixture if fixture.get("fixture") else None,
                         looks=_looks(p),
                         ran=ran | {"headline": _headline(p, metrics, decision),
                                    "inputs_lock": lock["stages"].get("inputs"),
                                    "looks_file": _recorded()})


def write_receipt(params_path: str, validations: int, started: str, stages: set[str],
                  schedule: dict | None = None, executed: dict | None = None) -> dict:
    """Write ``RECEIPT`` and keep it in the ledger as ``LEDGER/<finished>-<sha256[:12]>.json``
    (never overwritten), with its over-time
    comparison against the ledger's previous run of its lineage
    (``releval.project.history``); ``stages``
    are the names of dvc.yaml's stages, ``schedule`` a scheduled run's deployment, flow run
    and window, ``executed`` where the heavy work ran (executor, cluster size; the shard
    layout of each sharded search, from its run_stats)."""
    finished = datetime.now(UTC)
    doc = collect(params_path, validations, {
        "started_at": started, "finished_at": finished.isoformat(timespec="seconds"),
        "schedule": schedule, "executor": _executed(params_path, executed)}, stages)
    doc["run"]["over_time"] = history.over_time(history.previous(LEDGER, history.lineage(doc)), doc)
    receipt.write(RECEIPT, doc)
    receipt.write(LEDGER / f"{finished:%Y%m%dT%H%M%SZ}-{doc['sha256'][:12]}.json", doc)
    print(f"receipt: {RECEIPT} (sha256 {doc['sha256'][:12]}; "
          f"{json.dumps(doc['receipt']['work'])})")
    return doc
