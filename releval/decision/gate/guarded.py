"""Gate rule ``guarded``: a primary figure's gain may not be bought with its guards.

A gain in one figure is often paid for in another: a matcher widened for recall lets in near
misses (P@k and the hard-negative rate HardNeg@k worsen), a re-ranker tuned for RR@10 loses
nDCG@10, a faster system answers worse. The rule names a ``primary`` and its ``guards``,
each a measure of the evaluation summary or a latency percentile (``latency p95``), each
compared as the candidate's value against the baseline's in the direction it improves.

For each guard: the outcome fails iff the primary improved (the candidate is better than the
baseline by more than ``min_gain``; with the default 0 any gain counts) and the guard
worsened by more than its ``tolerance`` (the candidate is worse by more than that). The
reason names both: the primary's two values and Δ, the guard's two values, Δ and tolerance.
A primary that did not improve engages no guard (its own drop is ``no_regression``'s or
``not_worse``'s business): the outcome passes and says so. Missing evidence never passes: a
primary or guard not evaluated, not applicable, undefined, or of unknown direction, fails the
guard's outcome and says what is missing; the exceptions are n/a (the data has nothing for
the rule to check): a guard marked ``if_applicable`` whose measure does not apply to the data
at all (HardNeg@k on qrels that mark no hard negative), and a latency (primary or guard) that
no evaluated system measured (team runs carry none: ``unmeasured``). A latency that some
system measured but a compared one did not still fails.
"""

from __future__ import annotations

from dataclasses import dataclass

from releval.decision.gate.evidence import Evidence, Outcome, latency_of, measure_value
from releval.numbers import formatted
from releval.params.rules import LATENCY, Guard, Guarded  # latency: lower is better


def measures(rule: Guarded) -> list[str]:
    """The measure names the rule reads from the evaluation (latency excluded)."""
    names = [rule.primary, *(g.measure for g in rule.guards)]
    return [n for n in dict.fromkeys(names) if not LATENCY.match(n)]


@dataclass(frozen=True)
class Reading:
    """One figure of both systems: ``baseline`` / ``candidate`` values, the way it improves
    (``better``), or ``missing``: why it cannot be compared."""

    name: str
    baseline: float | None = None
    candidate: float | None = None
    better: str | None = None
    missing: str | None = None

    def improved(self, margin: float) -> bool:
        """The candidate is better than the baseline by more than ``margin``."""
        if self.better == "higher":
            return self.candidate > self.baseline + margin
        return self.candidate < self.baseline - margin

    def worsened(self, margin: float) -> bool:
        """The candidate is worse than the baseline by more than ``margin``."""
        if self.better == "higher":
            return self.candidate < self.baseline - margin
        return self.candidate > self.baseline + margin

    def describe(self, ev: Evidence) -> str:
        """"Δ +0.0100: bm25 0.4000 → hybrid 0.4100, higher is better" (latency in ms)."""
        unit, spec = (" ms", ".1f") if LATENCY.match(self.name) else ("", ".4f")
        return (f"Δ {formatted(self.candidate - self.baseline, '+' + spec)}: {ev.baseline} "
                f"{formatted(self.baseline, spec)}{unit} → {ev.candidate} "
                f"{formatted(self.candidate, spec)}{unit}, {self.better} is better")


def _inapplicable(ev: Evidence, name: str) -> bool:
    """The evaluation summary marks measure ``name`` not applicable to both systems."""
    return all((entry := ev.entry(s, name)) is not None and not entry.applicable
               for s in (ev.baseline, ev.candidate))


def _latency(ev: Evidence, system: str, name: str) -> tuple[float | None, str | None]:
    value = latency_of(ev, system, LATENCY.match(name)[1])
    return value, None if value is not None else f"{name} not measured for {system}"


def read(ev: Evidence, name: str) -> Reading:
    """Both systems' values of ``name`` and its direction (latency: lower is better; a
    measure: ``ev.better``)."""
    latency = bool(LATENCY.match(name))
    better = "lower" if latency else ev.better.get(name)
    if better not in ("higher", "lower"):
        return Reading(name, missing=f"the direction of {name} (higher or lower is better) "
                                     "is unknown")
    look = _latency if latency else measure_value
    (cand, why_cand), (base, why_base) = (look(ev, s, name) for s in (ev.candidate,
                                                                        ev.baseline))
    missing = "; ".join(w for w in (why_cand, why_base) if w) or None
    return Reading(name, base, cand, better, missing)


def unmeasured(ev: Evidence, name: str) -> str | None:
    """Why latency ``name`` (``latency p95``) cannot apply: no evaluated system measured it
    (every run stats' percentile null, or no run stats at all); None when ``name`` is not a
    latency or some system measured it."""
    match = LATENCY.match(name)
    if not match or any(latency_of(ev, s, match[1]) is not None for s in ev.latency):
        return None
    return (f"no system measured latency ({name} is null for "
            f"{', '.join(ev.latency) or 'every system'}: team runs carry none)")


def _outcome(rule: Guarded, guard: Guard, primary: Reading, ev: Evidence) -> Outcome:
    name = f"{rule.rule} {rule.primary} ↔ {guard.measure}"
    absent = unmeasured(ev, rule.primary) or unmeasured(ev, guard.measure)
    if absent:
        return Outcome.not_applicable(rule.rule, name, f"{absent}: nothing to compare")
    watched = read(ev, guard.measure)
    if primary.missing:
        return Outcome(rule.rule, name, False, None, None,
                       f"{primary.missing}: cannot tell whether {rule.primary} improved")
    if watched.missing and guard.if_applicable and _inapplicable(ev, guard.measure):
        return Outcome.not_applicable(rule.rule, name, f"{watched.missing}: the guard "
                                      f"{guard.measure} does not apply to this data "
                                      "(if_applicable)")
    if watched.missing:
        return Outcome(rule.rule, name, False, None, None,
                       f"{watched.missing}: cannot check the guard {guard.measure}")
    bound = -guard.tolerance if watched.better == "higher" else guard.tolerance
    improved, worsened = primary.improved(rule.min_gain), watched.worsened(guard.tolerance)
    gain = (f"{rule.primary} {'improved' if improved else 'did not improve'} "
            f"({primary.describe(ev)}"
            + (f"; min_gain {rule.min_gain:g}" if rule.min_gain else "") + ")")
    held = (f"{guard.measure} {'worsened beyond' if worsened else 'held within'} its "
            f"tolerance ({watched.describe(ev)}; tolerance {guard.tolerance:g})")
    if not improved:
        reason = f"{gain}: the guard is not engaged; {held}"
    elif worsened:
        reason = f"{gain} while {held}: the gain is bought with {guard.measure}"
    else:
        reason = f"{gain} and {held}"
    return Outcome(rule.rule, name, not (improved and worsened),
                   watched.candidate - watched.baseline, bound, reason)


def check(rule: Guarded, ev: Evidence) -> list[Outcome]:
    """One outcome per guard. Higher is better: the primary improved iff candidate > baseline
    + min_gain, a guard worsened iff candidate < baseline − tolerance (lower is better: the
    mirror images); fail iff both. ``value``: the guard's Δ (candidate − baseline);
    ``threshold``: its bound (−tolerance where higher is better, +tolerance where lower is).
    Missing evidence of either fails (module docstring)."""
    primary = read(ev, rule.primary)
    return [_outcome(rule, guard, primary, ev) for guard in rule.guards]
