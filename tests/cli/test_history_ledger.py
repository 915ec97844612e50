"""`releval history` on a ledger it cannot read as a whole: a named folder that is not there
is refused in one line, a receipt of another schema is listed in its place with what it
lacks."""

import json

from typer.testing import CliRunner

from releval.cli import app
from releval.project.receipt import digest, write
from tests.project.test_history import receipt


def invoke(*args: str):
    return CliRunner().invoke(app, list(map(str, args)))


def test_a_mistyped_ledger_folder_is_named_as_missing(tmp_path):
    typo = tmp_path / "reports" / "rnus"
    result = invoke("history", "--ledger", typo)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith(f"error: {typo}: no such folder"), lines[0]


def test_without_a_ledger_option_a_project_with_no_runs_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("history")
    assert result.exit_code == 0, result.output
    assert "no runs kept yet" in " ".join(result.stderr.split())


def test_a_receipt_of_another_schema_is_listed_with_what_it_lacks(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: full lines, no cell cut
    write(tmp_path / "20261123T030000Z-a.json", receipt(0.5, 0.5))
    other = {"schema": "releval.project.receipt/0", "params": {"values": {}}}
    write(tmp_path / "20261130T030000Z-b.json",
          {"receipt": other, "sha256": digest(other), "run": {}})
    table = invoke("history", "--ledger", tmp_path)
    assert table.exit_code == 0, table.output
    shown = " ".join(table.stdout.split())
    assert "20261130T030000Z-b.json" in shown and "a receipt of another schema" in shown
    assert "set aside (its figures cannot be read, so no run is compared with it" in shown
    rows = json.loads(invoke("history", "--ledger", tmp_path, "--json").stdout)
    assert rows[1]["problem"].startswith("set aside (its figures cannot be read")  # why
    assert rows[1]["problem"].endswith("lacks code.commit, code.dirty, "
                                       "work.queries_evaluated, inputs")
