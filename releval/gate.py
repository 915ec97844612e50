"""Release gates: each configured rule checked against the pipeline's evidence.

A rule (``releval.params.Rule``, discriminated by ``rule``) is checked by the function that
``RULES`` registers under its ``rule`` name; it yields one or more ``Outcome``s. ``decide``
runs every rule and returns the decision as a JSON-ready dict: the candidate ships only when
every outcome passed. An uncontrolled comparison does not stop the decision; it labels it
(``controlled: false``, the differences, and every reason prefixed ``UNCONTROLLED: ``).

Missing evidence never passes: a missing measure, slice, system or latency fails its rule
with a reason that says what is missing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from releval.errors import InputError
from releval.params import JudgedRule, LatencyRule, NoAnswerRule, NoRegression, SafetyRule

ALL = "all"
UNCONTROLLED = "UNCONTROLLED: "
NO_RULES = "no rules configured"
SLICE_COLUMNS = ("dimension", "slice", "measure", "n", "too_small", "mean_diff", "ci_low")


@dataclass(frozen=True)
class Evidence:
    """Everything the rules read. ``comparison``: comparison.json; ``slices``:
    slices.parquet; ``safety``: safety.json; ``metrics``: system -> measure -> mean (or
    None); ``latency``: system -> {"p50", "p95", "p99"} in ms (None = not measured)."""

    baseline: str
    candidate: str
    comparison: dict = field(default_factory=dict)
    slices: pd.DataFrame = field(default_factory=pd.DataFrame)
    safety: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    latency: dict = field(default_factory=dict)

    @property
    def controlled(self) -> bool:
        """Only an explicit ``controlled: true`` counts as controlled."""
        return self.comparison.get("controlled") is True


@dataclass(frozen=True)
class Outcome:
    """One checked condition: ``passed`` iff ``value`` meets ``threshold`` (per the rule)."""

    rule: str
    name: str
    passed: bool
    value: float | int | None
    threshold: float | int | None
    reason: str

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _num(value: Any) -> float | None:
    """A finite float, or None for null / NaN."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _f(value: float | None) -> str:
    return "null" if value is None else f"{value:+.4f}"


# --- no_regression --------------------------------------------------------------------------


def _overall_row(rule: NoRegression, ev: Evidence) -> dict | None:
    rows = [r for r in ev.comparison.get("paired") or []
            if r.get("measure") == rule.measure and r.get("slice") == ALL]
    return rows[0] if rows else None


def _slice_row(rule: NoRegression, ev: Evidence, dimension: str, value: str) -> dict | None:
    frame = ev.slices
    missing = [c for c in SLICE_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"slices table lacks column(s) {', '.join(missing)}", "slices")
    hit = frame[(frame["dimension"].astype(str) == dimension)
                & (frame["slice"].astype(str) == value)
                & (frame["measure"].astype(str) == rule.measure)]
    if len(hit) > 1:
        raise InputError(f"{len(hit)} rows for slice {dimension}={value}, measure "
                         f"{rule.measure}; expected one", "slices")
    return None if hit.empty else hit.iloc[0].to_dict()


def _non_inferior(rule: NoRegression, name: str, row: dict) -> Outcome:
    """ci: pass iff ci_low ≥ −max_drop; mean: pass iff mean_diff ≥ −max_drop."""
    threshold = -rule.max_drop
    column, label = (("ci_low", "CI lower bound of") if rule.evidence == "ci"
                     else ("mean_diff", "mean"))
    n = row.get("n")
    n_text = f"n={int(n)}" if _num(n) is not None else "n unknown"
    value = _num(row.get(column))
    what = f"{label} Δ{rule.measure} (candidate − baseline)"
    if value is None:
        return Outcome(rule.rule, name, False, None, threshold,
                       f"{what} is undefined ({n_text}); cannot show non-inferiority")
    passed = value >= threshold
    reason = (f"{what} {_f(value)} {'≥' if passed else '<'} {_f(threshold)} ({n_text})"
              + ("" if passed else f": a drop larger than {rule.max_drop:g} is not ruled out"))
    return Outcome(rule.rule, name, passed, value, threshold, reason)


def check_no_regression(rule: NoRegression, ev: Evidence) -> list[Outcome]:
    """Overall (comparison ``paired`` row with slice "all") and on each ``slices`` entry
    ("dimension=value", from slices.parquet): evidence ``ci``: pass iff ci_low ≥ −max_drop;
    ``mean``: pass iff mean_diff ≥ −max_drop. A missing measure or slice fails, and so does
    a too-small slice (its CI is not computed, so non-inferiority cannot be shown)."""
    base = f"{rule.rule} {rule.measure} @ "
    threshold = -rule.max_drop
    row = _overall_row(rule, ev)
    if row is None:
        compared = sorted({str(r.get("measure")) for r in ev.comparison.get("paired") or []})
        outcomes = [Outcome(rule.rule, base + ALL, False, None, threshold,
                            f"{rule.measure} is not in the paired comparison (compared: "
                            f"{', '.join(compared) or 'none'})")]
    else:
        outcomes = [_non_inferior(rule, base + ALL, row)]
    for spec in rule.slices:
        name = base + spec
        dimension, sep, value = spec.partition("=")
        if not sep or not dimension or not value:
            outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                    f"slice {spec!r} is not written dimension=value"))
            continue
        found = _slice_row(rule, ev, dimension, value)
        if found is None:
            outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                    f"no such slice: {spec} has no {rule.measure} row in the "
                                    "slices table"))
        elif bool(found["too_small"]):
            outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                    f"too small: n={int(found['n'])} below min n; cannot show "
                                    "non-inferiority"))
        else:
            outcomes.append(_non_inferior(rule, name, found))
    return outcomes


