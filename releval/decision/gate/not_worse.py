"""Gate rule ``not_worse``: a measure of the candidate not worse than the baseline's beyond a
tolerance, in the direction the measure improves (a system-level value or a mean)."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, measure_value
from releval.numbers import formatted
from releval.params.rules import NotWorse


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
    cand, why_cand = measure_value(ev, ev.candidate, rule.measure)
    base, why_base = measure_value(ev, ev.baseline, rule.measure)
    if cand is None or base is None:
        missing = "; ".join(w for w in (why_cand, why_base) if w)
        return [Outcome(rule.rule, name, False, cand, None,
                        f"{missing}: cannot show it is not worse")]
    higher = better == "higher"
    threshold = base - rule.tolerance if higher else base + rule.tolerance
    passed = cand >= threshold if higher else cand <= threshold
    sign = ("≥" if passed else "<") if higher else ("≤" if passed else ">")
    reason = (f"{rule.measure} of {ev.candidate} {formatted(cand)} {sign} "
              f"{formatted(threshold)} (baseline "
              f"{ev.baseline} {formatted(base)} {'−' if higher else '+'} tolerance "
              f"{rule.tolerance:g}; Δ {formatted(cand - base, '+.4f')}, {better} is better)")
    return [Outcome(rule.rule, name, passed, cand, threshold, reason)]
