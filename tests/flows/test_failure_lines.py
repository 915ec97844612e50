"""How a failed run ends on the console: one ``error:`` line per failure, then where the
whole log is; exit 2 when a stage refused its input, 1 otherwise. The flow is replaced by
one that fails as a stage does (tests/flows/test_pipeline.py runs the real one)."""

import contextlib
import os
import sys
from types import SimpleNamespace

import pytest

from flows import pipeline

DVC_ECHO = ("failed: stage inputs: failed to reproduce 'inputs': failed to run: python -m "
            "stages.inputs, exited with 2")


def failing_run(stage_line: str | None, message: str):
    """An ``on_executor`` whose flow writes what a failing stage and DVC write (to fds 1 and
    2, which the quiet console sends to the log) and ends Failed with ``message``."""
    def run(*_, **__):
        if stage_line:
            os.write(2, f"{stage_line}\n".encode())
        os.write(2, f"ERROR: {message.removeprefix('failed: ')}\n".encode())
        return SimpleNamespace(is_completed=lambda: False, message=message)

    @contextlib.contextmanager
    def on_executor(_params):
        yield run, {}
    return on_executor


def ended(monkeypatch, capfd, tmp_path, on_executor) -> tuple[int, list[str]]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["flows.pipeline"])
    monkeypatch.setattr(pipeline, "on_executor", on_executor)
    with pytest.raises(SystemExit) as stop:
        pipeline.main()
    return stop.value.code, capfd.readouterr().err.splitlines()


def test_a_stage_that_refused_its_input_prints_its_one_line_and_exits_2(tmp_path,
                                                                         monkeypatch, capfd):
    stage_line = "error: ../corpus/queries.jsonl: file not found"
    code, lines = ended(monkeypatch, capfd, tmp_path, failing_run(stage_line, DVC_ECHO))
    assert code == 2
    assert lines == [stage_line, "(the whole log: reports/run.log)"]
    assert "failed to reproduce" in (tmp_path / "reports/run.log").read_text()  # kept there


def test_any_other_failure_prints_the_flows_message_on_one_line_and_exits_1(tmp_path,
                                                                           monkeypatch, capfd):
    message = "validation failed after stage prepare (data/raw/documents.parquet): doc_id"
    code, lines = ended(monkeypatch, capfd, tmp_path, failing_run(None, message))
    assert code == 1
    assert lines == [f"error: {message}", "(the whole log: reports/run.log)"]
