"""Stage ``gate``: the release decision, every ``gate.rules`` entry checked against the evidence.

Reads the comparison, the slices, the safety report, the metrics, the evaluation summary
(system-level values, applicability), each system's latency (run_stats.json) and health
(health.json), the query set's description (split_report.json's ``query_set``) and the
evaluated set's looks (the split, the qrels, the candidate's run and the looks file,
``releval.decision.looks``: the decisions the set has informed, this one included) and
agreement_auto.json (under ``judgments.automatic.gate: ppi`` the paired rows read its PPI
intervals of the difference, ``releval.decision.gate.intervals``) and the off-policy
estimates (offpolicy.json); the comparison, the summary, the run stats, the health report
and the off-policy estimates are read through their models
(``releval.documents``: a renamed or missing key stops the stage naming the file); writes
data/gate/decision.json (``releval.decision.gate.decide``, with the rollback thresholds) and
prints "gate: PASS" or "gate: FAIL (...)". It exits 0 either way, so DVC records the
decision; ``releval gate`` turns the decision into the exit status for CI.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.decision import looks
from releval.decision.gate import RULES, decide, intervals
from releval.decision.gate.evidence import Evidence, check_sides
from releval.documents.agreement_auto import AgreementAuto
from releval.documents.comparison import Comparison
from releval.documents.health import Health
from releval.documents.offpolicy import OffPolicyDoc
from releval.documents.run_stats import Latency, RunStats
from releval.documents.summary import Summary
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.params import Params
from stages.common import (
    guarded,
    params_of,
    parser,
    read_doc,
    read_table,
    system_files,
    write_outputs,
)


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


def run(p: Params, comparison: Comparison, slices: pd.DataFrame, safety: dict, metrics: dict,
        latency: dict[str, Latency], summary: Summary, health: Health | None = None,
        query_set: dict | None = None, looked: dict | None = None,
        automatic: dict | None = None, offpolicy: OffPolicyDoc | None = None) -> Outputs:
    """The decision for ``compare.candidate`` against ``compare.baseline``, with the
    ``gate.rollback`` thresholds; a comparison of other systems than params name is stale
    input and is rejected. ``latency``: system -> its run_stats.json's ``latency_ms``;
    ``health``: health/health.json; ``summary``: evaluate/summary.json; ``query_set``:
    split/split_report.json's query_set; ``looked``: the evaluated set's look count
    (``releval.decision.looks.count``), bounded by ``query_set.max_looks``; ``automatic``:
    autojudge/agreement_auto.json, whose PPI differences the paired rows read under
    ``judgments.automatic.gate: ppi`` (``releval.decision.gate.intervals``); ``offpolicy``:
    offpolicy/offpolicy.json."""
    basis: dict[str, str] = {}
    auto = p.judgments.automatic
    if auto is not None and auto.gate == "ppi":
        comparison, basis = intervals.substituted(comparison,
                                                  (automatic or {}).get("difference") or {})
    evidence = Evidence(baseline=p.compare.baseline, candidate=p.compare.candidate,
                        comparison=comparison, slices=slices, safety=safety, metrics=metrics,
                        latency=latency, summary=summary.systems,
                        better=directions(p.gate.rules), health=health,
                        query_set=query_set or {}, looks=looked or {},
                        max_looks=p.query_set.max_looks, basis=basis, offpolicy=offpolicy)
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


def read_latency(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, Latency]:
    """system -> latency_ms of each system's run_stats.json (``RunStats``, validated; a
    system without one is not measured)."""
    return {name: RunStats.read(stats).latency_ms
            for name, stats in system_files(p, candidates, fused, "stats").items()
            if stats.exists()}


def count_looks(p: Params, split: pd.DataFrame, qrels: pd.DataFrame, candidates: str | Path,
                fused: str | Path, recorded: dict) -> dict:
    """The evaluated set's look count: the looks file ``recorded`` and this run's look of
    ``compare.candidate`` (first seen today when not recorded)."""
    look = looks.evaluated(p, split, qrels, system_files(p, candidates, fused, "run"))
    return looks.count(recorded, look, datetime.now(UTC).date().isoformat())


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--compare", default=artifacts.at("compare.comparison"))
    ap.add_argument("--slices", default=artifacts.at("slices.table"))
    ap.add_argument("--safety", default=artifacts.at("safety.report"))
    ap.add_argument("--metrics", default=artifacts.at("evaluate.metrics"))
    ap.add_argument("--summary", default=artifacts.at("evaluate.summary"))
    ap.add_argument("--health", default=artifacts.at("health.report"))
    ap.add_argument("--split-report", default=artifacts.at("split.report"))
    ap.add_argument("--split", default=artifacts.at("split.split"))
    ap.add_argument("--qrels", default=artifacts.at("judgments.qrels"))
    ap.add_argument("--looks", default=artifacts.at("reports.looks"))
    ap.add_argument("--offpolicy", default=artifacts.at("offpolicy.report"))
    ap.add_argument("--autojudge", default=artifacts.at("autojudge.report"))
    ap.add_argument("--candidates", default=artifacts.group_folder("candidates"))
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--out", default=artifacts.folder("gate"))
    args = ap.parse_args()
    p = params_of(args)
    result = run(p, Comparison.read(args.compare), read_table(args.slices),
                 read_doc(args.safety), read_doc(args.metrics),
                 read_latency(p, args.candidates, args.fused), Summary.read(args.summary),
                 Health.read(args.health), read_doc(args.split_report).get("query_set"),
                 count_looks(p, read_table(args.split), read_table(args.qrels), args.candidates,
                             args.fused, read_doc(args.looks)),
                 read_doc(args.autojudge, AgreementAuto) if p.judgments.automatic else None,
                 OffPolicyDoc.read(args.offpolicy) if p.offpolicy.log else None)
    write_outputs(result, "gate", args.out)
    print(summary(result.decision))


if __name__ == "__main__":
    guarded(main)
