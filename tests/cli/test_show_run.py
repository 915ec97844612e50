"""The console after a run: the retrieval headline table, or for a recommendation evaluation
the measures by group with n and undefined (n/a where one does not apply), within the
terminal's width."""

import io
import json

import pytest
from rich.console import Console

from releval.cli.project import _recommendation_tables, _show_run
from tests.report.sample import BASE, CAND, GATE, REC_SUMMARY, SUMMARY


@pytest.fixture(autouse=True)
def piped(monkeypatch):
    """stdout is captured, not a terminal, and no width is stated (pytest-xdist states 80)."""
    monkeypatch.delenv("COLUMNS", raising=False)


def project(tmp_path, summary):
    (tmp_path / "data/evaluate").mkdir(parents=True)
    (tmp_path / "data/evaluate/summary.json").write_text(json.dumps(summary))
    (tmp_path / "data/gate").mkdir()
    (tmp_path / "data/gate/decision.json").write_text(json.dumps(GATE))
    return tmp_path


def test_a_retrieval_run_prints_the_headline_measures(tmp_path, capsys):
    _show_run(project(tmp_path, SUMMARY), "releval run")
    out = capsys.readouterr().out
    assert "releval run — test split, 42 queries, qrels: hand-made" in out
    assert "nDCG@10" in out and "R@100" in out and "Judged@10" in out
    assert "ranking" not in out and "n/a" not in out
    assert "FAIL" in out and "report: reports/summary.md" in out


def test_piped_the_reproduce_hint_and_the_gate_rows_are_one_line_each(tmp_path, capsys):
    from releval.cli.output import PIPED_WIDTH

    root = project(tmp_path, SUMMARY)
    (root / "reports").mkdir()
    (root / "reports/receipt.json").write_text(json.dumps({"sha256": "ab" * 32}))
    _show_run(root, "releval run")
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= PIPED_WIDTH for line in lines)
    assert ("receipt: reports/receipt.json (sha256 abababababab); check it with `releval "
            "reproduce reports/receipt.json`, list runs with `releval history`") in lines
    for rule in GATE["rules"]:
        if not rule["passed"]:
            assert any(rule["name"] in line and rule["reason"] in line for line in lines)


def test_a_recommendation_run_prints_the_measures_by_group(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "140")  # a stated width: the groups split to fit it
    _show_run(project(tmp_path, REC_SUMMARY), "releval run")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "releval run — test split, 42 user-queries, qrels: purchases"
    assert lines[1] == ("horizon 30 days · seen items excluded · AUC negatives: 100 sampled · "
                        "42 users (2 undefined) · 5 held out")
    titles = [line.strip() for line in lines if line.strip().startswith("releval run — ")]
    assert titles[1:] == ["releval run — ranking", "releval run — calibration",
                          "releval run — beyond-accuracy"]
    assert all(len(line) <= 140 for line in lines)
    calibration = out[out.index("releval run — calibration"):
                      out.index("releval run — beyond-accuracy")]
    base = [line for line in calibration.splitlines() if BASE in line]
    assert len(base) == 1 and base[0].count("n/a") == 2
    assert "not applicable" in calibration and "0.4321" in calibration
    assert "n 40 · undef. 0" in calibration and "FAIL" in out
    assert "n/a = not applicable" in out


def test_a_narrow_terminal_gets_several_tables_per_group():
    tables = _recommendation_tables(REC_SUMMARY, "run", 60)
    screen = Console(width=60, file=io.StringIO(), record=True)
    for table in tables:
        screen.print(table)
    text = screen.export_text()
    assert all(len(line) <= 60 for line in text.splitlines())
    titles = [t.title for t in tables]
    assert "run — ranking (1/2)" in titles and "run — ranking (2/2)" in titles
    assert all(title in text for title in titles)
    for measure in REC_SUMMARY["systems"][CAND]:
        assert sum(measure == c.header for t in tables for c in t.columns) == 1, measure


