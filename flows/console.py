"""The pipeline's quiet console: one line per stage (ran / skipped / failed, with its time),
and everything else (DVC's hints, Prefect's and GX's logs, the stages' own output) in
reports/run.log.

``quiet(log)`` sends the process's stdout and stderr (file descriptors 1 and 2, so child
processes too) through a pipe into ``log``, and ``verbose`` copies them to the terminal
as well. Stages report long work through ``releval.progress`` into a progress file
(``RELEVAL_PROGRESS``); a terminal shows it as a bar under the running stage.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from releval import artifacts
from releval.cli.output import console
from releval.progress import ENV as PROGRESS_ENV

LOG = artifacts.path("reports.log")
MARKS = {"ran": ("✓", "green"), "skipped": ("·", "dim"), "kept": ("·", "dim"),
         "failed": ("✗", "red")}
OFFLINE = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DVC_NO_ANALYTICS": "1",
           "DO_NOT_TRACK": "1"}  # no telemetry attempts (and no red errors) offline


def offline_env() -> None:
    """Turn Prefect's and DVC's usage analytics off for this process and its children."""
    for key, value in OFFLINE.items():
        os.environ.setdefault(key, value)


@dataclass
class Board:
    """The stages' lines: name -> (status, seconds); the running stage and its progress."""

    terminal: Console
    lines: dict[str, tuple[str, float]] = field(default_factory=dict)
    running: str | None = None
    started: float = 0.0
    progress: Path | None = None
    _read: int = 0
    _last: dict | None = None

    def start(self, stage: str) -> None:
        self.running, self.started, self._last = stage, time.monotonic(), None
        if self.progress is not None:
            self.progress.write_text("")
            self._read = 0

    def finish(self, stage: str, status: str) -> None:
        seconds = time.monotonic() - self.started
        self.lines[stage] = (status, seconds)
        self.running = None
        if not self.terminal.is_terminal:  # a log or a pipe: one plain line per stage
            self.terminal.print(_line(stage, status, seconds).plain, highlight=False)

    def _event(self) -> dict | None:
        """The newest progress event of the running stage (tail of the progress file)."""
        if self.progress is None or not self.progress.exists():
            return self._last
        with self.progress.open("rb") as f:
            f.seek(self._read)
            chunk = f.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._read += len(complete)
        for raw in complete.decode("utf-8", "replace").splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                self._last = json.loads(raw)
        return self._last

    def __rich__(self):
        table = Table.grid(padding=(0, 1))
        for stage, (status, seconds) in self.lines.items():
            table.add_row(_line(stage, status, seconds))
        rows = [table]
        if self.running:
            spin = Spinner("dots", text=Text(
                f"{self.running}  {time.monotonic() - self.started:5.1f} s"))
            rows.append(spin)
            event = self._event()
            if event and event.get("total"):
                bar = Table.grid(padding=(0, 1))
                bar.add_row(Text(f"    {event['description']}"),
                            ProgressBar(total=event["total"], completed=event["done"],
                                        width=30),
                            Text(f"{event['done']}/{event['total']}"))
                rows.append(bar)
        return Group(*rows)


def _line(stage: str, status: str, seconds: float) -> Text:
    kind = status.split(":")[0]
    mark, style = MARKS.get(kind, ("?", "yellow"))
    text = Text(f"{mark} ", style=style)
    text.append(f"{stage:<12} {kind:<8}")
    if kind != "kept":
        text.append(f" {seconds:6.1f} s", style="dim")
    return text


def unwritable(log: Path, exc: OSError) -> str:
    """The one line a run ends with when its log cannot be written: the folder, the cause."""
    folder = log.parent
    cause = ("it is a file, not a folder" if folder.exists() and not folder.is_dir() else
             exc.strerror or type(exc).__name__)
    return (f"error: {folder}: the run's log {log.name} cannot be written there ({cause}); "
            "make the folder writable (or free the disk) and run again")


def _sink(log: Path):
    """``log`` opened for appending; a folder that cannot hold it ends the run in one line
    (``unwritable``), exit status 2, before anything ran."""
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        return open(log, "ab")  # noqa: SIM115 (closed by quiet, after the pump)
    except OSError as exc:
        print(unwritable(log, exc), file=sys.stderr, flush=True)
        raise SystemExit(2) from None


@contextlib.contextmanager
def quiet(log: Path = LOG, verbose: bool = False) -> Iterator[Board]:
    """Everything written to fds 1 and 2 goes to ``log`` (and, ``verbose``, to the terminal
    too); the yielded ``Board`` draws the stage lines on the terminal. A log that cannot be
    written (a read-only folder, a file where the folder belongs, a full disk) ends the run
    in one line naming the folder and the cause, exit status 2 (``unwritable``): at once
    when it cannot be opened, else when the flow is done (the pipe is drained meanwhile, so
    the stages never block on it; what they wrote is kept)."""
    sink = _sink(log)
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    terminal_file = os.fdopen(os.dup(saved[1]), "w", buffering=1, encoding="utf-8")
    terminal = console(file=terminal_file)
    read, write = os.pipe()
    failed: list[OSError] = []

    def pump() -> None:
        while chunk := os.read(read, 65536):
            if not failed:
                try:
                    sink.write(chunk)
                    sink.flush()
                except OSError as exc:  # the disk filled, the file went: keep draining
                    failed.append(exc)
            if verbose:
                os.write(saved[2], chunk)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    for fd in (1, 2):
        os.dup2(write, fd)
    os.close(write)
    progress_dir = tempfile.mkdtemp(prefix="releval-progress-")
    board = Board(terminal, progress=Path(progress_dir) / "events.jsonl")
    os.environ[PROGRESS_ENV] = str(board.progress)
    live = Live(board, console=terminal, refresh_per_second=8, transient=False) \
        if terminal.is_terminal and not verbose else contextlib.nullcontext()
    try:
        with live:
            yield board
    finally:
        os.environ.pop(PROGRESS_ENV, None)
        sys.stdout.flush()
        sys.stderr.flush()
        for fd in (1, 2):
            os.dup2(saved[fd], fd)
            os.close(saved[fd])
        thread.join(timeout=2)  # a server child may still hold the pipe
        os.close(read)
        try:
            sink.close()
        except OSError as exc:  # its last buffered bytes did not fit
            failed.append(exc)
        terminal_file.close()
        with contextlib.suppress(OSError):
            board.progress.unlink(missing_ok=True)
            os.rmdir(progress_dir)
        if failed:
            logging.getLogger("prefect").setLevel(logging.WARNING)  # its exit notes: none
            print(unwritable(log, failed[0]), file=sys.stderr, flush=True)
            raise SystemExit(2)
