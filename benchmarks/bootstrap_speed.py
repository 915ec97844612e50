"""releval's paired bootstrap CI against scipy.stats.bootstrap, on the same differences.

10,000 queries, 10,000 resamples, percentile 95% CI of the mean difference. releval is timed
on ``bootstrap_ci`` (the bootstrap part of ``paired``), scipy on ``bootstrap((d,), np.mean,
method="percentile", vectorized=True)``; the full ``paired`` (bootstrap + sign-flip test) is
timed too. Prints best-of-``--repeat`` times, both CIs and the ratio releval / scipy (target:
releval ≤ 2 s). Usage: python benchmarks/bootstrap_speed.py [--queries N] [--resamples B]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats
from timing import best_of

from releval.decision.stats import bootstrap_ci, paired


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    baseline = rng.beta(2, 3, args.queries)
    candidate = np.clip(baseline + rng.normal(0.01, 0.1, args.queries), 0, 1)
    d = candidate - baseline
    print(f"{args.queries:,} queries × {args.resamples:,} resamples")

    ours, ci = best_of(lambda: bootstrap_ci(d, resamples=args.resamples, seed=0), args.repeat)
    theirs, res = best_of(lambda: stats.bootstrap(
        (d,), np.mean, n_resamples=args.resamples, method="percentile", vectorized=True,
        random_state=np.random.default_rng(0)), args.repeat)
    full, _ = best_of(lambda: paired(baseline, candidate, resamples=args.resamples), args.repeat)

    low, high = res.confidence_interval
    print(f"releval bootstrap_ci  {ours:7.3f} s  CI [{ci[0]:.5f}, {ci[1]:.5f}]")
    print(f"scipy bootstrap       {theirs:7.3f} s  CI [{low:.5f}, {high:.5f}]")
    print(f"releval paired (CI + sign-flip p) {full:.3f} s")
    print(f"ratio releval / scipy: {ours / theirs:.2f}  (target: releval ≤ 2 s: "
          f"{'met' if ours <= 2 else 'MISSED'})")


if __name__ == "__main__":
    main()
