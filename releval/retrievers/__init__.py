"""The one registry of retrieval routes: ``ROUTES`` maps a route name to its retriever class.

A route class takes its parameters as keyword arguments and implements ``base.Retriever``;
a new route (dense, hybrid, external) registers by adding one entry to ``ROUTES``.
"""

from __future__ import annotations

import inspect

from releval.errors import InputError
from releval.retrievers.base import Candidates, Retriever, run_stats
from releval.retrievers.bm25 import BM25Retriever
from releval.retrievers.dense import DenseRetriever
from releval.retrievers.external import ExternalRetriever

ROUTES: dict[str, type] = {
    "bm25": BM25Retriever,
    "dense": DenseRetriever,
    "external": ExternalRetriever,
}


def make_retriever(route: str, **params) -> Retriever:
    """A retriever for ``route`` built with ``params``; InputError for an unknown route or
    a parameter the route does not take."""
    cls = ROUTES.get(route)
    if cls is None:
        raise InputError(f"unknown route {route!r}; known routes: {', '.join(sorted(ROUTES))}",
                         "route")
    try:
        inspect.signature(cls).bind(**params)
    except TypeError as exc:
        raise InputError(f"{route}: {exc}", "route") from None
    return cls(**params)


__all__ = ["ROUTES", "BM25Retriever", "Candidates", "DenseRetriever", "ExternalRetriever",
           "Retriever",
           "make_retriever", "run_stats"]
