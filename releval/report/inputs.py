"""What the HTML report (``releval.report.html``) and its plots (``releval.report.plots``) are
drawn from: the report stage's inputs in one value."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

RETRIEVAL, RECOMMENDATION = "retrieval", "recommendation"
MODES = (RETRIEVAL, RECOMMENDATION)


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """Every document and table the page shows. The documents are the stages' JSON outputs
    as read: ``summary`` (evaluate/summary.json), ``stats`` (system -> run_stats.json),
    ``comparison`` (compare/comparison.json), ``safety`` (safety/safety.json), ``failures``
    (failures/failures.json), ``gate`` (gate/decision.json), ``split_report``, ``source``
    (raw/source.json), ``ingest`` and ``agreement`` (judgments/). ``measure``: the gate's
    measure (``gate_measure``); ``min_n``: the slice size below which a slice is too small
    to test.

    Optional (None: the plot or column that needs it is left out, and says so):
    ``per_query_diff`` (compare/per_query_diff.parquet), ``curves``
    (evaluate/curves.parquet), ``violations`` (safety/violations.parquet), ``failure_rows``
    (failures/failures.parquet), ``queries`` (raw/queries.parquet: the tags and texts of the
    per-query table), ``reliability`` (evaluate/reliability.parquet: the reliability
    diagram's bins), ``receipt`` (reports/receipt.json of the run) and the self-test's
    ``selftest`` (selftest/selftest.json), ``selftest_rows`` (selftest.parquet),
    ``differential`` (differential.parquet) and ``history`` (the runs kept in the ledger,
    reports/runs/, oldest first: ``releval.project.history.entries`` rows) and ``health``
    (health/health.json: each system's health and freshness), ``automatic``
    (autojudge/agreement_auto.json: the automatic judge validated against people) and
    the off-policy evaluation: ``offpolicy`` (offpolicy/offpolicy.json),
    ``offpolicy_estimates`` (estimates.parquet) and ``offpolicy_weights`` (weights.parquet)."""

    summary: dict
    stats: dict[str, dict]
    comparison: dict
    slices: pd.DataFrame
    safety: dict
    failures: dict
    sheet: pd.DataFrame
    gate: dict
    split_report: dict
    source: dict
    ingest: dict
    agreement: dict
    measure: str
    min_n: int
    per_query_diff: pd.DataFrame | None = None
    curves: pd.DataFrame | None = None
    violations: pd.DataFrame | None = None
    failure_rows: pd.DataFrame | None = None
    queries: pd.DataFrame | None = None
    reliability: pd.DataFrame | None = None
    receipt: dict | None = None
    selftest: dict | None = None
    selftest_rows: pd.DataFrame | None = None
    differential: pd.DataFrame | None = None
    history: list[dict] | None = None
    health: dict | None = None
    automatic: dict | None = None
    offpolicy: dict | None = None
    offpolicy_estimates: pd.DataFrame | None = None
    offpolicy_weights: pd.DataFrame | None = None

    @property
    def mode(self) -> str:
        """recommendation when the evaluation has a "recommendation" block, else retrieval."""
        return RECOMMENDATION if self.summary.get("recommendation") else RETRIEVAL

    @property
    def baseline(self) -> str:
        return self.comparison["baseline"]

    @property
    def candidate(self) -> str:
        return self.comparison["candidate"]

    @property
    def systems(self) -> list[str]:
        """Every evaluated system, in the evaluation's order, then any other with stats."""
        return list(dict.fromkeys([*self.summary.get("systems", {}), *self.stats]))

    def gate_measures(self) -> list[str]:
        """The compared measures the gate decides on: the gate's measure, then each applicable
        rule's primary measure (the first compared measure its name names before a guard's
        ``↔``), in the rules' order; only measures with a paired comparison."""
        paired = {r["measure"] for r in self.comparison.get("paired", [])}
        found = [self.measure]
        for o in self.gate.get("rules", []):
            if o.get("applicable", True):
                words = o["name"].split("↔")[0].split()[1:]
                found.append(next((w for w in words if w in paired), None))
        return [m for m in dict.fromkeys(found) if m in paired]

    def paired(self, measure: str | None = None) -> dict | None:
        """The comparison's paired row of ``measure`` (default: the gate's), or None."""
        measure = self.measure if measure is None else measure
        return next((r for r in self.comparison.get("paired", []) if r["measure"] == measure),
                    None)


def gate_measure(rules: Iterable, measures: list[str]) -> str:
    """The measure the gate decides on: the first ``no_regression`` rule's, else the first
    compared measure."""
    for rule in rules:
        if getattr(rule, "rule", None) == "no_regression":
            return rule.measure
    return measures[0] if measures else "nDCG@10"
