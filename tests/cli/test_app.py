"""The assembled ``releval`` app: every command, in order, runnable as ``python -m releval.cli``;
the project's commands refuse to run outside a project."""

import subprocess
import sys
from pathlib import Path

import click
import typer
from typer.testing import CliRunner

from releval.cli import app

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["metrics", "init", "run", "reproduce", "history", "serve", "drift", "demo", "compare",
            "gate"]


def test_help_lists_every_command_in_order():
    group = typer.main.get_command(app)
    assert group.list_commands(click.Context(group)) == COMMANDS
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    assert "Offline evaluation of retrieval and candidate generation." in result.stdout


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
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "proj").exists()


def test_history_of_an_empty_ledger_says_so(tmp_path):
    result = CliRunner().invoke(app, ["history", "--ledger", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "no runs kept yet" in " ".join(result.stderr.split())  # rich wraps long paths
