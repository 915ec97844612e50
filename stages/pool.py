"""Stage ``pool``: the top candidates of the pooled systems, blinded for judges.

Pools the top ``pool.depth`` of each system in ``pool.systems`` for the ``pool.splits``
queries; a system trained with several seeds (candidates' seeds.parquet) pools every seed's
window. The pool persists between runs (a pool with another seed, depth or corpus, or any
pool in recommendation mode, starts afresh): when a system joins, only its pairs not yet in
the pool are added (a new round), so nothing is judged twice. Outputs (data/pool/):
pool.parquet, identity.json, and for judges the pairs of the latest round (what is left to
judge) as judging.csv, label_studio_tasks.json and label_config.xml (shuffled per query;
never systems, ranks or scores). ``pool.systems: []`` pools nothing (``no_pool``: a project
judged by the dataset's own qrels, e.g. team runs without a corpus).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.split import queries_in
from releval.judging.guidelines import load_guideline
from releval.judging.pooling import (
    Pool,
    corpus_digest,
    grow_pool,
    label_config,
    label_studio_tasks,
    pool_id_of,
    to_judge,
    write_label_studio,
)
from releval.params import Params
from stages.common import written_with


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``pool.<field>`` (``releval.artifacts``); identity carries the
    guideline version."""

    pool: pd.DataFrame
    identity: dict
    judging: pd.DataFrame
    tasks: list[dict] = written_with(write_label_studio)
    label_config: str


@dataclass(frozen=True)
class Inputs:
    """runs, seeds: each candidate system's run and its training seeds' windows; previous:
    the pool as the last run left it (None: none)."""

    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="candidate")
    documents: pd.DataFrame = reads("raw.documents")
    queries: pd.DataFrame = reads("raw.queries")
    split: pd.DataFrame = reads("split.split")
    previous: pd.DataFrame | None = reads("pool.pool", dep=False)
    seeds: dict[str, pd.DataFrame] = reads("candidates.seeds", each="candidate", optional=True)


def run(p: Params, inputs: Inputs) -> Outputs:
    """The pool (incremental over ``previous`` when it is the same pool) and its export. In
    recommendation mode the log's future is the judge and the user-queries change with the
    protocol (cuts, horizon): the pool starts afresh every run."""
    documents, queries, split = inputs.documents, inputs.queries, inputs.split
    previous = None if p.recommendation else inputs.previous
    runs = pooled_runs(p, inputs.runs, inputs.seeds or {})
    guideline = load_guideline(p.pool.guideline)
    pool = (grow_pool(runs, documents, queries_in(split, p.pool.splits), p.pool.depth,
                      p.base.seed, previous) if runs else
            no_pool(documents, p.pool.depth, p.base.seed))
    export = to_judge(pool, documents, queries, p.base.seed)
    return Outputs(pool.table, pool.identity | {"guideline": guideline.version}, export,
                   label_studio_tasks(export, guideline), label_config(guideline))


def no_pool(documents: pd.DataFrame, depth: int, seed: int) -> Pool:
    """The pool of ``pool.systems: []``: no pair, no round (the qrels are the dataset's own,
    nothing goes to judges); its identity names no system, so no system counts as pooled."""
    digest = corpus_digest(documents)
    table = pd.DataFrame({S.POOL_ID: pd.Series(dtype=str), S.QUERY_ID: pd.Series(dtype=str),
                          S.DOC_ID: pd.Series(dtype=str), S.BLIND_ID: pd.Series(dtype=str),
                          S.SYSTEMS: pd.Series(dtype=object),
                          S.MIN_RANK: pd.Series(dtype="int64"),
                          S.ROUND: pd.Series(dtype="int64")})
    return Pool(table.loc[:, list(S.POOL_COLUMNS)],
                {S.POOL_ID: pool_id_of(seed, depth, digest), "seed": seed, "depth": depth,
                 "corpus_digest": digest, "systems": [], "pairs": 0, "rounds": [],
                 "note": "pool.systems is empty: nothing pooled, nothing to judge"})


def pooled_runs(p: Params, runs: dict[str, pd.DataFrame],
                seeds: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Each ``pool.systems`` entry's run, and for a system trained with several seeds each
    seed's window from its seeds.parquet as ``<system>@seed<k>``."""
    pooled = {}
    for system in p.pooled():
        pooled[system] = runs[system]
        if system in seeds and not seeds[system].empty:
            for k, window in seeds[system].groupby(S.SEED, sort=True):
                pooled[f"{system}@seed{k}"] = window.drop(columns=S.SEED)
    return pooled


def line(p: Params, result: Outputs) -> str:
    rounds = result.pool[S.ROUND].value_counts().sort_index()
    return (f"pool {result.identity[S.POOL_ID]}: {len(result.pool):,} pairs "
            f"({json.dumps({int(k): int(v) for k, v in rounds.items()})} per round)")
