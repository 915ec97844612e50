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

from releval.params import Params
from releval.project.history import entries
from releval.project.receipt import describes
from releval.report.decision import render_decision
from releval.report.dvc_plots import plot_tables
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
)


@dataclass(frozen=True)
class Outputs:
    summary: str  # reports/summary.md
    decision: str  # reports/decision.md
    html: str  # reports/index.html
    plots: dict[str, pd.DataFrame]  # reports/plots/<name>.csv: dvc.yaml's plots


def run(p: Params, summary: dict, split_report: dict, source: dict, stats: dict[str, dict],
        ingest: dict, agreement: dict, comparison: dict, slices: pd.DataFrame, safety: dict,
        failures: dict, sheet: pd.DataFrame, gate: dict, *,
        per_query_diff: pd.DataFrame | None = None, curves: pd.DataFrame | None = None,
        violations: pd.DataFrame | None = None, failure_rows: pd.DataFrame | None = None,
        queries: pd.DataFrame | None = None, reliability: pd.DataFrame | None = None,
        receipt: dict | None = None, selftest: dict | None = None,
        selftest_rows: pd.DataFrame | None = None,
        differential: pd.DataFrame | None = None,
        history: list[dict] | None = None, health: dict | None = None) -> Outputs:
    """summary.md: the summary page (with its history part where ``history`` is given), the
    self-test section, a blank line, then the decision; decision.md: the decision alone;
    index.html: the page (``releval.report.html``), which also draws on
    compare/per_query_diff, evaluate/curves, safety/violations, failures/failures, the raw
    queries, evaluate/reliability, the run's ``receipt`` (None: not written yet), the
    self-test's outputs (``releval.report.selftest``), the ledger's ``history``
    (``releval.project.history.entries`` rows; None: no history section content) and
    health/health.json (``health``; None: none measured)."""
    decision = render_decision(comparison, slices, safety, failures, sheet, gate,
                               p.slices.min_n, health or {}, query_set_section(split_report),
                               receipt)
    page = render_summary(summary, split_report, source, stats, ingest, agreement, history)
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
        health=health)
    return Outputs(summary=page + "\n" + decision, decision=decision,
                   html=render_html(inputs), plots=plot_tables(inputs))


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--split-report", default="data/split/split_report.json")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--fused", default="data/fused")
    ap.add_argument("--summary", default="data/evaluate/summary.json")
    ap.add_argument("--judgments", default="data/judgments")
    ap.add_argument("--compare", default="data/compare/comparison.json")
    ap.add_argument("--per-query-diff", default="data/compare/per_query_diff.parquet")
    ap.add_argument("--curves", default="data/evaluate/curves.parquet")
    ap.add_argument("--reliability", default="data/evaluate/reliability.parquet",
                    help="read for a recommendation evaluation only")
    ap.add_argument("--selftest", default="data/selftest")
    ap.add_argument("--slices", default="data/slices/slices.parquet")
    ap.add_argument("--safety", default="data/safety/safety.json")
    ap.add_argument("--gate", default="data/gate/decision.json")
    ap.add_argument("--failures", default="data/failures")
    ap.add_argument("--violations", default="data/safety/violations.parquet")
    ap.add_argument("--health", default="data/health/health.json")
    ap.add_argument("--receipt", default=None,
                    help="the run's receipt.json to show (absent: the page says it is "
                         "written at the end of the run)")
    ap.add_argument("--ledger", default="reports/runs",
                    help="the folder of the runs' receipts, for the history section")
    ap.add_argument("--out", default="reports/summary.md")
    args = ap.parse_args()
    p = params_of(args)
    judgments, failures = Path(args.judgments), Path(args.failures)
    checked = Path(args.selftest)
    receipt = read_doc(args.receipt) if args.receipt and Path(args.receipt).exists() else None
    if receipt is not None and not describes(receipt):
        receipt = None  # left by an earlier run: not this page's
    summary = read_doc(args.summary)
    reliability = read_table(args.reliability) if summary.get("recommendation") else None
    result = run(p, summary, read_doc(args.split_report),
                 read_doc(Path(args.raw) / "source.json"),
                 system_stats(p, args.candidates, args.fused),
                 read_doc(judgments / "ingest.json"), read_doc(judgments / "agreement.json"),
                 read_doc(args.compare), read_table(args.slices), read_doc(args.safety),
                 read_doc(failures / "failures.json"),
                 pd.read_csv(failures / "worksheet.csv", keep_default_na=False),
                 read_doc(args.gate), per_query_diff=read_table(args.per_query_diff),
                 curves=read_table(args.curves), violations=read_table(args.violations),
                 failure_rows=read_table(failures / "failures.parquet"),
                 queries=read_table(Path(args.raw) / "queries.parquet"),
                 reliability=reliability, receipt=receipt,
                 selftest=read_doc(checked / "selftest.json"),
                 selftest_rows=read_table(checked / "selftest.parquet"),
                 differential=read_table(checked / "differential.parquet"),
                 history=entries(Path(args.ledger)), health=read_doc(args.health))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.summary)
    out.with_name("decision.md").write_text(result.decision)
    out.with_name("index.html").write_text(result.html, encoding="utf-8")
    for name, table in result.plots.items():
        path = out.with_name("plots") / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(path, index=False)
    print(f"report: {args.out}")


if __name__ == "__main__":
    guarded(main)
