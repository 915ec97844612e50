"""Stage ``report``: reports/summary.md from the evaluation, split and candidate stats,
then the decision: the comparison, slices, no-answer and safety, and the release gate (also
alone in reports/decision.md, which ``releval demo`` prints); and reports/index.html, the
whole report in one self-contained page with its plots (no network needed to open it).

A recommendation evaluation (summary.json with a "recommendation" block) also draws on
evaluate/reliability.parquet (the reliability diagram) and the split report's forward-in-time
against random split.

The pages are rendered by ``releval.report.summary``, ``releval.report.decision`` and
``releval.report.html`` (plots: ``releval.report.plots``). The page shows the run's receipt
when ``--receipt`` names one of these very outputs (``releval.project.receipt.describes``;
the flow writes reports/receipt.json just before this stage); otherwise the page says none
describes them yet. The history section (and reports/plots/history.csv) draws on the runs
kept in ``--ledger`` (reports/runs/, ``releval.project.history.entries``; the flow keeps this
run's receipt there just before this stage too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.documents.agreement_auto import AgreementAuto
from releval.documents.comparison import Comparison
from releval.documents.decision import Decision
from releval.documents.health import Health
from releval.documents.offpolicy import OffPolicyDoc
from releval.documents.summary import Summary
from releval.params import Params
from releval.project.history import entries
from releval.project.receipt import describes
from releval.report import automatic as report_automatic
from releval.report.decision import render_decision
from releval.report.dvc_plots import TEMPLATE, page_template, plot_tables
from releval.report.html import render_html
from releval.report.inputs import ReportInputs, gate_measure
from releval.report.selftest import selftest_lines
from releval.report.summary import query_set_section, render_summary
from stages.common import (
    guarded,
    params_of,
    parser,
    read_doc,
    read_table,
    system_stats,
    write_csv,
    write_outputs,
)


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``reports.<field>`` (``releval.artifacts``); ``plots``: name ->
    the table of dvc.yaml's plot written as ``<name>.csv`` in the plots folder."""

    summary: str
    decision: str
    html: str
    plots: dict[str, pd.DataFrame]