# --- safety, no_answer, judged, latency -----------------------------------------------------


def check_safety(rule: SafetyRule, ev: Evidence) -> list[Outcome]:
    """Pass iff violations ≤ max_violations, counted over the candidate and every route it
    is built from. Zero tolerance by default: no other number offsets a violation."""
    name = f"{rule.rule} {ev.candidate}"
    record = (ev.safety.get("systems") or {}).get(ev.candidate)
    if record is None or record.get("violations") is None:
        return [Outcome(rule.rule, name, False, None, rule.max_violations,
                        f"no safety record for {ev.candidate}")]
    count = int(record["violations"])
    routes = [str(r) for r in record.get("routes") or [] if str(r) != ev.candidate]
    where = ev.candidate + (f" and its routes {', '.join(routes)}" if routes else "")
    reasons = ", ".join(f"{k}={int(v)}" for k, v in (record.get("by_reason") or {}).items()
                        if v)
    passed = count <= rule.max_violations
    reason = (f"{count} violation(s) {'≤' if passed else '>'} max {rule.max_violations} over "
              f"{where}" + (f" ({reasons})" if reasons else ""))
    return [Outcome(rule.rule, name, passed, count, rule.max_violations, reason)]


def check_no_answer(rule: NoAnswerRule, ev: Evidence) -> list[Outcome]:
    """Pass iff correct_refusal_rate(candidate) ≥ correct_refusal_rate(baseline) − max_drop;
    a null rate (no no-answer queries) passes as not applicable, and says so."""
    name = f"{rule.rule} {ev.candidate}"
    records = ev.safety.get("no_answer") or {}
    missing = [s for s in (ev.candidate, ev.baseline) if s not in records]
    if missing:
        return [Outcome(rule.rule, name, False, None, None,
                        f"no no-answer record for {', '.join(missing)}")]
    cand = _num(records[ev.candidate].get("correct_refusal_rate"))
    base = _num(records[ev.baseline].get("correct_refusal_rate"))
    if cand is None or base is None:
        return [Outcome(rule.rule, name, True, cand, None,
                        "not applicable: no no-answer queries")]
    threshold = base - rule.max_drop
    passed = cand >= threshold
    return [Outcome(rule.rule, name, passed, cand, threshold,
                    f"correct-refusal rate {cand:.4f} {'≥' if passed else '<'} {threshold:.4f} "
                    f"(baseline {ev.baseline} {base:.4f} − max drop {rule.max_drop:g})")]


def check_judged(rule: JudgedRule, ev: Evidence) -> list[Outcome]:
    """Pass iff metrics[candidate][measure] ≥ min; missing or null fails."""
    name = f"{rule.rule} {rule.measure}"
    measures = ev.metrics.get(ev.candidate) or {}
    if rule.measure not in measures:
        return [Outcome(rule.rule, name, False, None, rule.min,
                        f"no {rule.measure} for {ev.candidate} in the metrics")]
    value = _num(measures[rule.measure])
    if value is None:
        return [Outcome(rule.rule, name, False, None, rule.min,
                        f"{rule.measure} of {ev.candidate} is undefined")]
    passed = value >= rule.min
    return [Outcome(rule.rule, name, passed, value, rule.min,
                    f"{rule.measure} of {ev.candidate} {value:.4f} {'≥' if passed else '<'} "
                    f"{rule.min:g}" + ("" if passed else
                                       ": the judgments do not cover what it retrieves"))]


def check_latency(rule: LatencyRule, ev: Evidence) -> list[Outcome]:
    """Pass iff latency[candidate][percentile] ≤ max_ms; not measured (null) fails."""
    name = f"{rule.rule} {rule.percentile}"
    value = _num((ev.latency.get(ev.candidate) or {}).get(rule.percentile))
    if value is None:
        return [Outcome(rule.rule, name, False, None, rule.max_ms,
                        f"latency not measured for {ev.candidate}")]
    passed = value <= rule.max_ms
    return [Outcome(rule.rule, name, passed, value, rule.max_ms,
                    f"{rule.percentile} latency of {ev.candidate} {value:.1f} ms "
                    f"{'≤' if passed else '>'} {rule.max_ms:g} ms")]


RULES: dict[str, Callable[[Any, Evidence], list[Outcome]]] = {
    "no_regression": check_no_regression,
    "safety": check_safety,
    "no_answer": check_no_answer,
    "judged": check_judged,
    "latency": check_latency,
}


def outcomes(rules: Iterable, evidence: Evidence) -> list[Outcome]:
    """Every rule's outcomes, in rule order, labelled when the comparison is uncontrolled."""
    result = []
    for rule in rules:
        if rule.rule not in RULES:
            raise InputError(f"unknown gate rule {rule.rule!r} (known: {', '.join(RULES)})",
                             "params.yaml", "gate.rules")
        result.extend(RULES[rule.rule](rule, evidence))
    if not evidence.controlled:
        result = [dataclasses.replace(o, reason=UNCONTROLLED + o.reason) for o in result]
    return result


def decide(rules: Iterable, evidence: Evidence) -> dict:
    """The decision: ``passed`` iff every outcome passed (true, with a note, for no rules)."""
    checked = outcomes(rules, evidence)
    return {
        "passed": all(o.passed for o in checked),
        "baseline": evidence.baseline,
        "candidate": evidence.candidate,
        "controlled": evidence.controlled,
        "differences": evidence.comparison.get("differences", []),
        "rules": [o.as_dict() for o in checked],
        "failed": [o.name for o in checked if not o.passed],
        "note": None if checked else NO_RULES,
    }
