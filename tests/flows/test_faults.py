"""Faults around a run: a second run at once, DVC locks of killed processes, SIGTERM."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from releval.project.runner import clear_stale_dvc_locks, group_alive, one_run
from tests.flows.test_pipeline import make_project

ROOT = Path(__file__).resolve().parents[2]


def releval(root: Path, *args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "releval.cli", *args], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(root)}, **kwargs)


def test_a_second_run_at_once_is_refused_naming_the_first(tmp_path):
    for item in ("dvc.yaml", "params.yaml"):
        shutil.copy(ROOT / item, tmp_path)
    (tmp_path / "flows").mkdir()
    with one_run(tmp_path):
        second = releval(tmp_path, "run")
        out, errors = second.communicate(timeout=120)
    assert second.returncode == 2, out + errors
    lines = [line for line in errors.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in errors
    assert f"another releval run is using this project (pid {os.getpid()})" in lines[0]


def test_dvc_locks_of_ended_processes_are_cleared_and_live_ones_kept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = tmp_path / ".dvc/tmp/rwlock"
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({
        "read": {"data/raw": [{"pid": dead.pid, "cmd": "dvc repro"},
                              {"pid": os.getpid(), "cmd": "this test"}]},
        "write": {"data/split": {"pid": dead.pid, "cmd": "dvc repro"}}}))
    assert clear_stale_dvc_locks(tmp_path) == [f"pid {dead.pid}"]
    assert json.loads(lock.read_text()) == {
        "read": {"data/raw": [{"pid": os.getpid(), "cmd": "this test"}]}, "write": {}}
    assert clear_stale_dvc_locks(tmp_path) == []
    lock.write_text("")  # a process killed while DVC wrote it
    assert "unreadable .dvc/tmp/rwlock" in clear_stale_dvc_locks(tmp_path)[0]
    assert json.loads(lock.read_text()) == {"read": {}, "write": {}}


@pytest.mark.slow
def test_sigterm_stops_the_whole_run_and_a_rerun_completes(tmp_path):
    root = make_project(tmp_path)
    run = releval(root, "run", start_new_session=True)
    deadline = time.monotonic() + 300
    while not (root / "data/raw/documents.parquet").exists():  # a stage is under way
        assert run.poll() is None and time.monotonic() < deadline
        time.sleep(0.5)
    time.sleep(2)
    run.send_signal(signal.SIGTERM)  # to the releval process alone
    out, errors = run.communicate(timeout=120)
    assert run.returncode == 128 + signal.SIGTERM, errors[-2000:]
    assert errors.strip().splitlines()[-1] == "error: stopped by signal SIGTERM"
    time.sleep(1)
    assert not group_alive(run.pid)  # no child survived: flow, Prefect server, stage
    again = releval(root, "run")
    out, errors = again.communicate(timeout=900)
    assert again.returncode == 0, errors[-2000:]
    assert (root / "reports/receipt.json").exists()
