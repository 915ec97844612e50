"""What the HTML report (``releval.report.html``), its plots (``releval.report.plots``) and the
markdown pages are drawn from: the report stage's inputs in one value, read as models."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.artifacts import reads
from releval.documents.agreement import Agreement
from releval.documents.agreement_auto import AgreementAuto
from releval.documents.comparison import Comparison, Paired
from releval.documents.decision import Decision
from releval.documents.failures import Failures
from releval.documents.health import Health
from releval.documents.ingest import Ingest
from releval.documents.ledger import Row
from releval.documents.offpolicy import OffPolicyDoc
from releval.documents.receipt import Receipt
from releval.documents.run_stats import RunStats
from releval.documents.safety import Safety
from releval.documents.selftest import SelfTest
from releval.documents.source import Source
from releval.documents.split_report import SplitReport
from releval.documents.summary import Summary
from releval.project.history import entries
from releval.project.receipt import describes

RETRIEVAL, RECOMMENDATION = "retrieval", "recommendation"
MODES = (RETRIEVAL, RECOMMENDATION)


def this_runs_receipt(path: Path) -> Receipt | None:
    """The receipt at ``path`` when it describes the outputs now in the project
    (``releval.project.receipt.describes``), else None: one left by an earlier run is not
    this page's."""
    receipt = Receipt.read(path)
    return receipt if describes(receipt.model_dump(by_alias=True, exclude_unset=True)) else None


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """The report stage's ``Inputs``: every document and table the page shows, each field
    an artifact of the catalog (``releval.artifacts.reads``), a JSON document as its model.
    ``measure``: the gate's measure (``gate_measure``) and ``min_n``: the slice size below
    which a slice is too small to test, both from params.

    None where not read: the plot, column or section that needs it is left out and says so
    (``reliability``: recommendation mode only; ``automatic``: ``judgments.automatic`` only;
    ``receipt``: none describes these outputs yet; ``history``: the ledger's runs, oldest
    first, ``releval.project.history.entries`` rows)."""

    summary: Summary = reads("evaluate.summary")
    split_report: SplitReport = reads("split.report")
    source: Source = reads("raw.source")
    stats: dict[str, RunStats] = reads("candidates.stats", each="system")
    ingest: Ingest = reads("judgments.ingest")
    agreement: Agreement = reads("judgments.agreement")
    comparison: Comparison = reads("compare.comparison")
    slices: pd.DataFrame = reads("slices.table")
    safety: Safety = reads("safety.report")
    failures: Failures = reads("failures.report")
    sheet: pd.DataFrame = reads("failures.worksheet")
    gate: Decision = reads("gate.decision")
    per_query_diff: pd.DataFrame | None = reads("compare.diff")
    curves: pd.DataFrame | None = reads("evaluate.curves")
    violations: pd.DataFrame | None = reads("safety.violations")
    failure_rows: pd.DataFrame | None = reads("failures.failures")
    queries: pd.DataFrame | None = reads("raw.queries")
    reliability: pd.DataFrame | None = reads("evaluate.reliability", when="recommendation")
    receipt: Receipt | None = reads("reports.receipt", dep=False, reader=this_runs_receipt)
    selftest: SelfTest | None = reads("selftest.totals")
    selftest_rows: pd.DataFrame | None = reads("selftest.rows")
    differential: pd.DataFrame | None = reads("selftest.differential")
    history: list[Row] | None = reads("reports.ledger", dep=False, reader=entries)
    health: Health | None = reads("health.report")
    automatic: AgreementAuto | None = reads("autojudge.report", when="judgments.automatic")
    offpolicy: OffPolicyDoc | None = reads("offpolicy.report")
    offpolicy_estimates: pd.DataFrame | None = reads("offpolicy.estimates")
    offpolicy_weights: pd.DataFrame | None = reads("offpolicy.weights")
    measure: str | None = None
    min_n: int | None = None

    @property
    def mode(self) -> str:
        """recommendation when the evaluation has a "recommendation" block, else retrieval."""
        return RECOMMENDATION if self.summary.recommendation else RETRIEVAL

    @property
    def baseline(self) -> str:
        return self.comparison.baseline

    @property
    def candidate(self) -> str:
        return self.comparison.candidate

    @property
    def systems(self) -> list[str]:
        """Every evaluated system, in the evaluation's order, then any other with stats."""
        return list(dict.fromkeys([*self.summary.systems, *self.stats]))

    def gate_measures(self) -> list[str]:
        """The compared measures the gate decides on: the gate's measure, then each applicable
        rule's measures (``Rule.measures``, the primary first) in the rules' order; only
        measures with a paired comparison."""
        paired = {r.measure for r in self.comparison.paired}
        found = [self.measure, *(o.measures[0] for o in self.gate.rules
                                 if o.applicable and o.measures)]
        return [m for m in dict.fromkeys(found) if m in paired]

    def paired(self, measure: str | None = None) -> Paired | None:
        """The comparison's paired row of ``measure`` (default: the gate's), or None."""
        return self.comparison.row(self.measure if measure is None else measure)


def gate_measure(rules: Iterable, measures: list[str]) -> str:
    """The measure the gate decides on: the first ``no_regression`` rule's, else the first
    compared measure."""
    for rule in rules:
        if getattr(rule, "rule", None) == "no_regression":
            return rule.measure
    return measures[0] if measures else "nDCG@10"
