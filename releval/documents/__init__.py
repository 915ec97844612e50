"""Typed JSON documents passed between stages (pydantic v2).

One module per document: ``comparison`` (compare.comparison), ``summary``
(evaluate.summary), ``decision`` (gate.decision), ``run_stats`` (candidates.stats and
fused.stats) and ``health`` (health.report). A document is validated where it is written
(``Document.check``, by the stage's writer for every catalog entry with a document model);
``Document.read`` loads one as its model. Fields whose keys are data
(measure names, system names) are dicts; the parts with a fixed shape are nested models, and
a fixed shape forbids unknown keys, so a renamed key fails at load time naming the file.
The writers keep writing the stage's dict, so the files' bytes do not depend on the models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from releval.errors import InputError


class Fixed(BaseModel):
    """A part with a fixed shape: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Document(Fixed):
    """A whole JSON document between stages."""

    @classmethod
    def check(cls, doc: dict[str, Any], source: str = "") -> dict[str, Any]:
        """``doc`` itself once it validates; InputError naming the first bad key otherwise."""
        try:
            cls.model_validate(doc)
        except ValidationError as exc:
            raise _error(cls, exc, source or cls.__name__) from None
        return doc

    @classmethod
    def read(cls, path: str | Path) -> Self:
        """The document at ``path``; InputError (one line) when missing or not this shape."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError("not found (has the stage that writes it run?)",
                             str(path)) from None
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise _error(cls, exc, str(path)) from None


def _error(cls: type, exc: ValidationError, source: str) -> InputError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(document)"
    return InputError(f"not a {cls.__name__} document: {where}: {first['msg']} "
                      f"({exc.error_count()} problem(s))", source)
