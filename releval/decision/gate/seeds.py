"""Gate rule ``seeds``: an improvement that holds across training seeds, both intervals stated
(``releval.decision.seeds``)."""

from __future__ import annotations

from releval.decision.gate.evidence import Evidence, Outcome, number
from releval.numbers import formatted
from releval.params.rules import SeedsRule


def measures(rule: SeedsRule) -> list[str]:
    return [rule.measure]


def _interval(low, high) -> str:
    return f"[{formatted(low, '+.4f')}, {formatted(high, '+.4f')}]"


def check(rule: SeedsRule, ev: Evidence) -> list[Outcome]:
    """One outcome. Missing evidence fails and says what is missing: no comparison of the
    candidate, a candidate without seeds, a measure not compared, or an interval that is
    undefined (e.g. a training interval of one seed)."""
    candidate = rule.candidate or ev.candidate
    name = f"{rule.rule} {rule.require} {rule.measure} ({candidate})"

    def fail(reason: str) -> list[Outcome]:
        return [Outcome(rule.rule, name, False, None, rule.min_diff, reason)]

    comparison = None if ev.comparison is None else ev.comparison.of(candidate)
    if comparison is None:
        return fail(f"no comparison has {candidate} as its candidate")
    rows = {r.measure: r for r in comparison.training}
    if not rows:
        return fail(f"{candidate} was not trained with several seeds (no seeds evaluated)")
    if rule.measure not in rows:
        return fail(f"{rule.measure} is not among the measures compared over {candidate}'s "
                    f"seeds ({', '.join(rows)})")
    row = rows[rule.measure]
    sign = -1.0 if ev.better.get(rule.measure) == "lower" else 1.0
    base = comparison.baseline

    def low(lo, hi) -> float | None:  # the interval's bound nearest no improvement
        lo, hi = number(lo), number(hi)
        return None if lo is None or hi is None else min(sign * lo, sign * hi)

    both = (f"seeds' mean Δ {formatted(row.mean_diff, '+.4f')}, bootstrap CI "
            f"{_interval(row.ci_low, row.ci_high)}, training interval "
            f"{_interval(row.training_low, row.training_high)} over "
            f"{row.n_seeds} seeds (sd {formatted(row.training_sd)})")
    if rule.require == "every":
        bounds = {s.seed: low(s.ci_low, s.ci_high) for s in row.seeds}
        if any(b is None for b in bounds.values()):
            return fail(f"a seed's CI is undefined; {both}")
        worst = min(bounds, key=bounds.get)
        passed = bounds[worst] > rule.min_diff
        return [Outcome(rule.rule, name, passed, sign * bounds[worst], rule.min_diff,
                        f"{'every' if passed else 'not every'} seed of {candidate} improves "
                        f"{rule.measure} over {base} by more than {rule.min_diff:g} (weakest: "
                        f"seed {worst}, CI bound {formatted(sign * bounds[worst], '+.4f')}); "
                        f"{both}")]
    ci, training = low(row.ci_low, row.ci_high), low(row.training_low,
                                                          row.training_high)
    if ci is None or training is None:
        return fail(f"an interval is undefined (a training interval needs two seeds); {both}")
    value = min(ci, training)
    passed = value > rule.min_diff
    verb = "improves" if passed else "does not clearly improve"
    return [Outcome(rule.rule, name, passed, sign * value, rule.min_diff,
                    f"the seeds' mean of {candidate} {verb} {rule.measure} over {base} by more "
                    f"than {rule.min_diff:g}: {both}")]