def run(p: Params, summary: dict, split_report: dict, source: dict, stats: dict[str, dict],
        ingest: dict, agreement: dict, comparison: dict, slices: pd.DataFrame, safety: dict,
        failures: dict, sheet: pd.DataFrame, gate: dict, *,
        per_query_diff: pd.DataFrame | None = None, curves: pd.DataFrame | None = None,
        violations: pd.DataFrame | None = None, failure_rows: pd.DataFrame | None = None,
        queries: pd.DataFrame | None = None, reliability: pd.DataFrame | None = None,
        receipt: dict | None = None, selftest: dict | None = None,
        selftest_rows: pd.DataFrame | None = None,
        differential: pd.DataFrame | None = None,
        history: list[dict] | None = None, health: dict | None = None,
        automatic: dict | None = None, offpolicy: dict | None = None,
        offpolicy_estimates: pd.DataFrame | None = None,
        offpolicy_weights: pd.DataFrame | None = None) -> Outputs:
    """summary.md: the summary page (with its history part where ``history`` is given), the
    self-test section, a blank line, then the decision; decision.md: the decision alone;
    index.html: the page (``releval.report.html``), which also draws on
    compare/per_query_diff, evaluate/curves, safety/violations, failures/failures, the raw
    queries, evaluate/reliability, the run's ``receipt`` (None: not written yet), the
    self-test's outputs (``releval.report.selftest``), the ledger's ``history``
    (``releval.project.history.entries`` rows; None: no history section content),
    health/health.json (``health``; None: none measured) and autojudge/agreement_auto.json
    (``automatic``: its section, and one line in each page, ``releval.report.automatic``)
    and the off-policy evaluation (offpolicy/: ``offpolicy``, its document,
    ``offpolicy_estimates``, ``offpolicy_weights``; None: the page says there is none)."""
    query_set = query_set_section(split_report, bool(summary.get("recommendation")))
    decision = render_decision(comparison, slices, safety, failures, sheet, gate,
                               p.slices.min_n, health or {}, query_set, receipt, offpolicy)
    if report_automatic.configured(automatic):
        decision += "\n" + report_automatic.decision_line(automatic, gate) + "\n"
    page = render_summary(summary, split_report, source, stats, ingest, agreement, history,
                          receipt, report_automatic.headline(automatic)
                          if report_automatic.configured(automatic) else None)
    checked = selftest_lines(selftest, selftest_rows, differential)
    if checked:
        page += "\n## Self-test\n\n" + "\n".join(checked) + "\n"
    inputs = ReportInputs(
        summary=summary, stats=stats, comparison=comparison, slices=slices, safety=safety,
        failures=failures, sheet=sheet, gate=gate, split_report=split_report, source=source,
        ingest=ingest, agreement=agreement,
        measure=gate_measure(p.gate.rules, comparison.get("measures", [])),
        min_n=p.slices.min_n, per_query_diff=per_query_diff, curves=curves,
        violations=violations, failure_rows=failure_rows, queries=queries,
        reliability=reliability, receipt=receipt, selftest=selftest,
        selftest_rows=selftest_rows, differential=differential, history=history,
        health=health, automatic=automatic, offpolicy=offpolicy,
        offpolicy_estimates=offpolicy_estimates, offpolicy_weights=offpolicy_weights)
    return Outputs(summary=page + "\n" + decision, decision=decision,
                   html=render_html(inputs), plots=plot_tables(inputs))


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default=artifacts.folder("raw"))
    ap.add_argument("--split-report", default=artifacts.at("split.report"))
    ap.add_argument("--candidates", default=artifacts.group_folder("candidates"))
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--summary", default=artifacts.at("evaluate.summary"))
    ap.add_argument("--judgments", default=artifacts.folder("judgments"))
    ap.add_argument("--compare", default=artifacts.at("compare.comparison"))
    ap.add_argument("--per-query-diff", default=artifacts.at("compare.diff"))
    ap.add_argument("--curves", default=artifacts.at("evaluate.curves"))
    ap.add_argument("--reliability", default=artifacts.at("evaluate.reliability"),
                    help="read for a recommendation evaluation only")
    ap.add_argument("--selftest", default=artifacts.folder("selftest"))
    ap.add_argument("--slices", default=artifacts.at("slices.table"))
    ap.add_argument("--safety", default=artifacts.at("safety.report"))
    ap.add_argument("--gate", default=artifacts.at("gate.decision"))
    ap.add_argument("--failures", default=artifacts.folder("failures"))
    ap.add_argument("--violations", default=artifacts.at("safety.violations"))
    ap.add_argument("--health", default=artifacts.at("health.report"))
    ap.add_argument("--offpolicy", default=artifacts.folder("offpolicy"))
    ap.add_argument("--autojudge", default=artifacts.at("autojudge.report"))
    ap.add_argument("--receipt", default=None,
                    help="the run's receipt.json to show (absent: the page says it is "
                         "written at the end of the run)")
    ap.add_argument("--ledger", default=artifacts.at("reports.ledger"),
                    help="the folder of the runs' receipts, for the history section")
    ap.add_argument("--out", default=artifacts.at("reports.summary"),
                    help="the summary's path; the other pages are written beside it")
    args = ap.parse_args()
    p = params_of(args)
    judgments, failures, checked = args.judgments, args.failures, args.selftest
    receipt = read_doc(args.receipt) if args.receipt and Path(args.receipt).exists() else None
    if receipt is not None and not describes(receipt):
        receipt = None  # left by an earlier run: not this page's
    summary = read_doc(args.summary, Summary)
    reliability = read_table(args.reliability) if summary.get("recommendation") else None
    result = run(p, summary, read_doc(args.split_report),
                 read_doc(artifacts.within(args.raw, "raw.source")),
                 system_stats(p, args.candidates, args.fused),
                 read_doc(artifacts.within(judgments, "judgments.ingest")),
                 read_doc(artifacts.within(judgments, "judgments.agreement")),
                 read_doc(args.compare, Comparison), read_table(args.slices), read_doc(args.safety),
                 read_doc(artifacts.within(failures, "failures.report")),
                 pd.read_csv(artifacts.within(failures, "failures.worksheet"),
                             keep_default_na=False),
                 read_doc(args.gate, Decision), per_query_diff=read_table(args.per_query_diff),
                 curves=read_table(args.curves), violations=read_table(args.violations),
                 failure_rows=read_table(artifacts.within(failures, "failures.failures")),
                 queries=read_table(artifacts.within(args.raw, "raw.queries")),
                 reliability=reliability, receipt=receipt,
                 selftest=read_doc(artifacts.within(checked, "selftest.totals")),
                 selftest_rows=read_table(artifacts.within(checked, "selftest.rows")),
                 differential=read_table(artifacts.within(checked, "selftest.differential")),
                 history=entries(Path(args.ledger)), health=read_doc(args.health, Health),
                 automatic=read_doc(args.autojudge, AgreementAuto)
                 if p.judgments.automatic else None,
                 offpolicy=read_doc(artifacts.within(args.offpolicy, "offpolicy.report"),
                                    OffPolicyDoc),
                 offpolicy_estimates=read_table(artifacts.within(args.offpolicy,
                                                                 "offpolicy.estimates")),
                 offpolicy_weights=read_table(artifacts.within(args.offpolicy,
                                                               "offpolicy.weights")))
    write_outputs(result, "reports", Path(args.out).parent, plots=write_plots)
    print(f"report: {args.out}")


def write_plots(plots: dict[str, pd.DataFrame], folder: Path) -> None:
    """Each plot's table as ``<name>.csv`` in ``folder``, and the offline page template of
    ``dvc plots show`` (``dvc_plots.TEMPLATE``)."""
    for name, table in plots.items():
        write_csv(folder / f"{name}.csv", table)
    (folder / TEMPLATE).write_text(page_template(), encoding="utf-8")


if __name__ == "__main__":
    guarded(main)
