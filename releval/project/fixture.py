"""The pinned fixture: every system evaluated on a frozen corpus, topics and judgments.

The live window changes every run (new queries, a new corpus snapshot), so a change there
may be the system's or the traffic's. The fixture does not change: a change of a system's
figure on it is the system's (code, model, params). Each run evaluates, on the fixture's
whole topic set: each candidate system's route searched over the fixture corpus at
``candidates.depth`` (``releval.retrieval.routes.search``), each fused system as its sources'
windows fused with the choice stage ``fuse`` froze on the live window (its run_stats.json),
and ``compare.measures`` (with ``evaluate.rel``, grades 0..``prepare.max_grade``) against
the fixture's visible judgments; per system and measure the mean over defined queries and
its percentile-bootstrap CI. A system that replays a file (``route: external``) or learns
from an interaction log cannot search the fixture: it is listed with why.
"""

from __future__ import annotations

import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import RealData, read_beir, read_tables
from releval.data.visibility import judgments_of
from releval.decision.stats import mean_ci
from releval.metrics.engine import evaluate
from releval.params import Params
from releval.retrieval.fusion import fuse
from releval.retrieval.routes import route_of, search

READERS = {"beir": read_beir, "tables": read_tables}
NONE = pd.DataFrame({S.SYSTEM: pd.Series(dtype="str"), S.QUERY_ID: pd.Series(dtype="str"),
                     S.MEASURE: pd.Series(dtype="str"), S.VALUE: pd.Series(dtype="float64")})
"""The per-query table of no system."""


def read(path: str, source: str) -> RealData:
    """The fixture folder through its reader (``fixture.source``)."""
    return READERS[source](path)


def _unsearchable(p: Params, name: str) -> str | None:
    route = route_of(p.candidates.systems[name].route)
    if route.needs_history:
        return f"route {p.candidates.systems[name].route} learns from an interaction log"
    if route.exact is None:
        return f"route {p.candidates.systems[name].route} replays a run file: no route to " \
               "search the fixture with"
    return None


def runs(p: Params, data: RealData, fusions: dict[str, dict]) -> tuple[dict, dict]:
    """(system -> its run on the fixture, system -> why it has none); ``fusions``: each fused
    system's frozen choice."""
    found, skipped = {}, {}
    for name, system in p.candidates.systems.items():
        why = _unsearchable(p, name)
        if why:
            skipped[name] = why
            continue
        found[name] = search(system, data.documents, data.queries, p.candidates.depth).run
    for name in p.fusion.systems:
        missing = [s for s in p.sources(name) if s not in found]
        if missing:
            skipped[name] = f"fuses {', '.join(missing)}, which cannot search the fixture"
            continue
        found[name] = fuse({s: found[s] for s in p.sources(name)}, p.candidates.depth,
                           fusions[name])
    return found, skipped


def evaluate_fixture(p: Params, data: RealData, fusions: dict[str, dict]
                     ) -> tuple[pd.DataFrame, dict]:
    """(per-query values: system, query_id, measure, value; the summary: queries, documents,
    judgments, per system and measure mean / ci_low / ci_high / n / n_undefined, and the
    systems left out with why)."""
    found, skipped = runs(p, data, fusions)
    topics = data.queries[S.QUERY_ID]
    qrels, visible = judgments_of(data.qrels, data.queries, data.documents, topics)
    frames, systems = [], {}
    for name, run in found.items():
        result = evaluate(run, qrels[visible], p.compare.measures, rel=p.evaluate.rel,
                          max_grade=p.prepare.max_grade, queries=topics)
        per_query = result.per_query.assign(**{S.SYSTEM: name})
        frames.append(per_query[[S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE]])
        systems[name] = {str(measure): mean_ci(rows[S.VALUE].to_numpy(),
                                               resamples=p.compare.resamples,
                                               alpha=p.compare.alpha, seed=p.base.seed)
                         for measure, rows in per_query.groupby(S.MEASURE, sort=False)}
    summary = {"queries": int(len(topics)), "documents": int(len(data.documents)),
               "judgments": int(visible.sum()), "systems": systems, "not_applicable": skipped}
    return pd.concat([NONE, *frames], ignore_index=True), summary
