"""The simulated team's external runs, for the demo only: stand-ins for a team's own
systems, written by the prepare stage and evaluated like any route — ``prod_v2`` (a TREC run)
and its retrained successor ``prod_v3``, trained with three seeds (one table, a run tag per
seed and a per-query serving status)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.demo.generator import DemoData

SEEDS = (1, 2, 3)
STATUS_SHARES = {"timeout": 0.015, "partial": 0.02, "fallback": 0.01}  # the rest: ok
TIMEOUT_DEPTH = 10  # a timed-out query keeps what came back before the deadline


def simulate_external_run(data: DemoData, seed: int = 0, depth: int = 100,
                          system: str = "prod_v2", keep: float = 0.7,
                          noise: float = 1.6) -> pd.DataFrame:
    """A seeded stand-in for a team's own retrained system, for the demo only.

    Per query: a share ``keep`` of its ground-truth documents scored by grade plus normal
    noise of sd ``noise`` (so it is good but imperfect), padded to ``depth`` with random
    documents of the query's tenant already published at the query's time, scored below
    them. It ignores status and ACLs on purpose, as a buggy production system might, so the
    external route's visibility flags have something to find. Columns: query_id, doc_id,
    score, system (write it as a TREC run).
    """
    rng = np.random.default_rng(seed + 7919)
    truth = data.ground_truth.merge(data.queries[[S.QUERY_ID]], on=S.QUERY_ID)
    truth = truth[rng.random(len(truth)) < keep]  # it misses some answers entirely
    relevant = truth.assign(score=truth[S.GRADE] + rng.normal(0.0, noise, len(truth)))
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


def simulate_retrained_run(data: DemoData, seed: int = 0, depth: int = 100,
                           system: str = "prod_v3", seeds: tuple[int, ...] = SEEDS
                           ) -> pd.DataFrame:
    """``prod_v2`` retrained on a new training signal, once per training seed, for the demo.

    Seed k's run is ``simulate_external_run`` with 80% of the ground truth kept and noise of
    sd 1.3 (better than prod_v2's 70% and 1.6), drawn from its own stream, tagged
    ``<system>@seed<k>``. Each query gets a serving ``status``: ``timeout`` (1.5%: only the
    first ``TIMEOUT_DEPTH`` documents came back), ``partial`` (2%: every other document
    missing, an index shard did not answer), ``fallback`` (1%: a fallback ranker's list, the
    same documents in random order), else ``ok``. Columns: query_id, doc_id, score, system,
    status."""
    runs = []
    for k in seeds:
        run = simulate_external_run(data, seed + 1000 * k, depth, f"{system}@seed{k}",
                                    keep=0.8, noise=1.3)
        rng = np.random.default_rng([seed, k, 104_729])
        ids = run[S.QUERY_ID].unique()
        status = pd.Series(rng.choice([*STATUS_SHARES, "ok"], size=len(ids), p=[
            *STATUS_SHARES.values(), 1 - sum(STATUS_SHARES.values())]), index=ids)
        run = run.assign(status=status.loc[run[S.QUERY_ID]].to_numpy())
        position = run.groupby(S.QUERY_ID).cumcount()
        lost = (((run["status"] == "timeout") & (position >= TIMEOUT_DEPTH))
                | ((run["status"] == "partial") & (position % 2 == 1)))
        run = run[~lost]
        shuffled = run["status"] == "fallback"
        run.loc[shuffled, S.SCORE] = rng.uniform(-3.0, 3.0, int(shuffled.sum())).round(6)
        runs.append(run.sort_values([S.QUERY_ID, S.SCORE], ascending=[True, False],
                                    kind="stable"))
    return pd.concat(runs, ignore_index=True)
