"""Running the pipeline as a child process of the command line, safely.

- One run at a time per project: an exclusive ``flock`` on ``.dvc/tmp/releval.lock``
  (holding the owner's pid and its run's process group); a second run is refused in one
  line naming that pid. A run whose releval was killed (SIGKILL: no handler ran) outlives
  it in its own session; the next run stops that group before it starts.
- DVC's read/write lock (``.dvc/tmp/rwlock``: per path the pid and command line of the
  holder) may keep entries of a process that was killed, or be left empty by one killed
  while writing it. An entry's holder counts as gone when no such process runs, when it is
  a zombie (killed but not reaped: a container whose init does not reap), or when the pid
  now belongs to another process (started after the lock file was last written, or
  running another command line); such entries are removed and an unreadable file reset
  before the run. A live holder refuses the run in one line.
- The child runs in its own session; SIGTERM or SIGINT (Ctrl-C) to the command stops the
  child's whole process group (the flow, Prefect's server, the running stage), waits for it,
  and ends with one line ``stopped by signal SIGTERM`` and exit status 128 + the signal.

Process states, start times and command lines are read from ``/proc`` where there is one;
elsewhere a process that exists counts as running.
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
CLOCK_S = 1.0  # how much later than a lock's time a process may seem to start (btime is whole s)
PROC = Path("/proc")


def _stat(pid: int) -> tuple[str, int, float] | None:
    """(state, process group, start time in seconds since the epoch) of ``pid`` from
    /proc; None when it cannot be read (no such process, no /proc)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[2]), _boot() + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def _boot() -> float:
    for line in (PROC / "stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise OSError("no btime in /proc/stat")


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return raw.decode("utf-8", "replace").split("\0")[:-1]


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that runs: it exists and is no zombie."""
    if pid <= 0 or not _exists(pid):
        return False
    stat = _stat(pid)
    return stat is None or stat[0] != "Z"


def _runs_command(words: list[str], cmd: str) -> bool:
    """Whether a command line (``words``) can be the one DVC recorded as ``cmd`` (``"
    ".join(sys.argv)``, which drops the interpreter and names a ``-m`` module by its file):
    it ends with ``cmd``'s arguments and names its program (the file, or the module)."""
    program, _, args = cmd.partition(" ")
    tail = args.split()
    if tail and words[-len(tail):] != tail:
        return False
    modules = [w.replace(".", "/") for w in words[:len(words) - len(tail)]]
    return program in words or any(program.endswith((f"/{m}.py", f"/{m}/__main__.py"))
                                   for m in modules)


def holds(pid: int, cmd: str | None, since: float) -> bool:
    """Whether ``pid`` can still hold a lock that a process running ``cmd`` had taken by the
    time ``since`` (seconds since the epoch): it runs, started no later than that, and runs
    that command line."""
    if not running(pid):
        return False
    stat, words = _stat(pid), _cmdline(pid)
    if stat is not None and stat[2] > since + CLOCK_S:
        return False
    return not words or cmd is None or _runs_command(words, cmd)


def clear_stale_dvc_locks(root: Path = Path(".")) -> list[str]:
    """Drop rwlock entries whose holder is gone (``holds``), and reset a lock file that is
    not JSON (a process killed while DVC wrote it: DVC refuses every command until then);
    call it holding the run lock. Returns what was cleared, e.g. ``["pid 4242"]``;
    InputError naming the path and the holder when a live process holds a lock."""
    path = root / RWLOCK
    try:
        locks = json.loads(path.read_text())
        since = path.stat().st_mtime
    except OSError:
        return []
    except json.JSONDecodeError:
        path.write_text(json.dumps({"read": {}, "write": {}}))
        return [f"an unreadable {RWLOCK} (a process was killed while writing it)"]
    gone: set[int] = set()
    live: list[tuple[str, dict]] = []

    def keep(lock: str, entry: dict) -> bool:
        pid = int(entry.get("pid", 0))
        if holds(pid, entry.get("cmd"), since):
            live.append((lock, entry))
            return True
        gone.add(pid)
        return False

    locks["read"] = {p: kept for p, entries in locks.get("read", {}).items()
                     if (kept := [e for e in entries if keep(p, e)])}
    locks["write"] = {p: e for p, e in locks.get("write", {}).items() if keep(p, e)}
    if gone:
        path.write_text(json.dumps(locks))
    if live:
        lock, entry = live[0]
        raise InputError(f"'{lock}' is locked by a running process (pid {entry.get('pid')}: "
                         f"{entry.get('cmd')}); wait for it or stop it", str(RWLOCK))
    return [f"pid {pid}" for pid in sorted(gone)]


def _group(pgid: int, since: float | None = None) -> list[int]:
    """The running processes of the process group ``pgid``; [] as well when its leader runs
    and started after ``since`` (the id was reused: a group whose leader has gone keeps its
    id while any member runs)."""
    members = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None \
                and stat[1] == pgid and stat[0] != "Z":
            members[int(entry.name)] = stat[2]
    if since is not None and members.get(pgid, since) > since + CLOCK_S:
        return []
    return sorted(members)


def stop_left_run(pgid: int | None, since: float) -> list[str]:
    """Stop the run a killed releval left running: the process group ``pgid`` noted in the
    run lock at ``since`` (``started``), SIGTERM, then SIGKILL after ``GRACE_S``. Returns
    what was stopped."""
    if not pgid or not PROC.is_dir() or not _group(pgid, since):
        return []
    for signum in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signum)
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline and _group(pgid):
            time.sleep(0.1)
    return [f"the run a killed releval left running (process group {pgid})"]


@contextlib.contextmanager
def one_run(root: Path = Path(".")) -> Iterator[tuple[int | None, float]]:
    """Hold the project's run lock; InputError when another run holds it. Yields what the
    previous holder noted (``started``): its run's process group (None: none) and when."""
    path = root / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().split()[:1] or ["?"]
            raise InputError(f"another releval run is using this project (pid {owner[0]}); "
                             "wait for it or stop it", str(root.resolve())) from None
        handle.seek(0)
        noted = handle.read().split()[1:2]
        left = (int(noted[0]) if noted and noted[0].isdigit() else None,
                os.fstat(handle.fileno()).st_mtime)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield left
        finally:
            handle.truncate(0)


def started(pgid: int, root: Path = Path(".")) -> None:
    """Note in the run lock (held by this process) the process group of the run it started,
    for the next run to stop should this process be killed."""
    with (root / LOCK).open("a") as handle:
        handle.write(f" {pgid}")


@contextlib.contextmanager
def exclusive(root: Path = Path(".")) -> Iterator[list[str]]:
    """The run lock held (``one_run``), the run a killed holder left running stopped
    (``stop_left_run``) and DVC's stale locks cleared (``clear_stale_dvc_locks``): yields
    what was stopped and cleared."""
    with one_run(root) as left:
        yield stop_left_run(*left) + clear_stale_dvc_locks(root)


class Stopped(Exception):
    """The run was stopped by a signal (``signum``)."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"stopped by signal {signal.Signals(signum).name}")


def run_child(cmd: list[str], root: Path = Path("."), **kwargs) -> int:
    """``cmd`` in its own session, its process group noted in ``root``'s run lock
    (``started``; call it holding the lock); a SIGTERM/SIGINT here stops its whole process
    group (SIGTERM, then SIGKILL after ``GRACE_S``) and raises Stopped. Returns the child's
    exit status."""
    child = subprocess.Popen(cmd, start_new_session=True, **kwargs)
    started(child.pid, root)
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
    """Whether any process of the group ``pgid`` still runs (zombies do not)."""
    if PROC.is_dir():
        return bool(_group(pgid))
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
