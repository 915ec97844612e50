"""One system's figure rebuilt from one revision's inputs, as a function of the corpus.

``Rebuild.of(p, system, measure, split, documents, queries, qrels, split_table)`` holds a
revision's params, queries, qrels and split; ``figure(documents)`` then rebuilds the system
on ``documents`` as the pipeline does: its route (for a fused system, each of its two
sources' routes) searched over the evaluated queries at ``candidates.depth``
(``releval.retrieval.routes.search``), a fused system's windows fused with its tuned choice
(``releval.retrieval.fusion.fuse``), and ``measure`` evaluated against the qrels each query
may see in ``documents`` (``evaluate.rel``, grades 0..``prepare.max_grade``;
``releval.metrics.evaluate``). The evaluated queries are those of ``split`` less the ones
tagged ``no_answer.tag`` (stage evaluate's rule); the figure is their mean, NaN where
undefined on every one.

The tuned choice is made once, as stage fuse makes it (the grid scored on the validation
split of the revision's own corpus, ``releval.retrieval.fusion.choose``), and then frozen:
the stage keeps it in run_stats.json, which DVC does not cache, so a past revision's choice
is made again from that revision's inputs.

``settings(p, system)`` are the params the figure depends on: two revisions whose settings
differ do not rebuild the same system. A route that replays a file (no scorer to re-run:
``Route.exact`` is None) and the recommendation routes (they learn from an interaction log)
cannot be rebuilt for another corpus: InputError.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.decision.no_answer import evaluated_queries
from releval.errors import InputError
from releval.metrics.engine import evaluate, resolve
from releval.params import Params
from releval.retrieval.fusion import choose, expand_grid, fuse
from releval.retrieval.routes import route_of, search


def windows(p: Params, system: str) -> tuple[str, ...]:
    """The candidate systems whose routes ``system`` searches: its two sources when it is
    fused, else itself; InputError when params define no such system."""
    if system not in p.candidates.systems and system not in p.fusion.systems:
        raise InputError(f"no system {system!r} in candidates.systems or fusion.systems "
                         f"({', '.join([*p.candidates.systems, *p.fusion.systems])})", "params")
    return p.sources(system) or (system,)


def settings(p: Params, system: str) -> dict[str, object]:
    """The params ``system``'s figure depends on, by dotted key."""
    out: dict[str, object] = {"candidates.depth": p.candidates.depth,
                              "evaluate.rel": p.evaluate.rel,
                              "prepare.max_grade": p.prepare.max_grade,
                              "no_answer.tag": p.no_answer.tag}
    if system in p.fusion.systems:
        out[f"fusion.systems.{system}"] = p.fusion.systems[system].model_dump()
    for name in windows(p, system):
        out[f"candidates.systems.{name}"] = p.candidates.systems[name].model_dump()
    return out


def _rebuildable(p: Params, system: str) -> tuple[str, ...]:
    if p.recommendation:
        raise InputError(f"prepare.source {p.prepare.source} is recommendation mode: its routes "
                         "learn from the interaction log, and drift rebuilds retrieval runs "
                         "on a corpus", "params")
    names = windows(p, system)
    for name in names:
        route = p.candidates.systems[name].route
        if route_of(route).exact is None:
            raise InputError(f"system {name} (route {route}) replays a run file: it cannot be "
                             "rebuilt for another corpus", "params")
    return names


@dataclass(frozen=True)
class Rebuild:
    """A system's figure as a function of the corpus, one revision's other inputs fixed
    (module docstring); ``fusion`` is the frozen tuned choice (None: not fused)."""

    p: Params
    system: str
    measure: str
    sources: tuple[str, ...]
    queries: pd.DataFrame
    qrels: pd.DataFrame
    evaluated: pd.Series
    fusion: dict | None

    @classmethod
    def of(cls, p: Params, system: str, measure: str, split: str, documents: pd.DataFrame,
           queries: pd.DataFrame, qrels: pd.DataFrame, split_table: pd.DataFrame) -> Rebuild:
        """The rebuild of ``system``'s ``measure`` on ``split``; a fused system's choice is
        tuned here, on ``documents`` (the revision's own corpus)."""
        sources = _rebuildable(p, system)
        if len(resolve([measure], p.evaluate.rel)) != 1:
            raise InputError(f"{measure!r} names several measures; drift follows one",
                             "measure")
        evaluated = evaluated_queries(split_table, queries, [split], p.no_answer.tag)[0]
        if evaluated.empty:
            raise InputError(f"no evaluated query in the {split} split", "split.parquet")
        rebuild = cls(p, system, measure, sources, queries, qrels, evaluated, None)
        if system not in p.fusion.systems:
            return rebuild
        c = p.fusion.systems[system]
        grid = [entry for method in c.methods
                for entry in expand_grid(method, c.rrf_k, c.weights, c.norms, sources)]
        validation = split_table.loc[split_table[S.SPLIT] == "validation", S.QUERY_ID]
        judged, visible = judgments_of(qrels, queries, documents, validation)
        best, _, _ = choose(rebuild.windows(documents, validation), judged[visible], validation,
                            p.candidates.depth, grid, c.objective, p.prepare.max_grade)
        return cls(p, system, measure, sources, queries, qrels, evaluated, best)

    def windows(self, documents: pd.DataFrame, query_ids: pd.Series) -> dict[str, pd.DataFrame]:
        """Each source's candidates on ``documents`` for the queries ``query_ids``."""
        asked = self.queries[self.queries[S.QUERY_ID].isin(query_ids)]
        return {name: search(self.p.candidates.systems[name], documents, asked,
                             self.p.candidates.depth).run for name in self.sources}

    def run(self, documents: pd.DataFrame) -> pd.DataFrame:
        """The system's run on ``documents`` for the evaluated queries."""
        found = self.windows(documents, self.evaluated)
        return (found[self.system] if self.fusion is None
                else fuse(found, self.p.candidates.depth, self.fusion))

    def figure(self, documents: pd.DataFrame) -> float:
        """The measure's value on ``documents`` (NaN: undefined on every evaluated query)."""
        judged, visible = judgments_of(self.qrels, self.queries, documents, self.evaluated)
        result = evaluate(self.run(documents), judged[visible], [self.measure],
                          rel=self.p.evaluate.rel, max_grade=self.p.prepare.max_grade,
                          queries=self.evaluated)
        return float(result.summary[S.VALUE].iloc[0])
