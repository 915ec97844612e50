"""Training variation beside evaluation uncertainty: a candidate trained with several seeds.

Each seed s of the candidate gives a run evaluated on the same queries as the baseline
(evaluate's seeds.parquet). Per measure, with b(q) the baseline's value and c_s(q) seed s's
(undefined queries left out, as in the paired comparison):

- per seed: Δ_s = mean_q (c_s(q) − b(q)) with its paired bootstrap CI (``stats.paired``):
  the evaluation-sample uncertainty of that one trained model;
- the seeds' mean: c̄(q) = mean_s c_s(q); Δ̄ = mean_q (c̄(q) − b(q)) with its paired bootstrap
  CI (evaluation uncertainty of the mean model);
- training variation: sd_train = the sample standard deviation of the Δ_s over the n seeds
  (ddof 1), their range, and the training interval Δ̄ ± t(1 − α/2, n − 1) · sd_train / √n
  (undefined below two seeds).

Neither interval replaces the other: the bootstrap CI says how much the query sample could
move Δ, the training interval how much retraining could. The gate's ``seeds`` rule asks
the improvement to hold for every seed (every Δ_s's CI above the bound) or for the seeds'
mean (Δ̄'s CI and the training interval above it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from releval.data import contracts as S
from releval.decision.stats import clusters_of, paired

_CI_FIELDS = ("n", "mean_candidate", "mean_diff", "ci_low", "ci_high")


def _pairs(baseline: pd.DataFrame, seeds: pd.DataFrame, measure: str) -> pd.DataFrame:
    """query_id-indexed wide table: ``baseline`` and one column per seed, ``measure`` only."""
    base = baseline.loc[baseline[S.MEASURE] == measure].set_index(S.QUERY_ID)[S.VALUE]
    wide = seeds.loc[seeds[S.MEASURE] == measure].pivot(index=S.QUERY_ID, columns=S.SEED,
                                                       values=S.VALUE)
    return wide.join(base.rename("baseline"), how="inner").astype(float)


def training_variance(baseline: pd.DataFrame, seeds: pd.DataFrame, measures: list[str], *,
                      queries: pd.DataFrame | None = None, cluster: str | None = None,
                      resamples: int = 10_000, alpha: float = 0.05, seed: int = 0) -> list[dict]:
    """One entry per measure (module docstring): ``seeds`` (per seed: n, means, Δ_s and its
    CI), the seeds' mean (``mean_diff``, ``ci_low``, ``ci_high``), ``training_sd``,
    ``training_low`` / ``training_high`` and ``seed_min`` / ``seed_max``. ``baseline``:
    per-query rows (query_id, measure, value) of the baseline; ``seeds``: the candidate's
    evaluate seeds.parquet rows (seed, query_id, measure, value); resampling over
    ``cluster`` units of ``queries`` as the paired comparison does."""
    clusters = clusters_of(queries, cluster)
    settings = {"resamples": resamples, "alpha": alpha, "seed": seed}
    rows = []
    for measure in measures:
        wide = _pairs(baseline, seeds, measure)
        numbers = [c for c in wide.columns if c != "baseline"]
        labels = None if clusters is None else clusters.reindex(wide.index).to_numpy()
        base = wide["baseline"].to_numpy()
        per_seed = [{"seed": int(k), **{f: v for f, v in paired(
            base, wide[k].to_numpy(), clusters=labels, **settings).to_dict().items()
            if f in _CI_FIELDS}} for k in numbers]
        mean = paired(base, wide[numbers].mean(axis=1, skipna=False).to_numpy(),
                      clusters=labels, **settings).to_dict()
        diffs = np.array([s["mean_diff"] for s in per_seed], dtype=float)
        n = int(diffs.size)
        sd = float(diffs.std(ddof=1)) if n > 1 else float("nan")
        half = (float(scipy_stats.t.ppf(1 - alpha / 2, n - 1)) * sd / np.sqrt(n)
                if n > 1 else float("nan"))
        rows.append({
            S.MEASURE: measure, "n_seeds": n, "seeds": per_seed,
            "n": mean["n"], "mean_baseline": mean["mean_baseline"],
            "mean_candidate": mean["mean_candidate"], "mean_diff": mean["mean_diff"],
            "ci_low": mean["ci_low"], "ci_high": mean["ci_high"],
            "training_sd": sd, "training_low": mean["mean_diff"] - half,
            "training_high": mean["mean_diff"] + half,
            "seed_min": float(diffs.min()) if n else float("nan"),
            "seed_max": float(diffs.max()) if n else float("nan"),
            "resamples": resamples, "alpha": alpha, "seed": seed})
    return rows
