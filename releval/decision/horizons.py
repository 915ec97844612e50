"""The paired comparison at several horizons of a recommendation run
(``recommend.horizons_days``), and whether the candidate's gain is a novelty effect.

At each horizon h the candidate is compared with the baseline over the users evaluated at h,
as ``releval.decision.compare.compare`` compares them over every user (same clusters,
resamples, seed and Holm over the measures): one row per horizon and measure. The gain of a
measure is its Δ (candidate − baseline) in the measure's better direction (−Δ where lower is
better). **Novelty**: the gain at the shortest horizon less the gain at the longest exceeds
the measure's ``min_effect``: the candidate's advantage shrinks as the window grows, as
a novelty effect would; both horizons' Δ and CI are reported beside it. Undefined (None)
where either Δ is.
"""

from __future__ import annotations

import pandas as pd

from releval.data import contracts as S
from releval.decision.compare import compare
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure

ROW_FIELDS = {"n": "n", "baseline": "mean_baseline", "candidate": "mean_candidate",
              "delta": "mean_diff", "ci_low": "ci_low", "ci_high": "ci_high",
              "p_holm": "p_holm", "verdict": "verdict"}


def _direction(measure: str) -> int:
    return 1 if MEASURES[parse_measure(measure).family].better == "higher" else -1


def novelty(rows: list[dict], measures: list[str],
            min_effect: float | dict[str, float]) -> list[dict]:
    """Per measure: the shortest and the longest horizon's Δ with its CI, the gains, their
    difference ``shrink`` and ``novelty`` (shrink > min_effect; None where undefined);
    nothing with fewer than two horizons."""
    days = sorted({r["horizon_days"] for r in rows})
    if len(days) < 2:
        return []
    out = []
    for measure in measures:
        at = {r["horizon_days"]: r for r in rows if r["measure"] == measure}
        short, long = at.get(days[0]), at.get(days[-1])
        effect = min_effect.get(measure, 0.0) if isinstance(min_effect, dict) \
            else float(min_effect)
        sign = _direction(measure)
        gains = [None if r is None or r["delta"] is None else sign * r["delta"]
                 for r in (short, long)]
        shrink = None if None in gains else gains[0] - gains[1]
        out.append({"measure": measure, "short_days": days[0], "long_days": days[-1],
                    "delta_short": short and short["delta"],
                    "ci_short": [short and short["ci_low"], short and short["ci_high"]],
                    "delta_long": long and long["delta"],
                    "ci_long": [long and long["ci_low"], long and long["ci_high"]],
                    "gain_short": gains[0], "gain_long": gains[1], "shrink": shrink,
                    "min_effect": effect,
                    "novelty": None if shrink is None else bool(shrink > effect)})
    return out


def by_horizon(per_query: pd.DataFrame, baseline: str, candidate: str, measures: list[str], *,
               clusters: pd.Series | None, min_effect: float | dict[str, float],
               resamples: int, alpha: float, seed: int) -> dict:
    """comparison.json's ``horizons`` block from evaluate's horizons.parquet (horizon_days,
    system, query_id, measure, value): ``days``, ``rows`` (per horizon and measure: n,
    baseline, candidate, delta, ci_low, ci_high, p_holm, verdict) and ``novelty``
    (``novelty``); None when there is no further horizon."""
    if per_query.empty:
        return None
    rows = []
    for days, table in per_query.groupby(S.HORIZON_DAYS, sort=True):
        side = {s: table.loc[table[S.SYSTEM] == s, [S.QUERY_ID, S.MEASURE, S.VALUE]]
                for s in (baseline, candidate)}
        result = compare(side[baseline], side[candidate], measures, clusters=clusters,
                         allow_uncontrolled=False, min_effect=min_effect,
                         resamples=resamples, alpha=alpha, seed=seed)
        rows += [{"horizon_days": int(days), "measure": r[S.MEASURE]}
                 | {key: r[field] for key, field in ROW_FIELDS.items()}
                 for r in result["paired"]]
    return {"days": sorted({r["horizon_days"] for r in rows}), "rows": rows,
            "novelty": novelty(rows, measures, min_effect)}
