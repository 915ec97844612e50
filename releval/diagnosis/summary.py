"""What the failure table says in sum: safety violations as failures, counts by layer and
slice, and what changed layer by layer between two systems."""

from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.diagnosis.layers import (
    EVIDENCE,
    FAILURE_COLUMNS,
    KIND,
    KINDS,
    LAYER,
    LAYERS,
    UNJUDGED,
    empty,
)

COUNT = "count"
SUMMARY_COLUMNS = (S.SYSTEM, KIND, LAYER, S.DIMENSION, S.SLICE, COUNT)
CHANGE_COLUMNS = (LAYER, "baseline", "candidate", "difference")


def safety_failures(violations: pd.DataFrame, systems: Iterable[str]) -> pd.DataFrame:
    """The safety violations (``releval.decision.safety.violations`` rows: system, route, query_id,
    doc_id, rank, reason, in_top_k) of the given systems as failures, one per returned pair:
    kind "safety", layer "filter", evidence {reasons (every rule the pair breaks, e.g. acl
    and must_not_return), route, in_top_k}, grade NaN, unjudged_in_top_k 0, rank the
    violation's rank. ``FAILURE_COLUMNS``, in the violations' order."""
    wanted = [str(s) for s in systems]
    needed = (S.SYSTEM, S.ROUTE, S.QUERY_ID, S.DOC_ID, S.RANK, S.REASON, "in_top_k")
    S.require_columns(violations, needed, "violations")
    rows = violations[violations[S.SYSTEM].astype(str).isin(wanted)]
    if rows.empty:
        return empty()
    pairs = rows.astype({S.SYSTEM: str, S.QUERY_ID: str, S.DOC_ID: str}).groupby(
        [S.SYSTEM, S.QUERY_ID, S.DOC_ID], sort=False).agg(
        reasons=(S.REASON, lambda r: [str(x) for x in r]), route=(S.ROUTE, "first"),
        in_top_k=("in_top_k", "first"), rank=(S.RANK, "first")).reset_index()
    evidence = [json.dumps({"reasons": reasons, "route": str(route), "in_top_k": bool(top)})
                for reasons, route, top in zip(pairs["reasons"], pairs["route"],
                                               pairs["in_top_k"], strict=True)]
    return pd.DataFrame({
        S.SYSTEM: pairs[S.SYSTEM].to_numpy(), S.QUERY_ID: pairs[S.QUERY_ID].to_numpy(),
        S.DOC_ID: pairs[S.DOC_ID].to_numpy(), S.GRADE: np.nan, KIND: "safety",
        LAYER: "filter", EVIDENCE: evidence, UNJUDGED: np.zeros(len(pairs), np.int64),
        S.RANK: pairs["rank"].astype(float).to_numpy()})[list(FAILURE_COLUMNS)]


def summary(failures: pd.DataFrame, labels: pd.DataFrame | None = None) -> pd.DataFrame:
    """Failure counts by system × kind × layer (dimension and slice "all"), plus, with
    ``labels`` (query_id, dimension, slice: ``releval.decision.slices.labels``), by system × kind ×
    layer × dimension × slice (a failure counts once per label of its query). Only non-zero
    counts; columns ``SUMMARY_COLUMNS``; ordered by system (first appearance), kind and layer
    (registry order), the overall rows first, then dimension and slice."""
    group = [S.SYSTEM, KIND, LAYER]
    parts = [failures.groupby(group, sort=False).size().rename(COUNT).reset_index()
             .assign(**{S.DIMENSION: S.ALL, S.SLICE: S.ALL})]
    if labels is not None:
        S.require_columns(labels, S.LABEL_COLUMNS, "labels")
        chosen = pd.DataFrame({S.QUERY_ID: labels[S.QUERY_ID].astype(str),
                               S.DIMENSION: labels[S.DIMENSION].astype(str),
                               S.SLICE: labels[S.SLICE].astype(str)}).drop_duplicates()
        labelled = failures[[*group, S.QUERY_ID]].astype({S.QUERY_ID: str}).merge(
            chosen, on=S.QUERY_ID)
        parts.append(labelled.groupby([*group, S.DIMENSION, S.SLICE], sort=False).size()
                     .rename(COUNT).reset_index())
    out = pd.concat(parts, ignore_index=True)
    order = {S.SYSTEM: list(pd.unique(failures[S.SYSTEM])), KIND: list(KINDS),
             LAYER: list(LAYERS)}
    keys = {f"_{c}": pd.Index(v).get_indexer(out[c]) for c, v in order.items()}
    out = out.assign(**keys, _all=out[S.DIMENSION] != S.ALL)
    out = out.sort_values([*keys, "_all", S.DIMENSION, S.SLICE], kind="stable")
    return out.reset_index(drop=True)[list(SUMMARY_COLUMNS)].astype({COUNT: np.int64})


def changes(failures: pd.DataFrame, baseline: str, candidate: str,
            kind: str | None = "relevance") -> pd.DataFrame:
    """What changed by layer: per ``LAYERS`` entry (all of them, zeros included), the
    failures of ``baseline`` and of ``candidate`` (of ``kind``; None: every kind) and
    difference = candidate − baseline. Columns ``CHANGE_COLUMNS``."""
    rows = failures if kind is None else failures[failures[KIND] == kind]
    counts = rows.groupby([S.SYSTEM, LAYER]).size()

    def of(system: str) -> np.ndarray:
        mine = counts.xs(system, level=S.SYSTEM) if system in counts.index.get_level_values(0) \
            else pd.Series(dtype=np.int64)
        return mine.reindex(list(LAYERS), fill_value=0).to_numpy(dtype=np.int64)

    before, after = of(baseline), of(candidate)
    return pd.DataFrame({LAYER: list(LAYERS), "baseline": before, "candidate": after,
                         "difference": after - before})[list(CHANGE_COLUMNS)]
