"""What `releval plan` holds in memory as the effect shrinks: the plan's peak, traced
(``tracemalloc``, numpy's arrays included), against the anchor of the same plan at an effect a
small pilot can see, measured in the same run.

The simulated size search draws its unit sets in blocks (``releval.decision.power.DRAWS``)
and stops at ``SIMULATED_MAX_UNITS`` ("more than"), so the peak at min_effect 0.001 should be
that of the anchor, not of 2,000 sets × the needed size (printed beside it: what drawing
every set at once would hold).

    python benchmarks/plan_memory.py [--n 300] [--sd 0.17] [--effects 0.02 0.005 0.001]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from releval.decision import power


def traced(residuals: np.ndarray, effect: float) -> tuple[power.Plan, int, float]:
    """(the plan, its peak traced bytes, seconds)."""
    pilot = power.pilot(residuals)
    tracemalloc.start()
    start = time.perf_counter()
    plan = power.plan(pilot, effect, 0.05, 0.8)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return plan, peak, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="pilot queries")
    ap.add_argument("--sd", type=float, default=0.17, help="σ of the pilot's differences")
    ap.add_argument("--effects", type=float, nargs="+", default=[0.02, 0.005, 0.001])
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    d = rng.normal(0.0, args.sd, args.n) + rng.choice([-0.2, 0.0, 0.3], args.n, p=[.1, .8, .1])
    _, anchor, _ = traced(d, args.effects[0])
    print(f"pilot: {args.n} queries, σ {np.std(d, ddof=1):.3f}; anchor: min_effect "
          f"{args.effects[0]} peaks at {anchor / 2**20:.1f} MiB")
    print("| min_effect | analytic needed | simulated needed | peak MiB | × anchor | seconds "
          "| every set at once, MiB |")
    print("|---|---|---|---|---|---|---|")
    for effect in args.effects:
        plan, peak, seconds = traced(d, effect)
        simulated = (f"> {plan.needed_simulated_beyond:,}" if plan.needed_simulated_beyond
                     else f"{plan.needed_simulated:,}")
        largest = min(plan.needed or power.SIMULATED_MAX_UNITS, power.SIMULATED_MAX_UNITS)
        print(f"| {effect} | {plan.needed:,} | {simulated} | {peak / 2**20:.1f} | "
              f"{peak / anchor:.2f} | {seconds:.1f} | {power.SETS * largest * 16 / 2**20:,.0f} |")


if __name__ == "__main__":
    main()
