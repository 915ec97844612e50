"""Faults around a run: a second run at once, DVC locks of killed processes (gone, zombies,
reused ids, live holders), the run a killed releval left running, SIGTERM and SIGKILL."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from releval.project.runner import clear_stale_dvc_locks, exclusive, group_alive, one_run, running
from tests.flows.test_pipeline import make_project

ROOT = Path(__file__).resolve().parents[2]


def releval(root: Path, *args: str, **kwargs) -> subprocess.Popen:
    """The command in ``root``, running the code copied there, else this checkout's."""
    code = root if (root / "releval").is_dir() else ROOT
    return subprocess.Popen([sys.executable, "-m", "releval.cli", *args], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(code)}, **kwargs)


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


def _rwlock(root: Path, locks: dict) -> Path:
    lock = root / ".dvc/tmp/rwlock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(json.dumps(locks))
    return lock


def _holder(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    """A live process and the command line DVC would record for it (sys.argv joined)."""
    script = tmp_path / "holder.py"
    script.write_text("import time\ntime.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, str(script), "--params", "params.yaml"])
    cmdline = Path(f"/proc/{proc.pid}/cmdline")  # until it runs the script (after its exec)
    _until(lambda: str(script).encode() in cmdline.read_bytes())
    return proc, f"{script} --params params.yaml"


def _until(check, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_dvc_locks_of_ended_processes_are_cleared(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = _rwlock(tmp_path, {
        "read": {"data/raw": [{"pid": dead.pid, "cmd": "dvc repro"}]},
        "write": {"data/split": {"pid": dead.pid, "cmd": "dvc repro"}}})
    assert clear_stale_dvc_locks(tmp_path) == [f"pid {dead.pid}"]
    assert json.loads(lock.read_text()) == {"read": {}, "write": {}}
    assert clear_stale_dvc_locks(tmp_path) == []
    lock.write_text("")  # a process killed while DVC wrote it
    assert "unreadable .dvc/tmp/rwlock" in clear_stale_dvc_locks(tmp_path)[0]
    assert json.loads(lock.read_text()) == {"read": {}, "write": {}}


def test_a_lock_held_by_a_zombie_is_cleared(tmp_path):
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])  # exits, never reaped here
    stat = Path(f"/proc/{zombie.pid}/stat")
    _until(lambda: stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")
    try:
        _rwlock(tmp_path, {"write": {"data/input/runs": {
            "pid": zombie.pid, "cmd": f"{ROOT}/flows/pipeline.py --params params.yaml"}}})
        assert clear_stale_dvc_locks(tmp_path) == [f"pid {zombie.pid}"]
    finally:
        zombie.wait()


def test_a_lock_whose_pid_was_reused_is_cleared(tmp_path):
    proc, cmd = _holder(tmp_path)
    try:
        other = _rwlock(tmp_path, {"write": {"data/input/runs": {
            "pid": proc.pid, "cmd": f"{ROOT}/flows/pipeline.py --params params.yaml"}}})
        assert clear_stale_dvc_locks(tmp_path) == [f"pid {proc.pid}"]  # another command
        _rwlock(tmp_path, {"write": {"data/input/runs": {"pid": proc.pid, "cmd": cmd}}})
        os.utime(other, (time.time() - 60, time.time() - 60))  # taken before it started
        assert clear_stale_dvc_locks(tmp_path) == [f"pid {proc.pid}"]
    finally:
        proc.kill()
        proc.wait()


def test_a_lock_of_a_live_holder_refuses_the_run_in_one_line(tmp_path):
    for item in ("dvc.yaml", "params.yaml"):
        shutil.copy(ROOT / item, tmp_path)
    (tmp_path / "flows").mkdir()
    proc, cmd = _holder(tmp_path)
    try:
        lock = _rwlock(tmp_path, {"write": {"data/input/runs": {"pid": proc.pid, "cmd": cmd}}})
        run = releval(tmp_path, "run")
        out, errors = run.communicate(timeout=120)
        assert run.returncode == 2, out + errors
        lines = [line for line in errors.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in errors, errors
        assert lines[0] == (f"error: .dvc/tmp/rwlock: 'data/input/runs' is locked by a "
                            f"running process (pid {proc.pid}: {cmd}); wait for it or stop "
                            "it"), lines[0]
        assert json.loads(lock.read_text())["write"]["data/input/runs"]["pid"] == proc.pid
    finally:
        proc.kill()
        proc.wait()


def test_the_run_a_killed_releval_left_running_is_stopped_by_the_next(tmp_path):
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                            start_new_session=True)
    try:
        lock = tmp_path / ".dvc/tmp/releval.lock"
        lock.parent.mkdir(parents=True)
        lock.write_text(f"{os.getpid()} {left.pid}")  # noted, and never released
        with exclusive(tmp_path) as cleared:
            assert cleared == [f"the run a killed releval left running (process group "
                               f"{left.pid})"]
            assert left.wait(timeout=30) == -signal.SIGTERM
        lock.write_text(f"{os.getpid()} {left.pid}")
        with exclusive(tmp_path) as cleared:  # that group is gone
            assert cleared == []
    finally:
        left.kill()
        left.wait()


def test_a_noted_group_whose_id_was_reused_is_left_alone(tmp_path):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                             start_new_session=True)
    try:
        lock = tmp_path / ".dvc/tmp/releval.lock"
        lock.parent.mkdir(parents=True)
        lock.write_text(f"{os.getpid()} {other.pid}")
        os.utime(lock, (time.time() - 60, time.time() - 60))  # noted before it started
        with exclusive(tmp_path) as cleared:
            assert cleared == [] and other.poll() is None
    finally:
        other.kill()
        other.wait()


def _stage_pid(name: str, root: Path) -> int | None:
    """A process in ``root`` running ``python -m stages <name>`` for the dense system."""
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().decode().split("\0")
            here = (entry / "cwd").resolve() == root.resolve()
        except (OSError, UnicodeDecodeError):
            continue
        if here and "stages" in words and name in words and "dense" in words:
            return int(entry.name)
    return None


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_the_group_mid_encoding_and_a_rerun_at_once_completes(tmp_path, signum):
    """SIGTERM or SIGKILL to releval's process group while the dense system encodes, then
    ``releval run`` at once: SIGTERM stops the run whole; after SIGKILL (no handler runs,
    the flow lives on in its own session) the rerun stops what was left and clears its
    locks."""
    root = make_project(tmp_path / "project")
    env = {**os.environ, "PYTHONPATH": str(root),
           "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "300"}  # a loaded machine
    log = tmp_path / "first.log"
    with log.open("w") as out:  # a file: the flow left running keeps it open
        run = subprocess.Popen([sys.executable, "-m", "releval.cli", "run"], cwd=root,
                               env=env, stdout=out, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.monotonic() + 600
    while (stage := _stage_pid("candidates", root)) is None:
        assert run.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.2)
    time.sleep(1)
    os.killpg(run.pid, signum)
    code = 128 + signum if signum == signal.SIGTERM else -signum  # SIGKILL: no handler ran
    assert run.wait(timeout=120) == code, log.read_text()[-2000:]
    if signum == signal.SIGTERM:
        assert log.read_text().strip().splitlines()[-1] == "error: stopped by signal SIGTERM"
        assert not group_alive(run.pid)  # no child survived: flow, Prefect server, stage
    again = subprocess.run([sys.executable, "-m", "releval.cli", "run"], cwd=root, env=env,
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (root / "reports/receipt.json").exists()
    assert not running(stage)  # the interrupted stage was stopped, not left encoding
    if signum == signal.SIGKILL:
        assert "cleared what ended runs left: the run a killed releval left running" in \
            again.stderr
