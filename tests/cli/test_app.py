"""The assembled ``releval`` app: every command, in order, runnable as ``python -m releval.cli``;
the project's commands refuse to run outside a project."""

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from releval.cli import COMMANDS as FUNCTIONS
from releval.cli import app, first_sentence

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["metrics", "init", "run", "reproduce", "history", "serve", "drift", "plan", "demo",
            "compare", "gate"]


def test_help_lists_every_command_in_order():
    group = typer.main.get_command(app)
    assert group.list_commands(click.Context(group)) == COMMANDS
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    assert "Offline evaluation of retrieval and candidate generation." in result.stdout



def flat(text: str) -> str:
    """``text`` on one line (click's formatter also wraps after a hyphen: rejoined)."""
    return " ".join(re.sub(r"-\n\s*", "-", text).split())


def test_help_lists_each_command_with_its_first_sentence_unbroken():
    out = CliRunner().invoke(app, ["--help"]).stdout
    for name, command in FUNCTIONS.items():
        assert f"{name} {first_sentence(command)}" in flat(out), name


def test_each_commands_help_renders_its_paragraphs_and_shows_flags_as_flags():
    for name, command in FUNCTIONS.items():
        result = CliRunner().invoke(app, [name, "--help"])
        assert result.exit_code == 0, result.output
        blocks = {flat(block) for block in re.split(r"\n\s*\n", result.stdout)}
        for paragraph in inspect.getdoc(command).split("\n\n"):
            assert flat(paragraph) in blocks, (name, paragraph)
        assert "<bool>" not in result.stdout and "``" not in result.stdout, name
        for flag in ("--help", *(["--gate", "--verbose"] if name == "run" else [])):
            line = next(x for x in result.stdout.splitlines() if flag in x)
            assert "<" not in line, line  # a flag takes no value


def test_module_entry_point_runs_the_app():
    done = subprocess.run([sys.executable, "-m", "releval.cli", "gate", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Show the release decision" in done.stdout


def test_project_commands_outside_a_project_exit_2_with_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["run"], ["reproduce", "receipt.json"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "not a releval project" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_init_without_data_exits_2_with_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (`releval demo` outside a project makes one: test_init)
    result = CliRunner().invoke(app, ["init", "proj"])
    assert result.exit_code == 2, result.output
    assert "give the data: --corpus" in result.stderr and "--interactions" in result.stderr
    assert "--logged-feedback" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "proj").exists()


def test_history_of_an_empty_ledger_says_so(tmp_path):
    result = CliRunner().invoke(app, ["history", "--ledger", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "no runs kept yet" in " ".join(result.stderr.split())  # rich wraps long paths


@pytest.mark.parametrize(("args", "message"), [
    (["run", "--params", "missing.yaml"], "missing.yaml: file not found"),
    (["run", "--params", "folder"], "folder: is a folder, expected a file"),
    (["run", "--params", "list.yaml"], "list.yaml: not a YAML mapping of sections"),
    (["demo", "--params", "missing.yaml"], "missing.yaml: file not found"),
    (["demo", "--params", "list.yaml"], "list.yaml: not a YAML mapping of sections"),
    (["history", "--ledger", "list.yaml"], "list.yaml: is a file, expected the folder"),
    (["gate", "--decision", "missing.json"], "missing.json: file not found"),
    (["metrics", "list.yaml", "missing.txt"], "missing.txt: file not found"),
    (["compare", "missing.csv", "list.yaml"], "missing.csv: file not found"),
])
def test_a_missing_or_unreadable_input_exits_2_with_one_line_naming_it(tmp_path, monkeypatch,
                                                                       args, message):
    """The input rules (docs/contracts.md): status 2 and one line, in a project too."""
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "flows").mkdir()
    (tmp_path / "folder").mkdir()
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (args, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), result.stderr
    assert result.stdout == ""


def test_history_json_is_the_ledgers_entries(tmp_path):
    result = CliRunner().invoke(app, ["history", "--ledger", str(tmp_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == []
