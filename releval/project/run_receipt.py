"""A run's receipt collected from its outputs, and the looks file kept before the gate.

``write_receipt`` writes the catalog's ``reports.receipt`` and keeps a copy in the ledger
(``reports.ledger``); ``collect`` builds it (``releval.project.receipt``) from dvc.lock, the
params and the pipeline's outputs, each read where the catalog (``releval.artifacts``) puts it
by its format (a parquet table; a JSON document validated against its model, kept as written,
so the receipt holds the file's own values). ``write_looks`` adds the run's looks to the looks
file (``reports.looks``, ``releval.decision.looks``) before the gate reads it. Each takes the
parsed params (``Params``) once; the receipt also keeps the params file's own values (``raw``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import yaml

from releval import artifacts
from releval.data.readers import read_parquet, text_of
from releval.decision import looks
from releval.decision.compare import canonical
from releval.decision.no_answer import evaluated_queries
from releval.documents.decision import Decision
from releval.documents.receipt import Receipt
from releval.documents.run_stats import RunStats
from releval.errors import reading
from releval.params import Params
from releval.project import history, receipt
from releval.retrieval.embeddings import model_digest, resolve_model

RECEIPT = artifacts.path("reports.receipt")
LEDGER = artifacts.path("reports.ledger")
LOOKS = artifacts.path("reports.looks")


def _systems(p: Params, key: str) -> dict[str, Path]:
    """Each evaluated system's artifact ``key`` (``run``, ``stats``: the same in the
    ``candidates`` and ``fused`` groups), candidate systems, then fused ones."""
    return {name: artifacts.path(f"{group}.{key}", system=name)
            for group, names in (("candidates", p.candidates.systems),
                                 ("fused", p.fusion.systems))
            for name in names}


def _table(name: str) -> pd.DataFrame:
    return read_parquet(artifacts.path(name))


def _document(name: str) -> dict:
    """The JSON document ``name`` as written, once it validates against its model
    (``artifacts.document``); InputError (one line) when missing, not JSON or not its
    model's shape."""
    path = artifacts.path(name)
    with reading(str(path)):
        doc = json.loads(text_of(path))
    return artifacts.document(name).check(doc, str(path))


def _current(lock: dict, names: set[str]) -> dict:
    """dvc.lock without entries of stages dvc.yaml no longer has (a system since removed)."""
    return lock | {"stages": {k: v for k, v in lock.get("stages", {}).items() if k in names}}


def _results(p: Params, queries: pd.Series) -> dict[str, dict[str, str]]:
    return {name: receipt.result_digests(read_parquet(path), queries)
            for name, path in _systems(p, "run").items()}


def _looks(p: Params) -> list[dict]:
    """This run's looks (``looks.taken``) from its split, qrels and runs."""
    return looks.taken(p, _table("split.split"), _table("judgments.qrels"), _systems(p, "run"))


def _recorded() -> dict | None:
    """``LOOKS`` as written, None when missing or unreadable."""
    try:
        doc = json.loads(LOOKS.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _looks_after(p: Params) -> tuple[dict | None, dict]:
    """(the looks file as recorded, as this run would leave it)."""
    before = _recorded()
    recorded = before if before is not None else looks.from_ledger(
        history.taken(history.entries(LEDGER)))
    return before, looks.record(recorded, _looks(p), datetime.now(UTC).date().isoformat())


def looks_changed(p: Params) -> bool:
    """Whether this run would add a look to ``LOOKS`` (``write_looks``, writing nothing)."""
    before, after = _looks_after(p)
    return after != before


def write_looks(p: Params) -> bool:
    """Add this run's looks to ``LOOKS`` (rebuilt from the ledger where it is missing or
    unreadable), each first seen today; the file is rewritten only when a look is new, so a
    rerun of the same candidates leaves the gate's input as it was. True when it changed."""
    before, after = _looks_after(p)
    if after == before:
        return False
    receipt.write(LOOKS, after)
    return True


def _headline(p: Params, metrics: dict, decision: Decision) -> dict:
    first = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)[0][0]
    return {"measure": first,
            "systems": {s: m.get(first) for s, m in metrics.items()},
            "baseline": p.compare.baseline, "candidate": p.compare.candidate,
            "decision": decision.verdict,
            "failed": decision.failed or [],
            "controlled": decision.controlled}


