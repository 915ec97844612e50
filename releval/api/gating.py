"""``gate``: the release rules applied to a comparison alone, as ``releval gate`` does on files
(``releval.decision.gate.on_files``): the rules that read only a comparison (no_regression,
not_worse, guarded, seeds) are checked; every other rule, and a slice a rule names, is n/a
saying what it needs, never passed quietly."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from releval.api.comparison import Comparison
from releval.api.display import html_table, json_text, plain
from releval.decision.gate.on_files import NO_RULES, _entries, gate_comparison, read_rules
from releval.errors import InputError, reading
from releval.params import parse_params
from releval.project.params_file import parsers
from releval.report.formats import rule_mark, rule_value, verdict

RULE_COLUMNS = ("name", "passed", "value", "threshold", "reason")


@dataclass(frozen=True, eq=False)
class Decision:
    """The gate's decision document (``releval.documents.decision.Decision``): ``passed``,
    every rule's outcome (``rules``; ``passed`` None where not applicable), the ``failed`` and
    ``not_applicable`` names, the pair and whether the comparison was controlled."""

    doc: dict[str, Any]

    @property
    def passed(self) -> bool:
        return bool(self.doc["passed"])

    @property
    def verdict(self) -> str:
        return verdict(self.passed)

    @property
    def failed(self) -> list[str]:
        return list(self.doc["failed"])

    def __repr__(self) -> str:
        return (f"Decision({self.verdict}: {self.doc['candidate']} against "
                f"{self.doc['baseline']}, failed {self.failed})")

    def __bool__(self) -> bool:
        return self.passed

    def to_frame(self) -> pd.DataFrame:
        """One row per rule outcome: ``RULE_COLUMNS`` and whether it applied."""
        rows = [{c: r.get(c) for c in RULE_COLUMNS}
                | {"applicable": r.get("applicable", True) is not False}
                for r in self.doc["rules"]]
        return pd.DataFrame(rows, columns=[*RULE_COLUMNS, "applicable"])

    def to_dict(self) -> dict[str, Any]:
        return plain(self.doc)

    def to_json(self) -> str:
        return json_text(self.doc)

    def _repr_html_(self) -> str:
        rows = pd.DataFrame([{"rule": r.get("name"), "": rule_mark(r),
                              "value": rule_value(r.get("value")),
                              "threshold": rule_value(r.get("threshold")),
                              "reason": r.get("reason", "")} for r in self.doc["rules"]])
        failed = f" ({len(self.failed)} failed: {', '.join(self.failed)})" if self.failed else ""
        uncontrolled = "" if self.doc.get("controlled", True) else " UNCONTROLLED"
        return html_table(rows, f"{self.verdict}{uncontrolled}{failed}: "
                                f"{self.doc['candidate']} against {self.doc['baseline']}")


def rules_of(rules: str | Path | list | Mapping, source: str = "rules") -> list:
    """The rule models of a rules file, a list of ``gate.rules`` entries (dicts or rule
    models), a mapping with ``rules`` (or ``gate: {rules: …}``), or a params mapping (its
    ``gate.rules``); InputError naming the key of the first bad entry."""
    if isinstance(rules, str | Path):
        return read_rules(rules, parsers())
    if isinstance(rules, Mapping) and not rules.keys() <= {"rules", "gate"}:
        found = parse_params(dict(rules), source, parsers()).gate.rules
    else:
        gate = rules.get("gate") if isinstance(rules, Mapping) else None
        entries = (rules.get("rules", gate.get("rules") if isinstance(gate, Mapping) else None)
                   if isinstance(rules, Mapping) else rules)
        entries = [e.model_dump() if hasattr(e, "model_dump") else e for e in entries or []]
        found = _entries(entries, source, parsers()) if entries else []
    if not found:
        raise InputError(NO_RULES, source)
    return found


def _comparison(comparison: Comparison | Mapping | str | Path) -> tuple[dict, str]:
    """The comparison document and its source name."""
    if isinstance(comparison, Comparison):
        return comparison.doc, "comparison"
    if isinstance(comparison, Mapping):
        return dict(comparison), "comparison"
    path = Path(comparison)
    if not path.is_file():
        raise InputError("file not found", str(path))
    with reading(str(path)):
        return json.loads(path.read_text()), str(path)


def gate(comparison: Comparison | Mapping | str | Path, rules: str | Path | list | Mapping,
         *, source: str | None = None) -> Decision:
    """The ``rules`` (``rules_of``) applied to ``comparison`` (``compare``'s, its document, or
    a comparison JSON file: the compare command's or a pipeline's comparison.json).
    ``source`` names the comparison in an error."""
    doc, where = _comparison(comparison)
    decision = gate_comparison(doc, rules_of(rules), source=source or where)
    if not isinstance(decision, dict):  # a Decision model
        decision = decision.model_dump(mode="json")
    return Decision(decision)
