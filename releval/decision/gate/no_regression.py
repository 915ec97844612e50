"""Gate rule ``no_regression``: the candidate not worse than the baseline, overall and on
named slices, beyond ``max_drop``."""

from __future__ import annotations

from releval.data import contracts as S
from releval.decision.gate.evidence import Evidence, Outcome, detectable, number
from releval.documents.comparison import Paired
from releval.errors import InputError
from releval.numbers import formatted
from releval.params.rules import NoRegression

SLICE_COLUMNS = (S.DIMENSION, S.SLICE, S.MEASURE, "n", "too_small", "mean_diff", "ci_low")


def _signed(value: float | None) -> str:
    return "null" if value is None else formatted(value, "+.4f")


def _paired(ev: Evidence) -> list[Paired]:
    return [] if ev.comparison is None else ev.comparison.paired


def _overall_row(rule: NoRegression, ev: Evidence) -> Paired | None:
    rows = [r for r in _paired(ev) if r.measure == rule.measure and r.slice == S.ALL]
    return rows[0] if rows else None


def _slice_row(rule: NoRegression, ev: Evidence, dimension: str, value: str) -> dict | None:
    frame = ev.slices
    S.require_columns(frame, SLICE_COLUMNS, "slices")
    hit = frame[(frame[S.DIMENSION].astype(str) == dimension)
                & (frame[S.SLICE].astype(str) == value)
                & (frame[S.MEASURE].astype(str) == rule.measure)]
    if len(hit) > 1:
        raise InputError(f"{len(hit)} rows for slice {dimension}={value}, measure "
                         f"{rule.measure}; expected one", "slices")
    return None if hit.empty else hit.iloc[0].to_dict()


def _missing_slice(rule: NoRegression, ev: Evidence, dimension: str, value: str) -> str:
    """Why the asked slice has no row: the dimension is not labelled, or no query holds the
    value (naming the values that are there)."""
    asked = f"you asked for slice {dimension}={value}"
    frame = ev.slices
    rows = frame[frame[S.DIMENSION].astype(str) == dimension] if len(frame) else frame
    if rows.empty:
        return f"{asked}; no query is labelled by {dimension} (slices.dimensions)"
    if not (rows[S.SLICE].astype(str) == value).any():
        present = sorted(rows[S.SLICE].astype(str).unique())
        holder = f"no tag {value}" if dimension == "tag" else f"no {dimension} {value}"
        return (f"{asked}; the queries carry {holder} (present: "
                f"{', '.join(present[:8])}{', …' if len(present) > 8 else ''})")
    return f"{asked}; it has no {rule.measure} row (measures compared: compare.measures)"


def _column(rule: NoRegression) -> str:
    """The figure the rule reads: ``ci_low`` (evidence ``ci``) or ``mean_diff``."""
    return "ci_low" if rule.evidence == "ci" else "mean_diff"


def _non_inferior(rule: NoRegression, name: str, n, value, power: str = "",
                  basis: str = "") -> Outcome:
    """ci: pass iff ci_low ≥ −max_drop; mean: pass iff mean_diff ≥ −max_drop (``value``:
    that figure of the row, ``n``: its queries, ``power``: what the row could detect, said
    when it fails; ``basis``: how the interval was made, said instead of n when given)."""
    threshold = 0.0 - rule.max_drop  # (never -0.0)
    label = "CI lower bound of" if rule.evidence == "ci" else "mean"
    n_text = basis or (f"n={int(n)}" if number(n) is not None else "n unknown")
    value = number(value)
    what = f"{label} Δ{rule.measure} (candidate − baseline)"
    if value is None:
        return Outcome(rule.rule, name, False, None, threshold,
                       f"{what} is undefined ({n_text}); cannot show non-inferiority")
    passed = value >= threshold
    reason = (f"{what} {_signed(value)} {'≥' if passed else '<'} {_signed(threshold)} "
              f"({n_text})"
              + ("" if passed else f": a drop larger than {rule.max_drop:g} is not ruled out"
                 f"{power}"))
    return Outcome(rule.rule, name, passed, value, threshold, reason)


def check(rule: NoRegression, ev: Evidence) -> list[Outcome]:
    """Overall (comparison ``paired`` row with slice "all") and on each ``slices`` entry
    ("dimension=value", from slices.parquet): evidence ``ci``: pass iff ci_low ≥ −max_drop;
    ``mean``: pass iff mean_diff ≥ −max_drop. A missing measure or slice fails, and so does
    a too-small slice (its CI is not computed, so non-inferiority cannot be shown)."""
    base = f"{rule.rule} {rule.measure} @ "
    threshold = 0.0 - rule.max_drop  # (never -0.0)
    row = _overall_row(rule, ev)
    if row is None:
        compared = sorted({r.measure for r in _paired(ev)})
        outcomes = [Outcome(rule.rule, base + S.ALL, False, None, threshold,
                            f"{rule.measure} is not in the paired comparison (compared: "
                            f"{', '.join(compared) or 'none'})")]
    else:
        outcomes = [_non_inferior(rule, base + S.ALL, row.n, getattr(row, _column(rule)),
                                  detectable(row), ev.basis.get(rule.measure, ""))]
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
                                    _missing_slice(rule, ev, dimension, value)))
        elif bool(found["too_small"]):
            outcomes.append(Outcome(rule.rule, name, False, None, threshold,
                                    f"too small: n={int(found['n'])} below min n; cannot show "
                                    f"non-inferiority{detectable(found)}"))
        else:
            outcomes.append(_non_inferior(rule, name, found["n"], found[_column(rule)],
                                          detectable(found)))
    return outcomes
