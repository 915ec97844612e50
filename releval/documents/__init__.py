"""Typed JSON documents passed between stages (pydantic v2): every JSON artifact of the
catalog (``releval.artifacts``) names its model here.

One module per document: ``source`` (raw.source), ``split_report`` (split.report),
``selftest`` (selftest.totals), ``run_stats`` (candidates.stats and fused.stats),
``identity`` (pool.identity), ``tasks`` (pool.tasks, a JSON list), ``agreement``
(judgments.agreement), ``ingest`` (judgments.ingest), ``fixture`` (fixture.summary),
``metrics`` (evaluate.metrics, system -> measure -> value), ``summary`` (evaluate.summary),
``agreement_auto`` (autojudge.report), ``comparison`` (compare.comparison),
``slices_summary`` (slices.summary), ``safety`` (safety.report), ``health`` (health.report),
``failures`` (failures.report), ``offpolicy`` (offpolicy.report), ``decision``
(gate.decision), ``receipt`` (reports.receipt and reports.reproduced) and ``looks``
(reports.looks); ``ledger`` holds the run ledger's rows, built from the receipts
(``releval.project.history.entries``), not an artifact. A document is validated where it is
written (``check``, by the stage's writer for every catalog entry) and read as its model
(``read``; ``validated``: parsed JSON as the model). Fields whose keys are data
(measure names, system names) are dicts; the parts with a fixed shape are nested models, and
a fixed shape forbids unknown keys, so a renamed key fails naming the file and the key. The
writers keep writing the stage's dict, so the files' bytes do not depend on the models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from releval.errors import InputError


class Fixed(BaseModel):
    """A part with a fixed shape: unknown keys are errors; read by attribute."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Checked:
    """``check`` and ``read`` of a whole JSON document's model."""

    @classmethod
    def check(cls, doc: Any, source: str = "") -> Any:
        """``doc`` itself once it validates; InputError naming the first bad key otherwise."""
        try:
            cls.model_validate(doc)
        except ValidationError as exc:
            raise _error(cls, exc, source or cls.__name__) from None
        return doc

    @classmethod
    def validated(cls, doc: Any, source: str = "") -> Self:
        """``doc`` (parsed JSON) as the model; InputError naming the first bad key otherwise."""
        try:
            return cls.model_validate(doc)
        except ValidationError as exc:
            raise _error(cls, exc, source or cls.__name__) from None

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


class Document(Checked, Fixed):
    """A whole JSON document between stages: a JSON object. A document that is a JSON list
    or a map of data keys is a ``Checked`` ``pydantic.RootModel`` (``.root``)."""


def _error(cls: type, exc: ValidationError, source: str) -> InputError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(document)"
    return InputError(f"not a {cls.__name__} document: {where}: {first['msg']} "
                      f"({exc.error_count()} problem(s))", source)
