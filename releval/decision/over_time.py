"""This run against an earlier one: different query samples, so uncontrolled by construction.

A run keeps its **figures** (``figures``): per system (baseline and candidate) and measure,
the macro mean over its evaluated queries with a percentile-bootstrap CI (evaluation-sample
uncertainty), and its per-slice table over ``compare.strata`` (n, n_undefined, traffic
weight W_i, traffic-weighted mean m_i: ``aggregation.slice_rows``). Two runs' figures give,
per system and measure (``compare_figures``), the traffic-weighted aggregates A = Σ_i s_i m_i
before and after, the equal-slice aggregates (1/k) Σ_i m_i, the exact decomposition
Δ = rate + mix (``aggregation.compare_slices``) and the composition flag ``mix_shift`` (the
aggregate moved while no slice moved that way). Both runs must slice by the same dimension.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.aggregation import (
    compare_slices,
    from_rows,
    slice_rows,
    slice_table,
)
from releval.decision.breakdown import STRATUM
from releval.decision.stats import mean_ci

NOTE = "this run against an earlier one: different query samples, uncontrolled by construction"


def _figure(values: pd.DataFrame, resamples: int, alpha: float, seed: int) -> dict:
    return mean_ci(values[S.VALUE].to_numpy(), resamples=resamples, alpha=alpha, seed=seed) | {
        "slices": slice_rows(slice_table(values, slice_col=STRATUM))}


def figure_of(block: dict | None, system: str | None, measure: str) -> dict:
    """One figure of a run's kept ``figures`` (or of the fixture's, same shape); {} where the
    block has none for ``system`` and ``measure``."""
    return ((block or {}).get("systems") or {}).get(system, {}).get(measure) or {}


def figures(diff: pd.DataFrame, baseline: str, candidate: str, dimension: str, *,
            resamples: int, alpha: float, seed: int) -> dict:
    """The run's figures (module docstring) from the compare stage's per-query rows
    (query_id, measure, baseline, candidate, stratum, weight)."""
    systems: dict[str, dict] = {baseline: {}, candidate: {}}
    for measure, rows in diff.groupby(S.MEASURE, sort=False):
        for side, name in (("baseline", baseline), ("candidate", candidate)):
            values = rows[[S.QUERY_ID, STRATUM, S.WEIGHT, side]].rename(
                columns={side: S.VALUE})
            systems[name][str(measure)] = _figure(values, resamples, alpha, seed)
    return {"dimension": dimension, "alpha": alpha, "systems": systems}


def compare_figures(before: dict | None, after: dict | None) -> dict:
    """``after``'s figures against ``before``'s: per system and measure in both, the
    decomposition dict (before, after, delta, rate, mix: of the traffic-weighted aggregate;
    equal-slice before/after, mix_shift, slices; macro_before/after: the plain means);
    ``comparable`` False with ``why`` when they cannot be set side by side. Always
    ``controlled: False``."""
    out = {"controlled": False, "note": NOTE, "comparable": False, "systems": {}}
    if not after:
        return out | {"why": "this run kept no per-slice figures"}
    if not before:
        return out | {"why": "the earlier run kept no per-slice figures"}
    if before.get("dimension") != after.get("dimension"):
        return out | {"why": f"the runs slice by different dimensions ({before.get('dimension')}"
                              f" vs {after.get('dimension')}): compare.strata changed"}
    systems: dict[str, dict] = {}
    for system, measures in after["systems"].items():
        for measure, now in measures.items():
            then = before["systems"].get(system, {}).get(measure)
            if not then or not _weighted(then) or not _weighted(now):
                continue
            parts = compare_slices(from_rows(then["slices"]), from_rows(now["slices"]))
            systems.setdefault(system, {})[measure] = parts.to_dict() | {
                "macro_before": then["mean"], "macro_after": now["mean"]}
    if not systems:
        return out | {"why": "no system and measure has figures in both runs"}
    return out | {"comparable": True, "dimension": after["dimension"], "systems": systems}


def _weighted(figure: dict) -> bool:
    return bool(np.nansum([r["weight"] for r in figure["slices"]
                           if r["mean"] is not None]) > 0)
