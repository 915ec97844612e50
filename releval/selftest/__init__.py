"""The evaluator's self-test: metamorphic relations of every configured route, of fusion and
of the evaluator, which need no judgments of their own.

``RELATIONS`` is the one registry (name -> ``relation.Relation``), assembled from one module
per subject: ``lexical`` (BM25), ``routes`` (every route with a scorer), ``dense``,
``fusion`` and ``evaluator``. ``selftest`` builds the cases from the configured systems and
returns one row per (system, relation): system, route, relation, statement (what must
hold), precondition, trials, reached, passed, failed, ok, status and example. Status is
``passed``, ``failed``, ``unreached`` (no trial reached the relation's branch: it fails) or
``not_applicable`` (ok is NA and example says why, e.g. a team's run file has no scorer to
re-run); example is the first failure.

The corpus is a sample of at most ``selftest.max_docs`` documents that keeps every judged
document of the evaluator's queries; retrieval trials are windows of its documents, and the
trials of a route that needs history are users-as-queries (``generators``). A project
without a corpus (``prepare.source: runs``) has only team runs: their relations are n/a (no
scorer), and the evaluator's run is its judged documents in a seeded order (``judged_run``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.history import History
from releval.errors import InputError
from releval.params import Params
from releval.retrieval.routes import FUSED, exact, route_of
from releval.selftest import dense, evaluator, fusion, lexical, routes
from releval.selftest.cases import OWN, EvaluatorCase, FusionCase, RouteCase, Subjects, stream
from releval.selftest.generators import corpus_sample, user_queries, window_queries
from releval.selftest.relation import NOT_APPLICABLE, PASSED, Relation, Tally

RELATIONS: dict[str, Relation] = {r.name: r for module in (lexical, routes, dense, fusion,
                                                          evaluator)
                                  for r in module.RELATIONS}
COLUMNS = (S.SYSTEM, S.ROUTE, "relation", "statement", "precondition", "trials", "reached",
           "passed", "failed", "ok", "status", "example")
EVALUATOR, EVALUATE = "evaluator", "evaluate"  # the evaluator's system and route names
NO_SCORER = ("a team's run file (route external) has no scorer to re-run: its relations do "
             "not apply")


def _row(system: str, route: str, relation: Relation, tally: Tally, note: str = "") -> dict:
    return {S.SYSTEM: system, S.ROUTE: route, "relation": relation.name,
            "statement": relation.statement, "precondition": relation.precondition + note,
            "trials": tally.trials, "reached": tally.reached, "passed": tally.passed,
            "failed": tally.failed,
            "ok": pd.NA if not tally.applicable else tally.status == PASSED,
            "status": tally.status, "example": tally.example}


class _Plan:
    """The corpus sample, the trials and the evaluator's queries of one self-test."""

    def __init__(self, p: Params, documents: pd.DataFrame, queries: pd.DataFrame,
                 judgments: pd.DataFrame, interactions: pd.DataFrame):
        c, rng = p.selftest, stream(p.base.seed, "sample")
        self.p, self.queries = p, queries
        relevant = judgments[(judgments[S.GRADE] >= p.evaluate.rel)
                             & judgments[S.QUERY_ID].isin(queries[S.QUERY_ID])]
        judged = np.sort(relevant[S.QUERY_ID].astype(str).unique())
        self.judged = np.sort(rng.choice(judged, size=min(c.trials, len(judged)), replace=False))
        self.qrels = judgments.loc[judgments[S.QUERY_ID].isin(self.judged),
                                   [S.QUERY_ID, S.DOC_ID, S.GRADE]].reset_index(drop=True)
        keep = [*self.qrels[S.DOC_ID]]
        self.log, self.history, self.users = None, None, None
        if p.recommendation:
            self.log = interactions
            self.history = History.of(interactions, queries, p.recommend.exclude_seen)
            self.users = user_queries(queries, self.history, c.trials, rng)
            keep += [*self.history.profile(self.users)[S.ITEM_ID]]
        self.documents = corpus_sample(documents, c.max_docs, rng, keep)
        self.windows = window_queries(self.documents, c.trials, rng)

    def case(self, system: str, config, build) -> RouteCase:
        needs = route_of(config.route).needs_history
        return RouteCase(system, config, exact(config), self.documents,
                         self.users if needs else self.windows, self.p.candidates.depth,
                         self.p.base.seed, build, self.log if needs else None,
                         self.p.recommend.exclude_seen,
                         self.history.held_out if needs else frozenset())


def _chosen(relations: Iterable[str] | None) -> list[Relation]:
    names = list(RELATIONS) if relations is None else list(relations)
    unknown = [n for n in names if n not in RELATIONS]
    if unknown:
        raise InputError(f"unknown relation(s) {unknown}; known: {', '.join(RELATIONS)}",
                         "selftest")
    return [RELATIONS[n] for n in names]


