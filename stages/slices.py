"""Stage ``slices``: compare.candidate against compare.baseline, paired, on every slice.

Inputs: data/evaluate/per_query.parquet (system, query_id, measure, value) and
data/evaluate/labels.parquet (query_id, dimension, slice); data/raw/queries.parquet only for
user_id when ``compare.cluster`` is "user_id". Outputs (data/slices/): slices.parquet (the
``releval.decision.slices.slice_table`` over every system of per_query and
``compare.measures``) and slices.json (baseline, candidate, Holm family size, counts of
(slice, measure) rows tested and too small, distinct slices, and the rows whose verdict is
improved/regressed with p_holm ≤ alpha: ``releval.decision.slices.tested_summary``). Each row
also carries its minimum detectable effect at ``plan.power`` and the queries needed for
``compare.min_effect`` (``releval.decision.planning.detectability``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from releval.artifacts import reads
from releval.data import contracts as S
from releval.decision.compare import canonical
from releval.decision.planning import detectability
from releval.decision.slices import slice_table, tested_summary
from releval.decision.stats import clusters_of
from releval.params import Params


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``slices.<field>`` (``releval.artifacts``)."""

    table: pd.DataFrame
    summary: dict


@dataclass(frozen=True)
class Inputs:
    """queries: the raw queries, read for ``compare.cluster`` only."""

    per_query: pd.DataFrame = reads("evaluate.per_query")
    labels: pd.DataFrame = reads("evaluate.labels")
    queries: pd.DataFrame | None = reads("raw.queries", when="compare.cluster")


def run(p: Params, inputs: Inputs) -> Outputs:
    """The slice table and its summary (see the module docstring)."""
    per_query, labels, queries = inputs.per_query, inputs.labels, inputs.queries
    c = p.compare
    measures, effect = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)
    systems = [str(s) for s in pd.unique(per_query[S.SYSTEM])] if S.SYSTEM in per_query else []
    labels = labels[labels[S.DIMENSION].isin(p.slices.dimensions)]
    clusters = clusters_of(queries, c.cluster)
    table = slice_table(per_query, labels, systems, measures, c.baseline, c.candidate,
                        min_n=p.slices.min_n, min_effect=effect, resamples=c.resamples,
                        alpha=c.alpha, seed=p.base.seed, clusters=clusters)
    table = table.merge(detectability(per_query, labels, c.baseline, c.candidate, measures,
                                      effect, alpha=c.alpha, target=p.plan.power,
                                      clusters=clusters, seed=p.base.seed),
                        on=[S.DIMENSION, S.SLICE, S.MEASURE], how="left")
    summary = {"baseline": c.baseline, "candidate": c.candidate, "measures": measures,
               "alpha": c.alpha, "unit": "cluster" if c.cluster else "query",
               **tested_summary(table, c.alpha)}
    return Outputs(table, summary)


def line(p: Params, result: Outputs) -> str:
    report = result.summary
    return (f"slices: {report['baseline']} vs {report['candidate']}: {report['tested']} "
            f"tested, {report['too_small']} too small, {len(report['changed'])} changed "
            "after Holm")
