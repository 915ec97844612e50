"""One exception type for bad input: it names the file, the row and the rule."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input, reported as one line: ``<source>:<where>: <rule>``.

    ``where`` is a line number for text files and a row number for tables; the CLI prints
    ``str(error)`` and exits non-zero, so users never see a traceback for bad data.
    """

    def __init__(self, rule: str, source: str = "<input>", where: str | None = None):
        self.rule, self.source, self.where = rule, source, where
        loc = f"{source}:{where}" if where else source
        super().__init__(f"{loc}: {rule}")

    def __reduce__(self):  # raised on a Dask worker, re-raised here with the same line
        return type(self), (self.rule, self.source, self.where)