def test_a_recommendation_run_prints_the_paired_comparison_and_the_changed_slices(
        tmp_path, capsys):
    root = project(tmp_path, REC_SUMMARY)
    (root / "data/compare").mkdir()
    (root / "data/compare/comparison.json").write_text(json.dumps({"unit": "user", "paired": [
        {"measure": "nDCG@10", "slice": "all", "n": 40, "mean_baseline": 0.2,
         "mean_candidate": 0.25, "mean_diff": 0.05, "ci_low": 0.01, "ci_high": 0.09,
         "wins": 20, "ties": 10, "losses": 10, "p_value": 0.01, "p_holm": 0.02,
         "verdict": "improved"}]}))
    (root / "data/slices").mkdir()
    (root / "data/slices/slices.json").write_text(json.dumps({
        "tested": 6, "too_small": 2, "family": 6, "changed": [
            {"dimension": "all", "slice": "all", "measure": "nDCG@10", "n": 40,
             "mean_diff": 0.05, "p_holm": 0.02, "verdict": "improved"},
            {"dimension": "history", "slice": "long_tail", "measure": "nDCG@10", "n": 15,
             "mean_diff": -0.0725, "p_holm": 0.03, "verdict": "regressed"}]}))
    _show_run(root, "releval run")
    out = capsys.readouterr().out
    assert "paired comparison over 40 users" in out and "[+0.0100, +0.0900]" in out
    assert "slices: 6 tested, 2 too small; changed after Holm over 6:" in out
    slice_rows = [line for line in out.splitlines() if "long_tail" in line]
    assert len(slice_rows) == 1 and "-0.0725" in slice_rows[0] and "regressed" in slice_rows[0]


def test_a_measure_the_data_cannot_give_shows_n_a_and_says_why(tmp_path, capsys):
    unmarked = {"value": None, "n": 0, "undefined": 42, "empty": 0, "applicable": False,
                "level": "query", "missing": "the qrels mark no hard negatives"}
    summary = SUMMARY | {"systems": {s: m | {"HardNeg@10": unmarked}
                                     for s, m in SUMMARY["systems"].items()}}
    _show_run(project(tmp_path, summary), "releval run")
    out = capsys.readouterr().out
    assert "n/a" in out and "HardNeg@10: n/a = not applicable: the qrels mark no hard " \
                           "negatives" in " ".join(out.split())


def test_run_with_gate_exits_1_when_the_gate_fails_and_0_when_it_passes(tmp_path, monkeypatch):
    """`releval run --gate` is the one command CI needs: the run's own outcome, then the
    gate's (the flow itself is replaced here; tests/flows run it for real)."""
    from typer.testing import CliRunner

    from releval.cli import app
    from releval.cli import project as cli

    root = project(tmp_path, SUMMARY)
    (root / "dvc.yaml").write_text("stages: {}\n")
    (root / "flows").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setattr(cli, "_run_flow", lambda params, overrides, verbose=False: 0)
    assert not GATE["passed"]
    failed = CliRunner().invoke(app, ["run", "--gate"])
    assert failed.exit_code == 1 and "FAIL" in failed.stdout
    assert CliRunner().invoke(app, ["run"]).exit_code == 0  # without --gate: it ran
    (root / "data/gate/decision.json").write_text(json.dumps(GATE | {"passed": True,
                                                                     "failed": []}))
    assert CliRunner().invoke(app, ["run", "--gate"]).exit_code == 0
    monkeypatch.setattr(cli, "_run_flow", lambda params, overrides, verbose=False: 2)
    assert CliRunner().invoke(app, ["run", "--gate"]).exit_code == 2  # the flow's own status


def test_run_json_is_one_document_with_the_outcome_stages_decision_and_paths(tmp_path,
                                                                              monkeypatch):
    from typer.testing import CliRunner

    from releval.cli import app
    from releval.cli import project as cli

    root = project(tmp_path, SUMMARY)
    (root / "dvc.yaml").write_text("stages: {}\n")
    (root / "flows").mkdir()
    decided = GATE | {"failed": [f"safety {CAND}"], "not_applicable": []}
    (root / "data/gate/decision.json").write_text(json.dumps(decided))
    monkeypatch.chdir(root)

    def flow(code, error=None):
        def run(params, overrides, verbose=False, command="releval run", outcome=None):
            outcome.write_text(json.dumps({"stages": {"inputs": {"status": "ran",
                                                                 "seconds": 0.4}},
                                           "error": error}))
            return code
        return run

    monkeypatch.setattr(cli, "_run_flow", flow(0))
    result = CliRunner().invoke(app, ["run", "--json", "--gate"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 == doc["exit_status"]  # the gate failed under --gate
    assert doc["outcome"] == "fail" and doc["error"] is None
    assert doc["stages"] == {"inputs": {"status": "ran", "seconds": 0.4}}
    assert doc["decision"] == {"verdict": "FAIL", "passed": False, "candidate": CAND,
                               "baseline": BASE, "failed": [f"safety {CAND}"],
                               "not_applicable": []}
    assert doc["paths"]["decision"] == "data/gate/decision.json"
    assert set(doc["paths"]) == {"decision", "report", "summary", "receipt", "log"}
    monkeypatch.setattr(cli, "_run_flow", flow(2, "data/x.csv: file not found"))
    refused = CliRunner().invoke(app, ["run", "--json"])
    doc = json.loads(refused.stdout)
    assert refused.exit_code == 2 == doc["exit_status"]
    assert doc["outcome"] == "error" and doc["decision"] is None
    assert doc["error"] == "data/x.csv: file not found"
