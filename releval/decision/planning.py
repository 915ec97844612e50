"""The power plan of every (slice, measure) of a comparison: ``releval.decision.power`` over
the paired differences d_j = candidate_j − baseline_j of the queries defined in both systems,
on the "all" slice and on every labelled slice (``releval.decision.slices.membership``)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision import power
from releval.decision.slices import membership, wide_values

KEYS = [S.DIMENSION, S.SLICE, S.MEASURE]
COLUMNS = ("unit", "units", "queries_per_unit", "sd", "sd_low", "sd_high", "power", "mde",
           "mde_simulated", "needed_queries", "needed_queries_low", "needed_queries_high",
           "needed_queries_simulated", "needed_queries_simulated_beyond",
           "undefined")  # undefined: why (None: defined); beyond: the simulation's bound


def plan_table(per_query: pd.DataFrame, labels: pd.DataFrame, baseline: str, candidate: str,
               measures: Iterable[str], effects: dict[str, float], *, alpha: float,
               target: float, clusters: pd.Series | None = None,
               simulate_needed: Iterable[str] = (), seed: int = 0) -> pd.DataFrame:
    """One row per (dimension, slice, measure) with at least one query defined in both
    systems: n and ``COLUMNS`` (``power.Plan``; the needed units converted to queries).
    ``simulate_needed``: the dimensions whose rows also get the simulation's needed queries
    (a bisection over sizes: the slow part); None in the others."""
    measures = list(dict.fromkeys(measures))
    wide = wide_values(per_query, [baseline, candidate], measures)
    long = membership(per_query, labels).merge(wide, on=S.QUERY_ID)
    long = long[long[baseline].notna() & long[candidate].notna()]
    long["_d"] = long[candidate] - long[baseline]
    keys, sizes, pilots = [], [], []
    for key, group in long.groupby(KEYS, sort=False):
        labels_ = None if clusters is None else clusters.reindex(group[S.QUERY_ID]).to_numpy()
        keys.append(key)
        sizes.append(len(group))
        pilots.append(power.pilot(group["_d"].to_numpy(), labels_))
    simulated = set(simulate_needed)
    found = [power.plan(p, effects[k[2]], alpha, target, seed=seed, simulate_needed=True)
             if k[0] in simulated else None for k, p in zip(keys, pilots, strict=True)]
    rest = [i for i, f in enumerate(found) if f is None]
    for i, plan in zip(rest, power.plans([pilots[i] for i in rest],
                                         [effects[keys[i][2]] for i in rest], alpha, target,
                                         seed=seed, simulate_needed=False), strict=True):
        found[i] = plan
    rows = [{**dict(zip(KEYS, key, strict=True)), "n": n, **{c: plan.to_dict()[c] for c in COLUMNS}}
            for key, n, plan in zip(keys, sizes, found, strict=True)]
    return pd.DataFrame(rows, columns=[*KEYS, "n", *COLUMNS])


DETECTABILITY = ("sd", "power", "mde", "mde_simulated", "needed_queries", "needed_queries_low",
                 "needed_queries_high")


def detectability(per_query: pd.DataFrame, labels: pd.DataFrame | None, baseline: str,
                  candidate: str, measures: Iterable[str], min_effect: float | dict[str, float],
                  *, alpha: float, target: float, clusters: pd.Series | None = None,
                  seed: int = 0) -> pd.DataFrame:
    """Per (dimension, slice, measure): the columns a comparison shows beside its verdict
    (``DETECTABILITY``: the units' sd and the power the rest is stated at, the MDE at the
    current n, analytic and simulated, and the analytic needed queries with σ's range).
    ``labels`` None: the "all" slice only."""
    measures = list(dict.fromkeys(measures))
    effects = min_effect if isinstance(min_effect, dict) else dict.fromkeys(measures, min_effect)
    labels = pd.DataFrame(columns=[S.QUERY_ID, S.DIMENSION, S.SLICE]) if labels is None \
        else labels
    table = plan_table(per_query, labels, baseline, candidate, measures, effects, alpha=alpha,
                       target=target, clusters=clusters, seed=seed)
    return table[[*KEYS, *DETECTABILITY]]


def fields(row: pd.Series) -> dict:
    """One detectability row as JSON fields: NaN → None, the needed queries as integers."""
    return {c: None if pd.isna(row[c]) else int(row[c]) if c.startswith("needed")
            else float(row[c]) for c in DETECTABILITY}


def curve(sd: float, queries_per_unit: float, alpha: float, target: float,
          queries: np.ndarray) -> np.ndarray:
    """The analytic MDE at each number of ``queries`` (units = queries / queries_per_unit,
    at least 2): the power curve a report draws."""
    units = np.maximum(np.asarray(queries, dtype=float) / queries_per_unit, 2.0)
    return power.mde(sd, units, alpha, target)
