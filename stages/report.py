"""Stage ``report``: reports/summary.md from the evaluation, split and candidate stats,
then the decision: the comparison, slices, no-answer and safety, and the release gate (also
alone in reports/decision.md, which ``releval demo`` prints); and reports/index.html, the
whole report in one self-contained page with its plots (no network needed to open it).

A recommendation evaluation (summary.json with a "recommendation" block) also draws on
evaluate/reliability.parquet (the reliability diagram) and the split report's forward-in-time
against random split.

The pages are rendered by ``releval.report.summary``, ``releval.report.decision`` and
``releval.report.html`` (plots: ``releval.report.plots``) from the stage's inputs,
``releval.report.inputs.ReportInputs``. The page shows the run's receipt when
reports/receipt.json describes these very outputs (``releval.project.receipt.describes``;
the flow writes it just before this stage); otherwise the page says none describes them
yet. The history section (and reports/plots/history.csv) draws on the runs kept in
reports/runs/ (``releval.project.history.entries``; the flow keeps this run's receipt there
just before this stage too).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.params import Params
from releval.report import automatic as report_automatic
from releval.report import drawer
from releval.report.decision import render_decision
from releval.report.dvc_plots import TEMPLATE, page_template, plot_tables
from releval.report.html import render_html
from releval.report.inputs import ReportInputs, gate_measure
from releval.report.selftest import selftest_lines
from releval.report.summary import query_set_section, render_summary
from stages.common import write_csv, written_with


def write_plots(plots: dict[str, pd.DataFrame], folder: Path) -> None:
    """Each plot's table as ``<name>.csv`` in ``folder``, and the offline page template of
    ``dvc plots show`` (``dvc_plots.TEMPLATE``)."""
    for name, table in plots.items():
        write_csv(folder / f"{name}.csv", table)
    (folder / TEMPLATE).write_text(page_template(), encoding="utf-8")


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``reports.<field>`` (``releval.artifacts``); ``plots``: name ->
    the table of dvc.yaml's plot written as ``<name>.csv`` in the plots folder."""

    summary: str
    decision: str
    html: str
    plots: dict[str, pd.DataFrame] = written_with(write_plots)


Inputs = ReportInputs  # the page's inputs are the stage's (``releval.report.inputs``)


def head_start() -> None:
    """The plots' drawing helper started (``releval.report.drawer``): its runtime starts
    while the inputs are read and the pages rendered."""
    drawer.start()


def run(p: Params, inputs: Inputs) -> Outputs:
    """summary.md: the summary page (with its history part where the ledger holds runs), the
    self-test section, a blank line, then the decision; decision.md: the decision alone;
    index.html: the page (``releval.report.html``); plots: the tables of dvc.yaml's plots."""
    i = replace(inputs, min_n=p.slices.min_n,
                measure=gate_measure(p.gate.rules, inputs.comparison.measures))
    query_set = query_set_section(i.split_report, bool(i.summary.recommendation))
    decision = render_decision(i.comparison, i.slices, i.safety, i.failures, i.sheet, i.gate,
                               i.min_n, i.health or {}, query_set, i.receipt, i.offpolicy)
    if report_automatic.configured(i.automatic):
        decision += "\n" + report_automatic.decision_line(i.automatic, i.gate) + "\n"
    page = render_summary(i.summary, i.split_report, i.source, i.stats, i.ingest, i.agreement,
                          i.history, i.receipt, report_automatic.headline(i.automatic)
                          if report_automatic.configured(i.automatic) else None)
    checked = selftest_lines(i.selftest, i.selftest_rows, i.differential)
    if checked:
        page += "\n## Self-test\n\n" + "\n".join(checked) + "\n"
    return Outputs(summary=page + "\n" + decision, decision=decision,
                   html=render_html(i), plots=plot_tables(i))


def line(p: Params, result: Outputs) -> str:
    return f"report: {artifacts.at('reports.summary')}"