def _executed(p: Params, executed: dict | None) -> dict:
    """``executed`` with each system's shard layout (run_stats ``shards``), where sharded."""
    layouts = {name: stats.shards for name, path in _systems(p, "stats").items()
               if (stats := RunStats.read(path)).shards is not None}
    return (executed or {"executor": p.base.executor}) | (
        {"sharded": layouts} if layouts else {})


def collect(p: Params, raw: dict, validations: int, ran: dict, stages: set[str]) -> dict:
    """The receipt document of the run whose outputs are in the working directory: ``raw``
    the params file's own values (``p`` parsed from them), ``validations`` the checks passed,
    ``ran`` what a rerun cannot repeat, ``stages`` the names of dvc.yaml's stages."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the same data, 6x faster
    lock = _current(yaml.load(Path("dvc.lock").read_text(), Loader=loader), stages)
    evaluated, _ = evaluated_queries(_table("split.split"), _table("raw.queries"),
                                     p.evaluate.splits, p.no_answer.tag)
    metrics = _document("evaluate.metrics")
    checked = _document("selftest.totals")
    models = {name: model_digest(resolve_model(s.model))
              for name, s in p.candidates.systems.items() if s.route == "dense"}
    comparison = _document("compare.comparison")
    work = receipt.work(p, _document("evaluate.summary"), len(_table("judgments.qrels")),
                        _document("slices.summary"), comparison, validations, checked)
    decision = Decision.read(artifacts.path("gate.decision"))
    fixture = _document("fixture.summary")
    return receipt.build(p=p, raw_params=raw, lock=lock,
                         code=receipt.code_state(Path(".")), metrics=metrics,
                         results=_results(p, evaluated), models=models, work_done=work,
                         checked=checked,
                         figures=comparison.get("figures"),
                         fixture=fixture if fixture.get("fixture") else None,
                         looks=_looks(p),
                         ran=ran | {"headline": _headline(p, metrics, decision),
                                    "inputs_lock": lock["stages"].get("inputs"),
                                    "looks_file": _recorded()})


def last_receipt(path: Path = RECEIPT) -> dict | None:
    """The receipt document at ``path`` (its ``sha256`` the content's digest), None when
    there is none or it cannot be read as one."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and "sha256" in doc else None


def write_receipt(p: Params, raw: dict, validations: int, started: str, stages: set[str],
                  schedule: dict | None = None, executed: dict | None = None) -> dict:
    """Write ``RECEIPT`` and keep it in the ledger as ``LEDGER/<finished>-<sha256[:12]>.json``
    (never overwritten), with its over-time comparison against the ledger's previous run of
    its lineage (``releval.project.history``); ``stages`` are the names of dvc.yaml's stages,
    ``schedule`` a scheduled run's deployment, flow run and window, ``executed`` where the
    heavy work ran (executor, cluster size; the shard layout of each sharded search, from its
    run_stats). The document is validated against its model (``Receipt``) first. Returns the
    receipt document."""
    finished = datetime.now(UTC)
    doc = collect(p, raw, validations, {
        "started_at": started, "finished_at": finished.isoformat(timespec="seconds"),
        "schedule": schedule, "executor": _executed(p, executed)}, stages)
    doc["run"]["over_time"] = history.over_time(history.previous(LEDGER, history.lineage(doc)), doc)
    Receipt.check(doc, str(RECEIPT))  # every key it holds is the model's: the ledger reads it
    receipt.write(RECEIPT, doc)
    receipt.write(LEDGER / f"{finished:%Y%m%dT%H%M%SZ}-{doc['sha256'][:12]}.json", doc)
    return doc