def _route_rows(p: Params, plan: _Plan, chosen: list[Relation], build,
                cases: dict[str, RouteCase]) -> list[dict]:
    """The rows of every candidates system; ``cases`` collects the systems searched."""
    rows = []
    for system, config in p.candidates.systems.items():
        route = route_of(config.route)
        fitting = [r for r in chosen if r.subject == "route" and r.fits(config.route)]
        reason = NO_SCORER if route.exact is None else (
            f"route {config.route} learns from an interaction log, and there is none "
            "(prepare.source interactions or recsys_demo)"
            if route.needs_history and not p.recommendation else "")
        if reason:
            rows += [_row(system, config.route, r, Tally.not_applicable(reason))
                     for r in fitting]
            continue
        case = cases[system] = plan.case(system, config, build)
        note = ("" if case.config == config else
                "; searched with the system's exact settings (its index is approximate)")
        rows += [_row(system, config.route, r, r.check(case), "" if r.own_settings else note)
                 for r in fitting]
    return rows


def _fusion_rows(p: Params, chosen: list[Relation], fuse,
                 cases: dict[str, RouteCase]) -> list[dict]:
    rows = []
    fitting = [r for r in chosen if r.subject == "fusion"]
    for system, config in p.fusion.systems.items() if fitting else ():
        sources = p.sources(system)
        missing = [s for s in sources if s not in cases]
        if missing:
            reason = f"source(s) {', '.join(missing)} cannot be searched (their rows say why)"
            rows += [_row(system, FUSED, r, Tally.not_applicable(reason)) for r in fitting]
            continue
        ids = pd.unique(np.concatenate([cases[s].queries[S.QUERY_ID].to_numpy()
                                        for s in sources]))
        case = FusionCase(system, config, {s: cases[s].base for s in sources}, ids,
                          p.candidates.depth, p.base.seed, fuse)
        rows += [_row(system, FUSED, r, r.check(case)) for r in fitting]
    return rows


def judged_run(qrels: pd.DataFrame, seed: int) -> pd.DataFrame:
    """A run of each query's judged documents in a seeded random order (ranks 1..n, scores
    n..1): the evaluator's run where no system has a scorer to produce one and no corpus to
    draw from (a runs-only project); the relations check the evaluator, not the run."""
    order = stream(seed, "judged_run").permutation(len(qrels))
    run = qrels.iloc[order][[S.QUERY_ID, S.DOC_ID]].reset_index(drop=True)
    rank = run.groupby(S.QUERY_ID, sort=False).cumcount() + 1
    return run.assign(**{S.RANK: rank.astype("int64"), S.SCORE: -rank.astype(float)})


def _evaluator_rows(p: Params, plan: _Plan, chosen: list[Relation], evaluate,
                    cases: dict[str, RouteCase]) -> list[dict]:
    """The evaluator's rows, on a run of the first system searched (module docstring)."""
    fitting = [r for r in chosen if r.subject == "evaluator"]
    if not fitting:
        return []
    if not len(plan.judged):
        none = Tally.not_applicable(f"no query has a judgment of grade ≥ {p.evaluate.rel}")
        return [_row(EVALUATOR, EVALUATE, r, none) for r in fitting]
    first = next(iter(cases.values()), None)
    asked = plan.queries[plan.queries[S.QUERY_ID].isin(plan.judged)].reset_index(drop=True)
    run = (judged_run(plan.qrels, p.base.seed) if first is None and p.runs_only else
           None if first is None else first.search(queries=asked))
    case = EvaluatorCase(run, plan.qrels, plan.judged, tuple(p.evaluate.measures),
                         p.evaluate.rel, p.prepare.max_grade, p.base.seed, evaluate)
    return [_row(EVALUATOR, EVALUATE, r, r.check(case)) for r in fitting]


def selftest(p: Params, documents: pd.DataFrame, queries: pd.DataFrame,
             judgments: pd.DataFrame, interactions: pd.DataFrame,
             subjects: Subjects = OWN,
             relations: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per (system, relation) that fits the system's route (module docstring), for
    ``relations`` (default: all), testing ``subjects`` (default: releval's own)."""
    chosen = _chosen(relations)
    plan = _Plan(p, documents, queries, judgments, interactions)
    cases: dict[str, RouteCase] = {}
    rows = [*_route_rows(p, plan, chosen, subjects.retriever, cases),
            *_fusion_rows(p, chosen, subjects.fuse, cases),
            *_evaluator_rows(p, plan, chosen, subjects.evaluate, cases)]
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype({"ok": "boolean"})


def totals(rows: pd.DataFrame) -> dict:
    """The self-test's totals, overall and per system: relations that apply, their trials,
    reached, passed, failed, not_passed (failed or unreached), not_applicable and ok (every
    relation that applies passed; per system None when none applies, overall False: zero
    work is not a pass)."""
    def count(part: pd.DataFrame) -> dict:
        applies = part[part["status"] != NOT_APPLICABLE]
        passed = applies["ok"].astype(bool)
        return {"relations": len(applies), "trials": int(applies["trials"].sum()),
                "reached": int(applies["reached"].sum()),
                "passed": int(applies["passed"].sum()), "failed": int(applies["failed"].sum()),
                "not_passed": int((~passed).sum()), "not_applicable": len(part) - len(applies),
                "ok": bool(passed.all()) if len(applies) else None}
    overall = count(rows)
    return overall | {"ok": bool(overall["ok"]), "systems": {
        system: count(part) for system, part in rows.groupby(S.SYSTEM, sort=False)}}
