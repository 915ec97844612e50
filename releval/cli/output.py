"""What every command shares: the stderr console, one-line errors (exit status 2) and the
table-or-JSON format option."""

from __future__ import annotations

from enum import StrEnum
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

err = Console(stderr=True)


class TableOrJson(StrEnum):
    table = "table"
    json = "json"


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with status 2."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)
