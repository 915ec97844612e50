"""How an entry point ends on an exception: bad input as one line naming the file, the row and
the rule (``InputError``, and the parse errors of the libraries that read input:
``PARSE_ERRORS``), anything else as one line saying it is a bug, its traceback on request."""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

DEBUG = "RELEVAL_DEBUG"  # =1: every entry point prints a bug's traceback


class InputError(ValueError):
    """Bad input, reported as one line: ``<source>:<where>: <rule>``.

    ``where`` is a line number for text files and a row number for tables; the CLI prints
    ``str(error)`` and exits non-zero, so users never see a traceback for bad data. Without a
    ``source`` (a library's parse error caught where no file is known) the line is
    ``<rule> (<where>)``.
    """

    def __init__(self, rule: str, source: str | None = "<input>", where: str | None = None):
        self.rule, self.source, self.where = rule, source, where
        if source is None:
            super().__init__(rule + (f" ({where})" if where else ""))
        else:
            super().__init__(f"{source}:{where}: {rule}" if where else f"{source}: {rule}")

    def __reduce__(self):  # raised on a Dask worker, re-raised here with the same line
        return type(self), (self.rule, self.source, self.where)


class Parsing(NamedTuple):
    """What a library was reading when it raised, and where in the input its error points."""

    what: str
    detail: Callable[[BaseException], str] = lambda exc: _first_line(exc)
    where: Callable[[BaseException], str | None] = lambda exc: None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _yaml_line(exc) -> str | None:
    mark = getattr(exc, "problem_mark", None)
    return None if mark is None else f"line {mark.line + 1}"


NEWLINE = b"\n"


def _pydantic(exc) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"


def _pandas_line(exc) -> str | None:
    found = re.search(r"\bline (\d+)", str(exc))
    return found and f"line {found[1]}"


# a library's exception type (where it is exported) -> what it was reading; a type of a module
# not loaded is never looked up: nothing raised it
PARSE_ERRORS: dict[str, Parsing] = {
    "yaml.YAMLError": Parsing(
        "YAML", lambda exc: _first_line(getattr(exc, "problem", None) or exc), _yaml_line),
    "json.JSONDecodeError": Parsing("JSON", lambda exc: exc.msg,
                                    lambda exc: f"line {exc.lineno}"),
    "builtins.UnicodeDecodeError": Parsing(
        "UTF-8 text", lambda exc: f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}",
        lambda exc: f"line {exc.object.count(NEWLINE, 0, exc.start) + 1}"),
    "pyarrow.ArrowException": Parsing("parquet/Arrow data"),
    "pandas.errors.ParserError": Parsing("CSV/TSV", where=_pandas_line),
    "pandas.errors.EmptyDataError": Parsing("CSV/TSV"),
    "pydantic.ValidationError": Parsing("its schema's document", _pydantic),
}


def _parsing(exc: BaseException) -> Parsing | None:
    loaded = {}
    for dotted, parsing in PARSE_ERRORS.items():
        module, _, name = dotted.rpartition(".")
        kind = getattr(sys.modules.get(module), name, None)
        if isinstance(kind, type):
            loaded[kind] = parsing
    return next((loaded[kind] for kind in type(exc).__mro__ if kind in loaded), None)


def input_error(exc: BaseException, source: str | None = None) -> InputError | None:
    """``exc`` as bad input: itself when an InputError; a library's parse error
    (``PARSE_ERRORS``) as ``not valid <what>: <detail>`` naming ``source`` and where the
    library points; None for anything else (a bug)."""
    if isinstance(exc, InputError):
        return exc
    parsing = _parsing(exc)
    if parsing is None:
        return None
    return InputError(f"not valid {parsing.what}: {parsing.detail(exc)}", source,
                      parsing.where(exc))


@contextmanager
def reading(source: str) -> Iterator[None]:
    """A library's parse error raised inside is an InputError naming ``source``."""
    try:
        yield
    except Exception as exc:
        error = input_error(exc, source)
        if error is None or error is exc:
            raise
        raise error from None


def one_line(exc: BaseException, hint: str) -> tuple[str, int]:
    """The one line an entry point ends with on ``exc``, and its exit status: ``error: …``, 2,
    for bad input (``input_error``); else ``internal error: TYPE: message (hint)``, 1."""
    error = input_error(exc)
    if error is not None:
        return f"error: {error}", 2
    return f"internal error: {type(exc).__name__}: {_first_line(exc)} ({hint})", 1


def end(exc: BaseException, *, verbose: bool = False, hint: str) -> int:
    """Print ``one_line(exc, hint)`` on stderr, after a bug's traceback when ``verbose`` or
    $RELEVAL_DEBUG is 1; return the exit status."""
    line, status = one_line(exc, hint)
    if status == 1 and (verbose or os.environ.get(DEBUG) == "1"):
        traceback.print_exception(exc, file=sys.stderr)
    print(line, file=sys.stderr, flush=True)
    return status
