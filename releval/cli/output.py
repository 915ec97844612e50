"""What every command shares: the consoles (``console``: a terminal's width, or unwrapped
lines in a pipe or a CI log), one-line errors (exit status 2) and ``--json``, the one
spelling of machine output on ``run``, ``gate`` and ``history``."""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

PIPED_WIDTH = 1000  # a pipe or a log without $COLUMNS: lines as long as they are, unwrapped


def console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """A rich console on stdout (``stderr``: on stderr; or on ``file``): a terminal's own
    width; anywhere else (a pipe, a file, a CI log) ``$COLUMNS`` when set, else
    ``PIPED_WIDTH``, so tables and long lines are not wrapped at rich's 80 columns."""
    out = Console(stderr=stderr, file=file)
    if not out.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        out.width = int(columns) if columns.isdigit() else PIPED_WIDTH
    return out


err = console(stderr=True)

AsJson = Annotated[bool, typer.Option("--json", help="print one JSON document on stdout "
                                      "instead of the tables")]


def emit(doc) -> None:
    """``doc`` as one JSON document on stdout."""
    sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with status 2."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)
