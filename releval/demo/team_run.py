"""The simulated team's external run, for the demo only: a stand-in for a team's own
retrained system, written as a TREC run by the prepare stage and evaluated like any route."""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.demo.generator import DemoData


def simulate_external_run(data: DemoData, seed: int = 0, depth: int = 100,
                          system: str = "prod_v2") -> pd.DataFrame:
    """A seeded stand-in for a team's own retrained system, for the demo only.

    Per query: 70% of its ground-truth documents scored by grade plus noise (so it is good
    but imperfect), padded to ``depth`` with random documents of the query's tenant already
    published at the query's time, scored below them. It ignores status and ACLs on purpose,
    as a buggy production system might, so the external route's visibility flags have
    something to find. Columns: query_id,
    doc_id, score, system (write it as a TREC run).
    """
    rng = np.random.default_rng(seed + 7919)
    truth = data.ground_truth.merge(data.queries[[S.QUERY_ID]], on=S.QUERY_ID)
    truth = truth[rng.random(len(truth)) >= 0.3]  # it misses some answers entirely
    relevant = truth.assign(score=truth[S.GRADE] + rng.normal(0.0, 1.6, len(truth)))
    docs = data.documents.sort_values(S.PUBLISHED_AT, kind="stable").reset_index(drop=True)
    queries = data.queries[[S.QUERY_ID, S.TENANT, S.ISSUED_AT]]
    filler = []
    for tenant, group in queries.groupby(S.TENANT):  # one vectorised draw per tenant
        pool = docs.index[docs[S.TENANT] == tenant].to_numpy()
        # documents published by the query's time (status and ACL deliberately ignored)
        published = docs[S.PUBLISHED_AT].to_numpy()[pool]
        n_before = np.searchsorted(published, group[S.ISSUED_AT].to_numpy(), side="right")
        picks = np.floor(rng.random((len(group), depth)) * np.maximum(n_before, 1)[:, None])
        filler.append(pd.DataFrame({
            S.QUERY_ID: np.repeat(group[S.QUERY_ID].to_numpy(), depth),
            S.DOC_ID: docs[S.DOC_ID].to_numpy()[pool[picks.astype(np.int64).ravel()]],
            S.SCORE: rng.uniform(-3.0, 0.5, len(group) * depth)}))
    run = pd.concat([relevant[[S.QUERY_ID, S.DOC_ID, S.SCORE]], *filler], ignore_index=True)
    run = run.sort_values([S.QUERY_ID, S.SCORE], ascending=[True, False], kind="stable")
    run = run.drop_duplicates([S.QUERY_ID, S.DOC_ID]).groupby(S.QUERY_ID).head(depth)
    return run.assign(**{S.SCORE: run[S.SCORE].round(6), S.SYSTEM: system}).reset_index(
        drop=True)
