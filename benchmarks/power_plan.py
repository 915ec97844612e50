"""Does the power plan keep its promise? Achieved power and size of the planned query sets.

For each compared measure of a finished run (the project's data/evaluate/per_query.parquet,
compare.baseline against compare.candidate, by query), the analytic plan
(``releval.decision.power``) gives the queries needed to detect compare.min_effect at
plan.power. ``--sets`` query sets of that size are drawn with replacement from the run's
centred per-query differences, shifted by min_effect (power) and by 0 (size), and each gets the
decision's own CI (``releval.decision.stats.bootstrap_ci``, percentile bootstrap). The share of
sets whose CI excludes zero is the achieved power (anchor: the stated power) and the achieved
size (anchor: α).

    python benchmarks/power_plan.py [--params params.yaml] [--sets 1000] [--resamples 1000]
"""

from __future__ import annotations

import argparse

import numpy as np

from releval import artifacts
from releval.data import contracts as S
from releval.data.readers import read_parquet
from releval.decision import power
from releval.decision.compare import canonical
from releval.decision.stats import bootstrap_ci
from releval.params import load_params


def detected(residuals: np.ndarray, n: int, effect: float, *, sets: int, resamples: int,
             alpha: float, seed: int) -> float:
    """The share of ``sets`` query sets of size n (residuals + effect) whose CI excludes 0."""
    rng = np.random.default_rng(seed)
    hits = 0
    for k in range(sets):
        low, high = bootstrap_ci(residuals[rng.integers(0, residuals.size, n)] + effect,
                                 resamples=resamples, alpha=alpha, seed=k)
        hits += low > 0 or high < 0
    return hits / sets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--sets", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()
    p = load_params(args.params)
    c = p.compare
    measures, effect = canonical(c.measures, c.min_effect, p.evaluate.rel)
    per_query = read_parquet(artifacts.path("evaluate.per_query"))
    wide = per_query.pivot_table(index=[S.MEASURE, S.QUERY_ID], columns=S.SYSTEM,
                                 values=S.VALUE, dropna=False)
    print(f"{c.candidate} − {c.baseline}: α {c.alpha}, power {p.plan.power}, {args.sets} sets "
          f"per figure, {args.resamples} bootstrap resamples each")
    print(f"{'measure':<10} {'pilot n':>7} {'σ':>7} {'min effect':>10} {'planned n':>9} "
          f"{'power':>6} {'achieved':>8} {'α':>5} {'size':>6}")
    for measure in measures:
        rows = wide.xs(measure, level=S.MEASURE)[[c.baseline, c.candidate]].dropna()
        pilot = power.pilot((rows[c.candidate] - rows[c.baseline]).to_numpy())
        e = effect[measure] if isinstance(effect, dict) else effect
        n = power.needed(e, pilot.sd, c.alpha, p.plan.power)[0]
        if np.isnan(n):
            print(f"{measure:<10} {pilot.units:>7} no plan (no variation or no effect)")
            continue
        figures = [detected(pilot.residuals, int(n), shift, sets=args.sets,
                            resamples=args.resamples, alpha=c.alpha, seed=p.base.seed)
                   for shift in (e, 0.0)]
        print(f"{measure:<10} {pilot.units:>7} {pilot.sd:>7.4f} {e:>10g} {int(n):>9} "
              f"{p.plan.power:>6.2f} {figures[0]:>8.3f} {c.alpha:>5.2f} {figures[1]:>6.3f}")


if __name__ == "__main__":
    main()
