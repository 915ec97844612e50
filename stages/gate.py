"""Stage ``gate``: the release decision, every ``gate.rules`` entry checked against the evidence.

Reads the evidence its ``Inputs`` name (the documents through their models,
``releval.documents``: a renamed or missing key stops the stage naming the file); writes
data/gate/decision.json (``releval.decision.gate.decide``, with the rollback thresholds) and
prints "gate: PASS" or "gate: FAIL (...)". It exits 0 either way, so DVC records the
decision; ``releval gate`` turns the decision into the exit status for CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from releval.artifacts import reads
from releval.decision import looks
from releval.decision.gate import RULES, decide, intervals
from releval.decision.gate.evidence import Evidence, check_sides
from releval.documents.comparison import Comparison
from releval.documents.health import Health
from releval.documents.offpolicy import OffPolicyDoc
from releval.documents.run_stats import Latency, RunStats
from releval.documents.summary import Summary
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.params import Params


def latency_of(path: Path) -> Latency:
    """A run_stats.json's measured latency (``RunStats``, validated)."""
    return RunStats.read(path).latency_ms


@dataclass(frozen=True)
class Inputs:
    """``latency``: each measured system's latency (a system without run_stats.json is not
    measured); the evaluated set's looks are counted from the looks file, the split, the
    qrels and the candidate's run (``runs``: each system's run file; ``looks`` None: not
    counted); ``automatic``: the PPI differences the paired rows read under
    ``judgments.automatic.gate: ppi``."""

    comparison: Comparison = reads("compare.comparison")
    slices: pd.DataFrame = reads("slices.table")
    safety: dict = reads("safety.report")
    metrics: dict = reads("evaluate.metrics")
    latency: dict[str, Latency] = reads("candidates.stats", each="system", optional=True,
                                        reader=latency_of)
    summary: Summary = reads("evaluate.summary")
    health: Health | None = reads("health.report")
    split_report: dict = reads("split.report")
    automatic: dict | None = reads("autojudge.report", when="judgments.automatic")
    offpolicy: OffPolicyDoc | None = reads("offpolicy.report", when="offpolicy.log")
    split: pd.DataFrame = reads("split.split")
    qrels: pd.DataFrame = reads("judgments.qrels")
    runs: dict[str, Path] = reads("candidates.run", each="system", reader=Path)
    looks: dict = reads("reports.looks")


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``gate.<field>`` (``releval.artifacts``)."""

    decision: dict


def directions(rules) -> dict[str, str]:
    """measure -> "higher" | "lower" (the way it improves: the measure registry's) for each
    measure a rule compares in its direction (``GateRule.measures``: a ``not_worse`` rule's
    measure, a ``guarded`` rule's primary and guards)."""
    names = [name for r in rules for name in RULES[r.rule].measures(r)]
    return {name: MEASURES[parse_measures(name)[0].family].better for name in names}


def run(p: Params, inputs: Inputs) -> Outputs:
    """The decision for ``compare.candidate`` against ``compare.baseline``, with the
    ``gate.rollback`` thresholds; a comparison of other systems than params name is stale
    input and is rejected. The evaluated set's look count (``releval.decision.looks.count``)
    is bounded by ``query_set.max_looks``; under ``judgments.automatic.gate: ppi`` the paired
    rows read the PPI differences of agreement_auto.json
    (``releval.decision.gate.intervals``)."""
    basis: dict[str, str] = {}
    comparison = inputs.comparison
    auto = p.judgments.automatic
    if auto is not None and auto.gate == "ppi":
        comparison, basis = intervals.substituted(
            comparison, (inputs.automatic or {}).get("difference") or {})
    looked = {} if inputs.looks is None else looks.count(
        inputs.looks, looks.evaluated(p, inputs.split, inputs.qrels, inputs.runs),
        datetime.now(UTC).date().isoformat())
    evidence = Evidence(baseline=p.compare.baseline, candidate=p.compare.candidate,
                        comparison=comparison, slices=inputs.slices, safety=inputs.safety,
                        metrics=inputs.metrics, latency=inputs.latency or {},
                        summary=inputs.summary.systems, better=directions(p.gate.rules),
                        health=inputs.health,
                        query_set=(inputs.split_report or {}).get("query_set") or {},
                        looks=looked,
                        max_looks=p.query_set.max_looks, basis=basis,
                        offpolicy=inputs.offpolicy)
    check_sides(evidence)
    decision = decide(p.gate.rules, evidence, p.gate.rollback)
    if basis:
        decision["intervals"] = ("judgments.automatic.gate ppi: the paired rows of "
                                 + "; ".join(f"{m} read its {b}" for m, b in basis.items()))
    return Outputs(decision)


def summary(decision: dict) -> str:
    """One line: "gate: PASS" or "gate: FAIL (k of n rules failed: a, b)", n counting the
    applicable rules (as the report and the console do; the n/a ones are listed apart)."""
    label = "" if decision["controlled"] else " [UNCONTROLLED]"
    if decision["passed"]:
        return f"gate: PASS{label}"
    failed = decision["failed"]
    checked = [r for r in decision["rules"] if r.get("applicable", True)]
    return (f"gate: FAIL ({len(failed)} of {len(checked)} rules failed: "
            f"{', '.join(failed)}){label}")


def line(p: Params, result: Outputs) -> str:
    return summary(result.decision)
