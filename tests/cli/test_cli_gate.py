"""``releval gate``: the decision as a table or JSON; exit 0 pass, 1 fail, 2 bad file."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from releval.cli import app
from releval.decision.gate import decide
from releval.params.rules import JudgedRule, LatencyRule, SafetyRule
from tests import documents

runner = CliRunner()


def decision(controlled=True, max_ms=300.0):
    evidence = documents.evidence(
        baseline="bm25", candidate="hybrid",
        comparison=documents.comparison(
            controlled=controlled,
            differences=[] if controlled else ["queries: 3 only in the baseline"]),
        slices=pd.DataFrame(),
        safety={"systems": {"hybrid": {"routes": ["bm25", "dense"], "violations": 0,
                                       "by_reason": {}}}},
        metrics={"hybrid": {"Judged@10": 0.75}},
        latency={"hybrid": {"p95": 250.0}})
    return decide([SafetyRule(), JudgedRule(), LatencyRule(max_ms=max_ms)], evidence)


def gate(tmp_path, doc, *args):
    path = tmp_path / "decision.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return runner.invoke(app, ["gate", "--decision", str(path), *args])


def test_pass_prints_the_table_and_exits_0(tmp_path):
    result = gate(tmp_path, decision())
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "PASS" in out and "FAIL" not in out and "UNCONTROLLED" not in out
    for shown in ("safety hybrid", "judged Judged@10", "latency p95", "✓", "0.7500", "250.0"):
        assert shown in out
    assert "✗" not in out


def test_fail_exits_1_and_names_the_failed_rule(tmp_path):
    result = gate(tmp_path, decision(max_ms=200.0))
    assert result.exit_code == 1
    assert "FAIL" in result.stdout and "✗" in result.stdout
    assert "1 failed: latency p95" in result.stdout


def test_uncontrolled_decision_is_labelled(tmp_path):
    result = gate(tmp_path, decision(controlled=False))
    assert result.exit_code == 0
    assert "PASS UNCONTROLLED" in result.stdout
    assert "queries: 3 only in the baseline" in result.stdout


def test_no_rules_passes_with_the_note(tmp_path):
    doc = decide([], documents.evidence(baseline="bm25", candidate="hybrid",
                                        comparison=documents.comparison()))
    result = gate(tmp_path, doc)
    assert result.exit_code == 0 and "note: no rules configured" in result.stdout


def test_json_prints_the_decision_and_keeps_the_exit_status(tmp_path):
    doc = decision(max_ms=200.0)
    result = gate(tmp_path, doc, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == doc



def test_piped_output_keeps_each_rule_on_one_line(tmp_path, monkeypatch):
    """Not a terminal (a pipe, a CI log): no wrap at 80 columns; $COLUMNS when set."""
    from releval.cli.output import PIPED_WIDTH

    monkeypatch.delenv("COLUMNS", raising=False)
    doc = decision(max_ms=200.0)
    lines = gate(tmp_path, doc).stdout.splitlines()
    assert all(len(line) <= PIPED_WIDTH for line in lines)
    for rule in doc["rules"]:  # name, mark, value, threshold and reason: one row
        assert any(rule["name"] in line and rule["reason"] in line for line in lines), rule
    assert len(lines) == len(doc["rules"]) + 6  # title, 3 rules, 2 borders, head, verdict
    monkeypatch.setenv("COLUMNS", "60")
    narrow = gate(tmp_path, doc).stdout.splitlines()
    assert max(map(len, narrow)) == 60 and len(narrow) > len(lines)


@pytest.mark.parametrize(("content", "message"), [
    (None, "file not found"),
    ("{not json", "not valid JSON"),
    ({"rules": []}, "not a gate decision"),
    ('["passed"]', "not a gate decision"),
    ({"passed": True, "rules": ["safety"]}, "not a gate decision"),
])
def test_missing_or_invalid_decision_exits_2_with_one_line(tmp_path, content, message):
    if content is None:
        result = runner.invoke(app, ["gate", "--decision", str(tmp_path / "none.json")])
    else:
        result = gate(tmp_path, content)
    assert result.exit_code == 2
    err = result.stderr.strip()
    assert message in err and len(err.splitlines()) == 1
    assert "Traceback" not in result.output


def test_the_run_console_lists_the_failed_rules_and_counts_the_rest():
    from io import StringIO

    from rich.console import Console

    from releval.cli.files import print_decision

    doc = {"passed": False, "candidate": "hybrid", "baseline": "bm25", "failed": ["b"],
           "rules": [{"rule": "x", "name": "a", "passed": True, "value": 1, "threshold": 0,
                      "reason": "fine reason"},
                     {"rule": "x", "name": "b", "passed": False, "value": 0, "threshold": 1,
                      "reason": "broken reason"}]}
    out = StringIO()
    print_decision(doc, True, Console(file=out, width=200), failed_only=True)
    text = " ".join(out.getvalue().split())  # the title wraps with the table's width
    assert "1 of 2 rules failed (every rule: reports/decision.md)" in text
    assert "broken reason" in text and "fine reason" not in text
    full = StringIO()
    print_decision(doc, True, Console(file=full, width=200))
    assert "fine reason" in full.getvalue() and "broken reason" in full.getvalue()


def test_the_run_console_shows_the_not_applicable_rules_apart():
    from io import StringIO

    from rich.console import Console

    from releval.cli.files import print_decision

    doc = {"passed": True, "candidate": "hybrid", "baseline": "bm25", "failed": [],
           "rules": [{"rule": "x", "name": "a", "passed": True, "value": 1, "threshold": 0,
                      "reason": "fine reason"},
                     {"rule": "coverage", "name": "coverage", "passed": True, "value": None,
                      "threshold": None, "reason": "not applicable: no minimum",
                      "applicable": False}]}
    out = StringIO()
    print_decision(doc, True, Console(file=out, width=200), failed_only=True)
    text = " ".join(out.getvalue().split())
    assert "0 of 1 rules failed, 1 n/a (every rule: reports/decision.md)" in text
    assert "n/a" in text and "not applicable: no minimum" in text and "fine reason" not in text
    assert "PASS · n/a, nothing in the data to check: 1" in text
