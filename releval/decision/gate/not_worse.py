"""Gate rule ``not_worse``: a measure of the candidate not worse than the baseline's beyond a
tolerance, in the direction the measure improves (a system-level value or a mean)."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, not_applicable, number
from releval.params.rules import NotWorse


def _value(rule: NotWorse, ev: Evidence, system: str) -> tuple[float | None, str | None]:
    """The system's value of the measure, or None and why there is none."""
    entry = (ev.summary.get(system) or {}).get(rule.measure)
    if entry is None:
        return None, f"no {rule.measure} for {system} in the evaluation summary"
    if entry.get("applicable", True) is False:
        return None, (f"{rule.measure} is not applicable to {system}: "
                      f"{not_applicable(entry)}")
    value = number(entry.get("value"))
    if value is None:
        counts = ", ".join(f"{k}={entry[k]}" for k in ("n", "undefined") if k in entry)
        return None, f"{rule.measure} of {system} is undefined" + (f" ({counts})" if counts
                                                                   else "")
    return value, None


def check(rule: NotWorse, ev: Evidence) -> list[Outcome]:
    """Higher is better: pass iff candidate ≥ baseline − tolerance; lower is better: pass iff
    candidate ≤ baseline + tolerance. A measure missing, not applicable or undefined for
    either system fails and says which and why; so does a measure of unknown direction."""
    name = f"{rule.rule} {rule.measure}"
    better = ev.better.get(rule.measure)
    if better not in ("higher", "lower"):
        return [Outcome(rule.rule, name, False, None, None,
                        f"the direction of {rule.measure} (higher or lower is better) is "
                        "unknown")]
    cand, why_cand = _value(rule, ev, ev.candidate)
    base, why_base = _value(rule, ev, ev.baseline)
    if cand is None or base is None:
        missing = "; ".join(w for w in (why_cand, why_base) if w)
        return [Outcome(rule.rule, name, False, cand, None,
                        f"{missing}: cannot show it is not worse")]
    higher = better == "higher"
    threshold = base - rule.tolerance if higher else base + rule.tolerance
    passed = cand >= threshold if higher else cand <= threshold
    sign = ("≥" if passed else "<") if higher else ("≤" if passed else ">")
    reason = (f"{rule.measure} of {ev.candidate} {cand:.4f} {sign} {threshold:.4f} (baseline "
              f"{ev.baseline} {base:.4f} {'−' if higher else '+'} tolerance "
              f"{rule.tolerance:g}; Δ {cand - base:+.4f}, {better} is better)")
    return [Outcome(rule.rule, name, passed, cand, threshold, reason)]
