"""What the relations check: the subjects (injectable) and one case per subject under test.

``Subjects`` holds the three subjects, releval's own by default: a factory that builds an
(unindexed) retriever from a system's settings, the fusion function and the evaluator; the
tests pass broken ones to show each relation goes red. A ``RouteCase`` is one configured
system's route on the corpus sample and the trial queries, a ``FusionCase`` one fused system
over its two sources' windows of those queries, an ``EvaluatorCase`` the evaluator on a run
of judged queries.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.history import History
from releval.data.visibility import Visibility
from releval.metrics.engine import Evaluation, evaluate
from releval.retrieval.base import Retriever
from releval.retrieval.fusion import fuse
from releval.retrieval.routes import make_retriever, route_of
from releval.section import Section
from releval.selftest.relation import WINDOW


def build_retriever(config: Section) -> Retriever:
    """An unindexed retriever of ``config``'s route with its settings."""
    settings = config.model_dump()
    return make_retriever(settings.pop("route"), **settings)


@dataclass(frozen=True)
class Subjects:
    """The subjects under test: ``retriever`` (settings -> unindexed retriever), ``fuse``
    (``fusion.fuse``'s signature) and ``evaluate`` (``metrics.evaluate``'s)."""

    retriever: Callable[[Section], Retriever] = build_retriever
    fuse: Callable[[dict, int, dict], pd.DataFrame] = fuse
    evaluate: Callable[..., Evaluation] = evaluate


OWN = Subjects()  # releval's own subjects


def stream(seed: int, name: str) -> np.random.Generator:
    """A generator of its own for ``name`` under ``seed``: a relation's draws do not depend
    on which other relations ran."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


@dataclass
class RouteCase:
    """One system's route under test.

    ``settings``: the system's own; ``config``: the settings searched (the exact ones of an
    approximate system: its ANN side is held to them by a relation of its own);
    ``documents``: the corpus sample; ``queries``: the trial queries; ``log``: the
    interaction log of a route that needs history (with ``exclude_seen`` and the
    ``held_out`` users), else None.
    """

    system: str
    settings: Section
    config: Section
    documents: pd.DataFrame
    queries: pd.DataFrame
    depth: int
    seed: int
    build: Callable[[Section], Retriever] = build_retriever
    log: pd.DataFrame | None = None
    exclude_seen: bool = True
    held_out: frozenset[str] = field(default_factory=frozenset)

    @property
    def route(self) -> str:
        return self.config.route

    def retriever(self, documents: pd.DataFrame | None = None, config: Section | None = None,
                  log: pd.DataFrame | None = None) -> Retriever:
        """A retriever of ``config`` (default: the case's) indexed on ``documents`` (default:
        the sample) and, for a route that needs it, the history of ``log``."""
        documents = self.documents if documents is None else documents
        retriever = self.build(self.config if config is None else config)
        if route_of(self.route).needs_history:
            log = self.log if log is None else log
            retriever.index(documents, History(log, self.exclude_seen, self.held_out))
        else:
            retriever.index(documents)
        return retriever

    @property
    def shallow(self) -> int:
        """⌈depth / 10⌉: a depth at which the trials' windows are mostly full."""
        return -(-self.depth // 10)

    @cached_property
    def indexed(self) -> Retriever:
        return self.retriever()

    def search(self, queries: pd.DataFrame | None = None, depth: int | None = None,
               documents: pd.DataFrame | None = None,
               retriever: Retriever | None = None) -> pd.DataFrame:
        """The windows (query_id, doc_id, rank, score) of ``queries`` (default: the trials) at
        ``depth`` (default: the case's), from ``retriever`` (default: the indexed one) under
        the visibility of ``documents`` (default: the sample; the same doc_ids in the same
        order as the indexed table)."""
        documents = self.documents if documents is None else documents
        queries = self.queries if queries is None else queries
        column = getattr(self.config, "query_field", S.TEXT)
        if column not in queries.columns:  # a dense route reading another column
            queries = queries.assign(**{column: queries[S.TEXT]})
        found = (retriever or self.indexed).search(queries, depth or self.depth,
                                                   Visibility(documents))
        return found.run[WINDOW]

    @cached_property
    def base(self) -> pd.DataFrame:
        """The trials' windows at the case's depth."""
        return self.search()

    def window_sizes(self, run: pd.DataFrame | None = None) -> np.ndarray:
        """Per trial query, its window's length in ``run`` (default: ``base``)."""
        run = self.base if run is None else run
        return (run.groupby(S.QUERY_ID).size().reindex(self.queries[S.QUERY_ID], fill_value=0)
                .to_numpy())


@dataclass(frozen=True)
class FusionCase:
    """One fused system: its settings (``params.FusionSystem``) and its two sources' windows
    of the trial queries, keyed (lexical, dense) in that order."""

    system: str
    config: Section
    runs: dict[str, pd.DataFrame]
    query_ids: np.ndarray
    depth: int
    seed: int
    fuse: Callable[[dict, int, dict], pd.DataFrame] = fuse


@dataclass(frozen=True)
class EvaluatorCase:
    """The evaluator on ``run`` (None: no route could produce one) against ``qrels``
    (query_id, doc_id, grade) for ``query_ids`` (each with a judgment of grade ≥ ``rel``)."""

    run: pd.DataFrame | None
    qrels: pd.DataFrame
    query_ids: np.ndarray
    measures: tuple[str, ...]
    rel: int
    max_grade: int
    seed: int
    evaluate: Callable[..., Evaluation] = evaluate

    def values(self, run: pd.DataFrame, qrels: pd.DataFrame, query_ids=None,
               measures=None) -> pd.DataFrame:
        """The per-query values as a (query_id × measure) table over ``query_ids`` (default:
        the case's)."""
        ids = self.query_ids if query_ids is None else query_ids
        result = self.evaluate(run, qrels, list(measures or self.measures), rel=self.rel,
                               max_grade=self.max_grade, queries=list(ids))
        table = result.per_query.pivot(index=S.QUERY_ID, columns=S.MEASURE, values=S.VALUE)
        return table.reindex(index=pd.Index(ids, dtype=object))
