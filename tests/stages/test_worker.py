"""The stages' warm worker (stages/worker.py): a stage handed to it ends as the command run
alone does (its line, its status, its files), on the caller's own streams; with no worker
answering, the command runs the stage itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stages.worker import ENV

ROOT = Path(__file__).resolve().parents[2]
HAND_OVER = ("import sys; from stages.worker import hand_over; "
             "print('status', hand_over(sys.argv[1], sys.argv[2:]))")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return {**env, **extra}


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    folder = tmp_path_factory.mktemp("worker")
    address = str(folder / "w.sock")
    proc = subprocess.Popen([sys.executable, "-m", "stages.worker", address,
                             str(os.getpid())], env=_env(),
                            cwd=folder, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(address):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the worker never listened"
        time.sleep(0.1)
    yield address
    proc.terminate()
    proc.wait()


def _stage(cwd: Path, *argv: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stages", *argv], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=300)


def test_a_stage_through_the_worker_ends_as_it_does_alone(worker, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "params.yaml").write_text("prepare:\n  source: demo\n")
    alone = _stage(project, "gate", "--params", "params.yaml")
    handed = _stage(project, "gate", "--params", "params.yaml", **{ENV: worker})
    assert alone.returncode == handed.returncode == 2
    assert handed.stderr == alone.stderr
    assert handed.stderr.startswith("error: ") and handed.stderr.count("\n") == 1
    assert "Traceback" not in handed.stderr

    # the worker ran it: hand_over says the status it got back
    asked = subprocess.run([sys.executable, "-c", HAND_OVER, worker, "gate", "--params",
                            "params.yaml"], cwd=project, env=_env(), capture_output=True,
                           text=True, timeout=300)
    assert asked.stdout.strip() == "status 2"
    assert asked.stderr == alone.stderr


def test_the_worker_runs_in_the_callers_directory_and_environment(worker, tmp_path):
    project = tmp_path / "elsewhere"
    project.mkdir()
    (project / "mine.yaml").write_text("prepare:\n  source: demo\n")
    handed = _stage(project, "gate", "--params", "missing.yaml", **{ENV: worker})
    alone = _stage(project, "gate", "--params", "missing.yaml")
    assert handed.returncode == alone.returncode != 0
    assert handed.stderr == alone.stderr and "missing.yaml" in handed.stderr


def test_no_worker_answering_the_command_runs_the_stage_itself(tmp_path):
    gone = str(tmp_path / "nobody.sock")
    asked = subprocess.run([sys.executable, "-c", HAND_OVER, gone, "gate"], cwd=tmp_path,
                           env=_env(), capture_output=True, text=True, timeout=60)
    assert asked.stdout.strip() == "status None"
    alone = _stage(tmp_path, "gate", "--params", "params.yaml")
    handed = _stage(tmp_path, "gate", "--params", "params.yaml", **{ENV: gone})
    assert handed.returncode == alone.returncode and handed.stderr == alone.stderr


def test_a_worker_ending_before_it_forks_leaves_the_stage_to_the_command(tmp_path):
    """A worker that took the request and ended while still importing (it refuses to serve
    when an import started a thread): nothing ran there, so the command runs the stage."""
    import socket
    import threading

    address = str(tmp_path / "refusing.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(address)
        server.listen(1)

        def refuse():
            conn, _ = server.accept()
            conn.recv(1 << 16)
            conn.close()

        taker = threading.Thread(target=refuse)
        taker.start()
        asked = subprocess.run([sys.executable, "-c", HAND_OVER, address, "gate"],
                               cwd=tmp_path, env=_env(), capture_output=True, text=True,
                               timeout=60)
        taker.join()
    assert asked.stdout.strip() == "status None", asked.stderr


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (an exited process nobody has reaped yet does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_the_worker_ends_when_whoever_started_it_has_ended(tmp_path):
    address = tmp_path / "orphan.sock"
    starter = ("import os, subprocess, sys; p = subprocess.Popen([sys.executable, '-m', "
               f"'stages.worker', {str(address)!r}, str(os.getpid())], "
               "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    started = subprocess.run([sys.executable, "-c", starter], env=_env(), cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    pid = int(started.stdout.split()[0])  # its starter has exited: the worker is orphaned
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not _running(pid):
            return
        time.sleep(0.5)
    os.kill(pid, 9)
    raise AssertionError("the orphaned worker kept running")
