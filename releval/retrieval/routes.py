"""The one registry of retrieval routes: ``ROUTES`` maps a route name to its ``Route``.

A route is one module of this package holding its retriever class (``base.Retriever``, built
from its params model's fields), registered here with its traits and its params model (an
entry of ``candidates.systems``, tagged ``route: <name>``), which lives in the leaf
``releval.params.systems`` (``SYSTEMS``) so that reading params never imports a search.
Adding a route = its module, its model in ``SYSTEMS`` and one entry here; the failure
analysis (exact re-search, ANN blame) and the comparison conditions (visibility) read the
traits. A fused window (stage fuse) has route ``FUSED``; its traits are its two sources'.
The recommendation routes (popularity, cooccurrence, content) need the interaction log:
``search`` passes them the ``History``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from releval.data.history import History
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.params.executor import Shards
from releval.params.systems import SYSTEMS
from releval.retrieval.base import Candidates, Retriever
from releval.retrieval.bm25 import BM25Retriever
from releval.retrieval.bm25_shards import search_sharded as bm25_sharded
from releval.retrieval.content import ContentRetriever
from releval.retrieval.cooccurrence import CooccurrenceRetriever
from releval.retrieval.dense import DenseRetriever
from releval.retrieval.dense_shards import search_sharded as dense_sharded
from releval.retrieval.external import ExternalRetriever
from releval.retrieval.popularity import PopularityRetriever
from releval.section import Section

FUSED = "hybrid"


@dataclass(frozen=True)
class Route:
    """One route's traits.

    ``params``: its system model; ``retriever``: its class, built with the model's fields;
    ``enforces_visibility``: it drops from its whole window what the query may not see (else
    it only flags it); ``exact``: the settings that make its search exact (``{}``: it is
    exact; None: it has no scorer to re-run, e.g. a team's run file); ``ann_knobs``: the
    approximate index's settings, which do not change an exact search; ``needs_history``:
    it learns from the interaction log (``index(documents, history)``); ``sharded``: its
    sharded search over document shards on the active executor (``shards.py``), equal to
    the single-index search, or None when it has none; ``extra``: the install extra its
    scorer needs beyond the pipeline's (``releval.extras``), or None.
    """

    params: type[Section]
    retriever: type[Retriever]
    enforces_visibility: bool
    exact: dict | None
    ann_knobs: tuple[str, ...] = ()
    needs_history: bool = False
    sharded: Callable | None = None
    extra: str | None = None


ROUTES: dict[str, Route] = {
    "bm25": Route(SYSTEMS["bm25"], BM25Retriever, enforces_visibility=True, exact={},
                  sharded=bm25_sharded),
    "dense": Route(SYSTEMS["dense"], DenseRetriever, enforces_visibility=True,
                   exact={"index": "exact"},
                   ann_knobs=("index", "hnsw_m", "ef_search", "ef_construction", "nlist",
                              "nprobe", "ann_sample"),
                   sharded=dense_sharded, extra="dense"),
    "external": Route(SYSTEMS["external"], ExternalRetriever, enforces_visibility=False,
                      exact=None),
    "popularity": Route(SYSTEMS["popularity"], PopularityRetriever, enforces_visibility=True,
                        exact={}, needs_history=True),
    "cooccurrence": Route(SYSTEMS["cooccurrence"], CooccurrenceRetriever, enforces_visibility=True,
                          exact={}, needs_history=True),
    "content": Route(SYSTEMS["content"], ContentRetriever, enforces_visibility=True, exact={},
                     needs_history=True, extra="dense"),
}

def route_of(name: str) -> Route:
    route = ROUTES.get(name)
    if route is None:
        raise InputError(f"unknown route {name!r}; known routes: {', '.join(sorted(ROUTES))}",
                         "route")
    return route


def make_retriever(route: str, **params) -> Retriever:
    """A retriever for ``route`` built with ``params``; InputError for an unknown route or
    a parameter the route does not take."""
    cls = route_of(route).retriever
    try:
        inspect.signature(cls).bind(**params)
    except TypeError as exc:
        raise InputError(f"{route}: {exc}", "route") from None
    return cls(**params)


def search(config: Section, documents: pd.DataFrame, queries: pd.DataFrame, depth: int,
           visibility: Visibility | None = None, history: History | None = None,
           shards: Shards | None = None) -> Candidates:
    """``config``'s route built from its settings, indexed on ``documents`` (and ``history``
    for a route that needs it: InputError without one) and searched for ``queries`` to
    ``depth`` under ``visibility`` (built from ``documents`` when not given). With
    ``shards``, a route that has a sharded search runs it on the active executor (the same
    windows, ``Route.sharded``); the others search one index."""
    settings = config.model_dump()
    name = settings.pop("route")
    settings.pop("seeds", None)  # a seed list is searched one seed at a time (per_seed)
    route = route_of(name)
    if shards is not None and route.sharded is not None:
        return route.sharded(config, documents, queries, depth, shards)
    needs_history = route.needs_history
    if needs_history and history is None:
        raise InputError(f"route {name} recommends from an interaction log, and there is none "
                         "(prepare.source interactions or recsys_demo)", "route")
    retriever = make_retriever(name, **settings)
    if needs_history:
        retriever.index(documents, history)
    else:
        retriever.index(documents)
    return retriever.search(queries, depth, visibility or Visibility(documents))


def exact(config: Section) -> Section | None:
    """``config`` with its route's exact settings (e.g. a dense index forced to exact); None
    when the route has no exact scorer."""
    overrides = route_of(config.route).exact
    return None if overrides is None else config.model_copy(update=overrides)


def approximate(config: Section) -> bool:
    """The system searches an approximate index (its settings differ from the exact ones)."""
    scorer = exact(config)
    return scorer is not None and scorer != config


def scorer_key(config: Section) -> str:
    """Equal for systems whose exact searches are the same (settings but the ANN knobs)."""
    knobs = route_of(config.route).ann_knobs
    return json.dumps({k: v for k, v in config.model_dump().items() if k not in knobs},
                      sort_keys=True, default=str)
