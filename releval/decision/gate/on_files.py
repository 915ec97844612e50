"""The gate on files: ``gate.rules`` applied to a comparison alone (``releval gate
--comparison FILE --rules FILE``, ``releval compare … --gate FILE``), so a CI job with two run
files and qrels gets a ship / don't-ship exit status without a project.

The comparison is a ``releval compare --format json`` document (paired, or the unpaired view
of ``--allow-uncontrolled``) or a pipeline's comparison.json. The rules that read only a
comparison (``GateRule.needs`` None: no_regression, not_worse, guarded, seeds) are checked on
it, each system's means taken from its rows (paired: over the row's n queries; unpaired: over
the system's own); a measure they name that the comparison does not hold is missing evidence,
which fails as in the pipeline. Every other rule, and the slices a rule names (the slices
stage's), is n/a, saying what it needs, never failed and never passed quietly.

A rules file is a list of ``gate.rules`` entries, or a mapping with ``rules`` (or ``gate:
{rules: …}``), validated by the rule models (``releval.params.rules``) and their measure names
by the measure parser; any other mapping is a params file, validated whole (its systems and
slices declare what its rules name), whose ``gate.rules`` (the defaults if it sets none) are
the rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from releval.data import contracts as S
from releval.decision.gate import RULES, UNCONTROLLED, decide
from releval.decision.gate.evidence import Evidence, Outcome
from releval.documents.comparison import Comparison
from releval.documents.decision import Decision
from releval.documents.summary import Entry
from releval.errors import InputError
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.params import Gate, Parser, parse_params, read_raw

NO_RULES = ("no rules: give a list of gate rules, or a mapping with 'rules' (e.g. - {rule: "
            "no_regression, measure: nDCG@10, max_drop: 0.01}), or a params file")


def _invalid(exc: ValidationError, source: str, prefix: str = "") -> InputError:
    """The first problem of ``exc`` as one line naming ``source`` and its key."""
    first = exc.errors()[0]
    return InputError(first["msg"], source, prefix + ".".join(map(str, first["loc"])))


def _entries(entries: Any, source: str, parsers: dict[str, Parser] | None) -> list:
    """``gate.rules`` entries validated by their models, their measure names by
    ``parsers["measure"]`` (as params.yaml's: ``releval.params.CHECKS``)."""
    try:
        rules = Gate.model_validate({"rules": entries}).rules
    except ValidationError as exc:
        raise _invalid(exc, source, "gate.") from None
    check = (parsers or {}).get("measure")
    named = [(f"gate.rules.{i}.{key}", name) for i, rule in enumerate(rules)
             for kind, key, name in rule.references() if kind == "measure"]
    for key, name in named if check else []:
        try:
            check(name)
        except ValueError as exc:
            raise InputError(getattr(exc, "rule", str(exc)), source, key) from None
    return rules


def read_rules(path: str | Path, parsers: dict[str, Parser] | None = None) -> list:
    """The rules of a rules file (module docstring); InputError naming the file and the
    key."""
    raw, source = read_raw(path), str(path)
    if isinstance(raw, dict) and not raw.keys() <= {"rules", "gate"}:  # a params file
        rules = parse_params(raw, source, parsers).gate.rules
    else:
        gate = raw.get("gate") if isinstance(raw, dict) else None
        entries = (raw.get("rules", gate.get("rules") if isinstance(gate, dict) else None)
                   if isinstance(raw, dict) else raw)
        rules = _entries(entries, source, parsers) if entries else []
    if not rules:
        raise InputError(NO_RULES, source)
    return rules


def comparison_of(doc: dict, source: str) -> Comparison:
    """A ``releval compare`` JSON (its ``uncontrolled`` rows as ``unpaired``, its ``gate``
    left out, its missing blocks empty) or a comparison.json as the ``Comparison`` model;
    InputError naming the file and the first bad key."""
    rows = doc.get("paired", doc.get("uncontrolled")) if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise InputError("not a comparison: needs a 'paired' (or 'uncontrolled') list (a "
                         "releval compare JSON document, or data/compare/comparison.json); a "
                         "family of several systems is gated pair by pair", source)
    body = {k: v for k, v in doc.items() if k not in ("uncontrolled", "gate")}
    unpaired = doc.get("uncontrolled", [])
    differences = doc.get("differences")
    full = {"baseline": "baseline", "candidate": "candidate", "conditions": {},
            "measures": sorted({r.get(S.MEASURE) for r in rows if isinstance(r, dict)}),
            "note": "", "unit": None, "strata": "", "paired": [], "unpaired": unpaired,
            "aggregates": {}, "composition": {}, "training": [],
            "change": {"kind": None, "label": "", "holds_fixed": [], "inspections": {}},
            **body,
            "differences": differences if isinstance(differences, list) else
            [f"{k}: {v}" for k, v in (differences or {}).items()
             if not doc.get("controlled", True) and v]}
    try:
        return Comparison.model_validate(full)
    except ValidationError as exc:
        raise _invalid(exc, source) from None


def _entry(value, n, undefined, missing: str | None = None) -> Entry:
    return Entry(value=value, n=n, undefined=undefined, empty=0, applicable=missing is None,
                 level="query", missing=missing)


def _summary(comparison: Comparison, named: set[str]) -> dict[str, dict[str, Entry]]:
    """Each side's mean per measure: a paired row's over every query (slice "all"), or an
    unpaired row's macro mean over the side's own queries; a measure of ``named`` the
    comparison does not hold is not applicable, saying so (its rule fails, or an
    ``if_applicable`` guard is n/a)."""
    out: dict[str, dict[str, Entry]] = {comparison.baseline: {}, comparison.candidate: {}}
    for r in comparison.paired:
        if r.slice == S.ALL:
            out[comparison.baseline][r.measure] = _entry(r.mean_baseline, r.n, r.excluded)
            out[comparison.candidate][r.measure] = _entry(r.mean_candidate, r.n, r.excluded)
    for r in comparison.unpaired:
        for side, key in ((comparison.baseline, "aggregates_before"),
                          (comparison.candidate, "aggregates_after")):
            figures = r[key]
            out[side][r[S.MEASURE]] = _entry(figures["macro"], figures["n"],
                                             figures["n_undefined"])
    for side in out.values():
        for name in sorted(named - side.keys()):
            side[name] = _entry(None, 0, 0, f"not in the comparison (releval compare -m {name})")
    return out


def _without_slices(rule) -> tuple[Any, list[Outcome]]:
    """``rule`` without the slices it names, and their n/a outcomes: a slice is the slices
    stage's comparison, which a comparison does not hold."""
    named = [(key.partition(".")[0], spec) for kind, key, spec in rule.references()
             if kind == "slice"]
    return rule.model_copy(update={field: [] for field, _ in named}), [
        Outcome.not_applicable(rule.rule, f"{rule.rule} @ {spec}", "needs a pipeline run: it "
                               f"reads the slices stage's comparison of {spec}, which a "
                               "comparison does not hold")
        for _, spec in named]


def gate_comparison(comparison: dict, rules: list, *, source: str) -> dict:
    """The decision (``releval.decision.gate.decide`` on files; a ``Decision`` document) of
    ``rules`` (``read_rules``) over the comparison document ``comparison``; ``source`` names
    it in an InputError."""
    compared = comparison_of(comparison, source)
    kept, apart = [], []
    for rule in rules:
        rule, slices = _without_slices(rule)
        kept.append(rule)
        apart += slices
    named = {m for rule in kept if not RULES[rule.rule].needs
             for m in RULES[rule.rule].measures(rule)}
    summary = _summary(compared, named)
    better = {m: MEASURES[parse_measures(m)[0].family].better for m in named}
    evidence = Evidence(compared.baseline, compared.candidate, comparison=compared,
                        summary=summary, better=better,
                        metrics={s: {m: e.value for m, e in by.items()}
                                 for s, by in summary.items()})
    decision = decide(kept, evidence, on_files=True)
    prefix = "" if evidence.controlled else UNCONTROLLED
    decision["rules"] += [o.as_dict() | {"reason": prefix + o.reason} for o in apart]
    decision["not_applicable"] += [o.name for o in apart]
    return Decision.check(decision, source)
