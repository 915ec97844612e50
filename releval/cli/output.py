"""What every command shares: the consoles (``console``: a terminal's width, or unwrapped
lines in a pipe or a CI log), one-line errors (exit status 2), usage errors in one line
(``usage_line``) and ``--json``, the one spelling of machine output on ``run``, ``gate`` and
``history``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import IO, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer._click import exceptions as usage  # typer's own copy of click's exceptions

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


def _named(exc: usage.BadParameter) -> str:
    """The flag (or argument) a bad value was given to, as the user writes it."""
    hint = exc.param_hint if exc.param_hint is not None else \
        exc.param.get_error_hint() if exc.param is not None else "value"
    return (hint if isinstance(hint, str) else " / ".join(hint)).replace("'", "")


# a usage error's kind -> its text; the closest kind in the error's class hierarchy wins
USAGE: dict[type, Callable[[usage.UsageError], str]] = {
    usage.NoSuchOption: lambda exc: f"{exc.option_name}: no such option" + (
        f"; did you mean {' or '.join(sorted(exc.possibilities))}?" if exc.possibilities
        else ""),
    usage.MissingParameter: lambda exc: exc.format_message().rstrip("."),
    usage.BadParameter: lambda exc: f"{_named(exc)}: "
                                    + exc.message.removeprefix("Value error, ").rstrip("."),
    usage.UsageError: lambda exc: exc.format_message().rstrip("."),
}


def usage_line(exc: usage.UsageError) -> str:
    """A usage error as one line: ``error: --seed: <rule> (see releval compare --help)``."""
    text = next(USAGE[kind] for kind in type(exc).__mro__ if kind in USAGE)(exc)
    return f"error: {text}" + (f" (see {exc.ctx.command_path} --help)" if exc.ctx else "")
