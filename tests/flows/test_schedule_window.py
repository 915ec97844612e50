"""A scheduled run's window: params values formatted with the run's scheduled time, a glob
naming the last match; and `releval serve`'s one-line refusals."""

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prefect.testing.utilities import prefect_test_harness

from flows.schedule import gate_message, scheduled, window_values, write_window
from releval.errors import InputError
from releval.params import load_params
from releval.project.runner import one_run
from tests.projects import HARNESS_S

ROOT = Path(__file__).resolve().parents[2]
MONDAY = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def test_a_window_takes_the_runs_date_and_the_last_match_of_a_glob(tmp_path):
    for week in ("2026-W47", "2026-W48", "2026-W49"):
        (tmp_path / "weeks" / week).mkdir(parents=True)
    values = window_values({"prepare.path": "weeks/{date:%G-W%V}",
                            "candidates.systems.prod.path": "weeks/*",
                            "prepare.start": "{date:%Y-%m-01}"}, MONDAY, tmp_path)
    assert values == {"prepare.path": "weeks/2026-W49", "candidates.systems.prod.path":
                      "weeks/2026-W49", "prepare.start": "2026-11-01"}


@pytest.mark.parametrize(("pattern", "message"), [
    ("weeks/{date:%G-W%V}-*", "no path matches 'weeks/2026-W49-*' for the run of 2026-11-30"),
    ("weeks/{week}", "cannot format 'weeks/{week}' with the run's date"),
])
def test_a_window_that_names_nothing_fails_naming_the_key(tmp_path, pattern, message):
    with pytest.raises(InputError, match="schedule.window") as raised:
        window_values({"prepare.path": pattern}, MONDAY, tmp_path)
    assert message in str(raised.value) and "prepare.path" in str(raised.value)


def test_the_failed_state_message_lists_every_failed_rule():
    decision = {"candidate": "hybrid", "baseline": "bm25", "rules": [
        {"name": "safety hybrid", "passed": False, "reason": "3 violation(s) > max 0"},
        {"name": "judged Judged@10", "passed": True, "reason": "ok"},
        {"name": "latency p95", "passed": False, "reason": "p95 80 ms > 50 ms"}]}
    assert gate_message(decision) == ("release gate FAIL: hybrid vs bm25: safety hybrid: 3 "
                                      "violation(s) > max 0; latency p95: p95 80 ms > 50 ms")


@pytest.mark.parametrize(("args", "api", "message"), [
    (["--interval", "5"], None, "releval serve needs a Prefect server"),
    (["--interval", "5", "--cron", "0 3 * * 1"], "http://127.0.0.1:9/api",
     "exactly one of --cron or --interval"),
    ([], "http://127.0.0.1:9/api", "exactly one of --cron or --interval"),
    (["--cron", "every monday"], "http://127.0.0.1:9/api", "not a valid cron schedule"),
    (["--interval", "0"], "http://127.0.0.1:9/api", "--interval must be a positive number"),
])
def test_serve_refuses_in_one_line(monkeypatch, capsys, args, api, message):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows import schedule

    monkeypatch.setattr(sys, "argv", ["schedule", "--params", str(ROOT / "params.yaml"), *args])
    with temporary_settings(updates={PREFECT_API_URL: api}), pytest.raises(SystemExit) as end:
        schedule.main()
    assert end.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_window_values_are_written_as_strings_and_the_comments_stay(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text((ROOT / "params.yaml").read_text())
    write_window(str(params), {"prepare.start": "2026-11-30", "prepare.path": "weeks/#1: a"})
    p = load_params(params)
    assert p.prepare.start == "2026-11-30" and p.prepare.path == "weeks/#1: a"
    assert "# Every knob of the pipeline" in params.read_text()


def test_a_scheduled_run_refused_by_a_manual_run_writes_nothing(tmp_path, monkeypatch):
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    before = (tmp_path / "params.yaml").read_text()
    monkeypatch.chdir(tmp_path)
    with prefect_test_harness(HARNESS_S), one_run(tmp_path):
        state = scheduled("params.yaml", {"prepare.path": "weeks/2026-W49"},
                          return_state=True)
    assert state.is_failed() and "another releval run is using this project" in state.message
    assert (tmp_path / "params.yaml").read_text() == before
