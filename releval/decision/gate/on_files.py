"""The gate on files: ``gate.rules`` applied to a comparison alone (``releval gate
--comparison FILE --rules FILE``, ``releval compare … --gate FILE``), so a CI job with two run
files and qrels gets a ship / don't-ship exit status without a project.

The comparison is a ``releval compare --format json`` document or a pipeline's
comparison.json. The rules that read only a comparison (``GateRule.needs`` None:
no_regression, not_worse, guarded, seeds) are checked on it, the two systems' means taken
from its paired rows (each over the row's n queries); every other rule is n/a, saying what it
needs, never failed and never passed quietly. A rules file is a list of ``gate.rules``
entries, or a mapping with ``rules`` (or ``gate: {rules: …}``, so a params.yaml serves),
checked by the same models as params.yaml.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from releval.data import contracts as S
from releval.decision.gate import RULES, decide
from releval.decision.gate.evidence import Evidence
from releval.documents.comparison import Comparison
from releval.documents.summary import Entry
from releval.errors import InputError
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.params import parse_params, read_raw


def read_rules(path: str | Path, parsers: dict | None = None) -> list:
    """The rules of a rules file (module docstring), validated as params.yaml's
    ``gate.rules``; InputError naming the file and the key."""
    raw = read_raw(path)
    if isinstance(raw, dict) and "gate" in raw and "rules" not in raw:
        raw = raw["gate"] if isinstance(raw["gate"], dict) else {}
    rules = raw.get("rules") if isinstance(raw, dict) else raw
    if not isinstance(rules, list) or not rules:
        raise InputError("no rules: give a list of gate rules, or a mapping with 'rules' "
                         "(e.g. - {rule: no_regression, measure: nDCG@10, max_drop: 0.01})",
                         str(path))
    return parse_params({"gate": {"rules": rules}}, str(path), parsers).gate.rules


def comparison_of(doc: dict, source: str) -> Comparison:
    """A ``releval compare`` JSON or a comparison.json as the ``Comparison`` model (the
    former's missing blocks empty); InputError naming the file and the first bad key."""
    if not isinstance(doc, dict) or not isinstance(doc.get("paired"), list):
        raise InputError("not a comparison: needs a 'paired' list (a releval compare JSON "
                         "document, or data/compare/comparison.json); a family of several "
                         "systems is gated pair by pair", source)
    differences = doc.get("differences")
    full = {"baseline": "baseline", "candidate": "candidate", "conditions": {},
            "measures": sorted({r.get(S.MEASURE) for r in doc["paired"]
                                if isinstance(r, dict)}),
            "note": "", "strata": "", "unpaired": doc.get("uncontrolled", []),
            "aggregates": {}, "composition": {}, "training": [],
            "change": {"kind": None, "label": "", "holds_fixed": [], "inspections": {}},
            **doc,
            "differences": differences if isinstance(differences, list) else
            [f"{k}: {v}" for k, v in (differences or {}).items()
             if not doc.get("controlled", True) and v]}
    try:
        return Comparison.model_validate(full)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(first["msg"], source, ".".join(map(str, first["loc"]))) from None


def _summary(comparison: Comparison) -> dict[str, dict[str, Entry]]:
    """Each side's mean per measure from the paired rows over every query (slice "all")."""
    out: dict[str, dict[str, Entry]] = {comparison.baseline: {}, comparison.candidate: {}}
    for r in comparison.paired:
        if r.slice != S.ALL:
            continue
        for side, value in ((comparison.baseline, r.mean_baseline),
                            (comparison.candidate, r.mean_candidate)):
            out[side][r.measure] = Entry(value=value, n=r.n, undefined=r.excluded, empty=0,
                                         applicable=True, level="query")
    return out


def gate_comparison(doc: dict, rules: list, *, source: str = "comparison") -> dict:
    """The decision (``releval.decision.gate.decide`` on files) of ``rules`` over the
    comparison document ``doc``."""
    comparison = comparison_of(doc, source)
    summary = _summary(comparison)
    names = {r.measure for r in comparison.paired} | {
        m for rule in rules for m in RULES[rule.rule].measures(rule)}
    better = {m: MEASURES[parse_measures(m)[0].family].better for m in names}
    evidence = Evidence(comparison.baseline, comparison.candidate, comparison=comparison,
                        summary=summary, better=better,
                        metrics={s: {m: e.value for m, e in by.items()}
                                 for s, by in summary.items()})
    return decide(rules, evidence, on_files=True)
