"""Stage ``candidates@<system>``: one system's candidate window for every query.

Outputs (data/candidates/<system>/): run.parquet per the run contract (system, route,
query_id, doc_id, rank, score), latency.parquet (query_id, latency_ms; NaN where not
measured; status: the query's outcome, NaN where not recorded), run_stats.json (latency
percentiles, candidates per query, statuses) and seeds.parquet: a system trained with
several seeds (an external run's ``seeds``: the tags ``<system>@seed<k>``) has every seed's
window there (the run columns + ``seed``), and its first seed's in run.parquet, the model
that would ship; empty with its columns otherwise. Every route applies the visibility rule
to its whole window (``releval.retrieval.routes``). In recommendation mode the routes that
need it learn from the interaction log (``releval.data.history.History``), and a run whose
route gives P(relevant) keeps it as a ``probability`` column after the run columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from releval import executor
from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.history import History
from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import pinned
from releval.retrieval.base import latency_table, run_stats
from releval.retrieval.routes import search


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``candidates.<field>`` (``releval.artifacts``)."""

    run: pd.DataFrame
    stats: dict
    latency: pd.DataFrame
    seeds: pd.DataFrame


@dataclass(frozen=True)
class Inputs:
    """system: the stage's item; interactions: prepare's log (empty for a retrieval
    source)."""

    system: str = ""
    documents: pd.DataFrame = reads("raw.documents")
    queries: pd.DataFrame = reads("raw.queries")
    interactions: pd.DataFrame = reads("raw.interactions")


def run(p: Params, inputs: Inputs) -> Outputs:
    """``system``'s window for every query; in recommendation mode ``interactions`` is the
    history of the routes. With ``base.executor: dask`` a route with a sharded search
    (``Route.sharded``) runs it over ``base.shards`` on the active executor: the same
    window, searched shard by shard."""
    with executor.of(p):
        return _window(p, inputs)


def _window(p: Params, inputs: Inputs) -> Outputs:
    system, documents, queries = inputs.system, inputs.documents, inputs.queries
    interactions = inputs.interactions
    if system not in p.candidates.systems:
        raise InputError(f"no system {system!r} in candidates.systems "
                         f"({', '.join(p.candidates.systems)})", "params")
    config = p.candidates.systems[system]
    if getattr(config, "path", None):  # a team's run file: read the pinned copy
        config = config.model_copy(
            update={"path": str(pinned(p, f"candidates.systems.{system}.path"))})
    history = (History.of(interactions, queries, p.recommend.exclude_seen)
               if p.recommendation else None)
    shards = p.base.shards if p.base.executor == "dask" else None
    settings = config.model_dump()
    route = settings.pop("route")
    per_seed = config.per_seed(system) if hasattr(config, "per_seed") else {}
    found = {k: search(c, documents, queries, p.candidates.depth, history=history,
                       shards=shards) for k, c in (per_seed or {None: config}).items()}
    shipped = next(iter(found.values()))
    columns = [*S.RUN_COLUMNS, *([S.PROBABILITY] if S.PROBABILITY in shipped.run.columns
                                 else [])]
    run_table = shipped.run.assign(**{S.SYSTEM: system, S.ROUTE: route})[columns]
    seeds = pd.concat([run_table.iloc[:0].assign(**{S.SEED: pd.Series([], dtype="int64")}),
                       *(f.run.assign(**{S.SYSTEM: system, S.ROUTE: route, S.SEED: k})
                         [[*columns, S.SEED]] for k, f in found.items() if k is not None)],
                      ignore_index=True)
    stats = run_stats(shipped, queries) | {"system": system, "route": route,
                                           "depth": p.candidates.depth, "params": settings}
    if per_seed:
        stats["seeds"] = {"seeds": list(per_seed), "shipped": next(iter(per_seed)),
                          "candidates": {str(k): int(len(f.run)) for k, f in found.items()}}
    return Outputs(run_table, stats,
                   latency_table(queries, shipped.latency_ms, shipped.status), seeds)


def line(p: Params, result: Outputs) -> str:
    return (f"candidates@{result.stats['system']}: {len(result.run):,} candidates for "
            f"{result.run[S.QUERY_ID].nunique():,} queries")
