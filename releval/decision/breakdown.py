"""The paired comparison broken down per measure over strata (one label per query).

Per measure m and side (baseline, candidate), over the evaluated queries with their stratum
and traffic weight: the ``releval.decision.aggregation.aggregates`` (macro, micro,
traffic-weighted, equal-slice over the strata), with micro = Σ_j |R_j ∩ S_j| / Σ_j |R_j| for
the recall family (value_j · |R_j| relevant retrieved, |R_j| = visible judgments of grade
≥ m.rel); the rate/mix ``decompose`` of baseline → candidate (when both sides have values;
controlled when both hold the same queries, as a paired comparison does);
and one per-query row: baseline, candidate, diff = candidate − baseline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from releval.data import contracts as S
from releval.decision.aggregation import aggregates, decompose
from releval.metrics.engine import resolve

STRATUM = "stratum"
UNLABELLED = "unlabelled"
MICRO_FAMILIES = ("R",)  # value = relevant retrieved / relevant: micro is defined


@dataclass(frozen=True)
class Breakdown:
    """``aggregates``: side -> measure -> aggregates; ``composition``: measure -> decomposition
    dict; ``diff``: per-query rows (query_id, measure, baseline, candidate, diff, stratum,
    weight), measure by measure."""

    aggregates: dict
    composition: dict
    diff: pd.DataFrame


def strata(query_ids: Iterable[str], labels: pd.DataFrame, queries: pd.DataFrame,
           dimension: str) -> pd.DataFrame:
    """(query_id, stratum, weight) per query of ``query_ids``: its ``dimension`` slice from
    ``labels`` (``UNLABELLED`` where it has none) and its traffic weight from ``queries``."""
    labelled = labels.loc[labels[S.DIMENSION] == dimension].set_index(S.QUERY_ID)[S.SLICE]
    frame = pd.DataFrame({S.QUERY_ID: query_ids})
    return frame.assign(**{
        STRATUM: frame[S.QUERY_ID].map(labelled).fillna(UNLABELLED).astype(str),
        S.WEIGHT: frame[S.QUERY_ID].map(queries.set_index(S.QUERY_ID)[S.WEIGHT]).astype(float)})


def _values(per_query: pd.DataFrame, system: str, measure: str,
            frame: pd.DataFrame) -> pd.DataFrame:
    rows = per_query.loc[(per_query[S.SYSTEM] == system) & (per_query[S.MEASURE] == measure),
                         [S.QUERY_ID, S.VALUE]]
    return frame.merge(rows, on=S.QUERY_ID, how="inner")


def breakdown(per_query: pd.DataFrame, frame: pd.DataFrame, qrels: pd.DataFrame,
              measures: list[str], baseline: str, candidate: str) -> Breakdown:
    """The breakdown (module docstring) of ``per_query`` (system, query_id, measure, value)
    over ``frame`` (``strata``); ``qrels``: the visible judgments."""
    sides = (baseline, candidate)
    relevant = qrels[qrels[S.GRADE] >= 1]
    per_measure, composition, diff_rows = {s: {} for s in sides}, {}, []
    for m in resolve(measures):
        n_rel = relevant.loc[relevant[S.GRADE] >= m.rel].groupby(S.QUERY_ID).size()
        values = {}
        for s in sides:
            v = _values(per_query, s, m.name, frame)
            v = v.assign(relevant_retrieved=v[S.VALUE] * v[S.QUERY_ID].map(n_rel).fillna(0),
                         relevant=v[S.QUERY_ID].map(n_rel).fillna(0))
            values[s] = v
            micro = ("relevant_retrieved", "relevant") if m.family in MICRO_FAMILIES else None
            per_measure[s][m.name] = aggregates(v, slice_col=STRATUM, micro=micro)
        if all(len(v) for v in values.values()):
            same = set(values[baseline][S.QUERY_ID]) == set(values[candidate][S.QUERY_ID])
            composition[m.name] = decompose(*(values[s] for s in sides), slice_col=STRATUM,
                                            same_sample=same).to_dict()
        merged = values[baseline].merge(values[candidate][[S.QUERY_ID, S.VALUE]],
                                        on=S.QUERY_ID, how="outer", suffixes=("_b", "_c"))
        diff_rows.append(pd.DataFrame({
            S.QUERY_ID: merged[S.QUERY_ID], S.MEASURE: m.name,
            "baseline": merged[f"{S.VALUE}_b"], "candidate": merged[f"{S.VALUE}_c"],
            "diff": merged[f"{S.VALUE}_c"] - merged[f"{S.VALUE}_b"],
            STRATUM: merged[STRATUM], S.WEIGHT: merged[S.WEIGHT]}))
    return Breakdown(per_measure, composition, pd.concat(diff_rows, ignore_index=True))
