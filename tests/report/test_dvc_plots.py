"""The CSV tables behind dvc.yaml's plots: fixed columns, baseline and candidate side by side;
and the page ``dvc plots show`` writes from them, which loads nothing from the network."""

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from releval import artifacts
from releval.project.scaffold import DVC_CONFIG
from releval.report.dvc_plots import TEMPLATE, page_template, plot_tables
from stages.report import write_plots
from tests.dag import ROOT
from tests.report import sample

REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=", re.I)
TEMPLATE_SETTING = f"html_template = ../{artifacts.at('reports.plots')}/{TEMPLATE}"


def dvc_plots_page(folder: Path) -> Path:
    """``dvc plots show`` in a scratch DVC project at ``folder``: this checkout's dvc.yaml plots
    and .dvc/config, the report stage's plot files from the sample (with its ledger); the
    page it writes."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=folder,
                   check=True)
    (folder / ".dvc" / "config").write_text((ROOT / ".dvc" / "config").read_text())
    plots = yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]
    (folder / "dvc.yaml").write_text(yaml.safe_dump({"plots": plots}, sort_keys=False))
    out = artifacts.path("reports.plots", folder)
    out.mkdir(parents=True)
    write_plots(plot_tables(sample.inputs(history=sample.history(folder / "runs"))), out)
    subprocess.run([sys.executable, "-m", "dvc", "plots", "show", "-o", "dvc_plots", "-q"],
                   cwd=folder, check=True)
    return folder / "dvc_plots" / "index.html"


def test_tables_for_dvc_plots():
    inputs = sample.inputs()
    out = plot_tables(inputs)
    assert set(out) == {"per_query_delta", "recall_at_k", "ndcg_at_k", "slices"}
    delta = out["per_query_delta"]
    assert list(delta.columns) == ["rank", "query_id", "delta"]
    assert delta["delta"].is_monotonic_increasing and delta["rank"].tolist()[0] == 1
    diff = inputs.per_query_diff
    wanted = diff[(diff["measure"] == inputs.measure) & diff["diff"].notna()]
    assert sorted(delta["delta"]) == sorted(wanted["diff"].round(6))
    recall = out["recall_at_k"]
    assert list(recall.columns) == ["k", "baseline", "candidate"]
    c = inputs.curves
    at = c[(c["family"] == "R") & (c["system"] == inputs.candidate)].set_index("k")["value"]
    assert recall.set_index("k")["candidate"].to_dict() == at.round(6).to_dict()
    slices = out["slices"]
    assert slices["slice"].iloc[0] == "all" and list(slices.columns) == [
        "slice", "delta", "ci_low", "ci_high", "verdict"]
    assert all("=" in s for s in slices["slice"].iloc[1:])


def test_without_per_query_or_curves_only_the_slices():
    inputs = sample.inputs(per_query_diff=None, curves=None)
    assert set(plot_tables(inputs)) == {"slices"}
    assert isinstance(plot_tables(inputs)["slices"], pd.DataFrame)


def test_the_history_table_has_the_headline_mean_of_every_run(tmp_path):
    inputs = sample.inputs(history=sample.history(tmp_path))
    table = plot_tables(inputs)["history"]
    assert list(table.columns) == ["run", "finished_at", "receipt", "decision", "baseline",
                                   "candidate", "fixture_baseline", "fixture_candidate"]
    assert table["run"].tolist() == [1, 2, 3]
    assert table["receipt"].tolist() == [r.sha256 for r in inputs.history]
    assert table["decision"].tolist() == ["PASS", "FAIL", "PASS"]
    assert table["candidate"].tolist() == [0.31, 0.32, 0.68]  # run 1: its headline value
    assert table["baseline"].tolist() == [0.3, 0.3, 0.45]
    assert table["fixture_candidate"].isna().tolist() == [True, False, False]
    assert table["fixture_baseline"].tolist()[1:] == [0.6, 0.6]
    written = table.to_csv(index=False).splitlines()
    assert written[1] == "1,2026-11-01T08:00:00+00:00," + inputs.history[0].sha256 + \
        ",PASS,0.3,0.31,,"
    assert "history" not in plot_tables(sample.inputs())


def test_the_dvc_plots_template_has_the_vega_libraries_inline():
    page = page_template()
    assert "{plot_divs}" in page and "{scripts}" not in page  # DVC's CDN scripts: never
    assert not REMOTE_SCRIPT.search(page) and "window.vegaEmbed" in page
    assert page.count("<script") == 1 and page.count("</script>") == 1


def test_the_project_and_every_init_project_name_the_template():
    assert TEMPLATE_SETTING in (ROOT / ".dvc" / "config").read_text()
    assert TEMPLATE_SETTING in DVC_CONFIG


def test_dvc_plots_show_writes_a_page_that_loads_nothing_from_the_network(tmp_path):
    page = dvc_plots_page(tmp_path).read_text(encoding="utf-8")
    assert not REMOTE_SCRIPT.search(page) and "cdn.jsdelivr" not in page
    plots = yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"]
    assert page.count("vegaEmbed('#") == len(plots)
