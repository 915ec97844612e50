"""Running the pipeline as a child process of the command line, safely.

- One run at a time per project: an exclusive ``flock`` on ``.dvc/tmp/releval.lock``
  (holding the owner's pid); a second run is refused in one line naming that pid.
- DVC's read/write lock (``.dvc/tmp/rwlock``) may keep entries of a process that was
  killed (SIGKILL), or be left empty by one killed while writing it; entries whose process
  is gone are removed, and an unreadable file reset, before the run.
- The child runs in its own session; SIGTERM or SIGINT (Ctrl-C) to the command stops the
  child's whole process group (the flow, Prefect's server, the running stage), waits for it,
  and ends with one line ``stopped by signal SIGTERM`` and exit status 128 + the signal.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from releval.errors import InputError

LOCK = Path(".dvc/tmp/releval.lock")
RWLOCK = Path(".dvc/tmp/rwlock")
GRACE_S = 10  # after SIGTERM, the child's group gets this long before SIGKILL


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_stale_dvc_locks(root: Path = Path(".")) -> list[str]:
    """Drop rwlock entries of processes that no longer run, and reset a lock file that is
    not JSON (a process killed while DVC wrote it: DVC refuses every command until then);
    call it holding the run lock. Returns what was cleared, e.g. ``["pid 4242"]``."""
    path = root / RWLOCK
    try:
        locks = json.loads(path.read_text())
    except OSError:
        return []
    except json.JSONDecodeError:
        path.write_text(json.dumps({"read": {}, "write": {}}))
        return [f"an unreadable {RWLOCK} (a process was killed while writing it)"]
    gone: set[int] = set()

    def keep(entry: dict) -> bool:
        alive = _alive(int(entry.get("pid", 0)))
        gone.update(() if alive else (int(entry.get("pid", 0)),))
        return alive

    locks["read"] = {p: kept for p, entries in locks.get("read", {}).items()
                     if (kept := [e for e in entries if keep(e)])}
    locks["write"] = {p: e for p, e in locks.get("write", {}).items() if keep(e)}
    if gone:
        path.write_text(json.dumps(locks))
    return [f"pid {pid}" for pid in sorted(gone)]


@contextlib.contextmanager
def one_run(root: Path = Path(".")) -> Iterator[None]:
    """Hold the project's run lock; InputError when another run holds it."""
    path = root / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "?"
            raise InputError(f"another releval run is using this project (pid {owner}); "
                             "wait for it or stop it", str(root.resolve())) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)


@contextlib.contextmanager
def exclusive(root: Path = Path(".")) -> Iterator[list[str]]:
    """The run lock held (``one_run``) and DVC's stale locks cleared
    (``clear_stale_dvc_locks``): yields what was cleared."""
    with one_run(root):
        yield clear_stale_dvc_locks(root)


class Stopped(Exception):
    """The run was stopped by a signal (``signum``)."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by signal {signal.Signals(signum).name}")


def run_child(cmd: list[str], **kwargs) -> int:
    """``cmd`` in its own session; a SIGTERM/SIGINT here stops its whole process group
    (SIGTERM, then SIGKILL after ``GRACE_S``) and raises Stopped. Returns the child's exit
    status."""
    child = subprocess.Popen(cmd, start_new_session=True, **kwargs)
    received: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _: received.append(signum))
                for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            try:
                code = child.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                if received:
                    _stop_group(child)
                    break
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if received:
        _stop_group(child)  # what of the group outlived its leader
        raise Stopped(received[0])
    return code


def _stop_group(child: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and group_alive(child.pid):
        child.poll()
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def group_alive(pgid: int) -> bool:
    """Whether any process of the group ``pgid`` still runs."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
