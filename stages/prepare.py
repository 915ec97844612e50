"""Stage ``prepare``: documents, queries and judgments from the demo generator or real data.

Outputs (data/raw/): documents.parquet, queries.parquet, judgments.parquet (query_id,
doc_id, grade, hard_negative: the data's explicit hard negatives, ``S.HARD_NEGATIVE``;
demo: the generator's; tables: the folder's judgments.parquet column when
it has one, checked; BEIR and recommendation mode: none; always written, False where nothing
is marked), given_split.parquet (a dataset's own split; empty when it has none),
must_not_return.parquet (query_id, doc_id, reason: pairs no system may return; demo: the
hidden answers of authz_boundary queries, tables: the folder's must_not_return.parquet if
any, BEIR: none; always written, empty with the contract's columns when there are none),
answers.parquet (query_id, source_id, doc_id: which unit holds each query's answer, known
only to the demo generator; empty for real data, so the chunk layer of failure analysis is
reported as unknown there), external_run.trec (the demo's simulated team run; empty for
real data), retrained_run.parquet (the demo's retrained team run, one tag per training seed,
with a per-query ``status``: ``releval.demo.team_run.simulate_retrained_run``; empty for real
data), interactions.parquet, team_runs.parquet and horizons.parquet (recommendation mode, below;
empty with their columns otherwise) and source.json (where the data and the qrels came from, and
the row counts).

Runs only (``prepare.source: runs``, no corpus): documents.parquet is empty (the contract's
columns), queries.parquet the queries file's (``prepare.queries``: ids, text, tags, times,
users) or else the query ids of the qrels and of the team's runs, judgments.parquet the qrels
of ``prepare.qrels``, given_split empty (every query test, or a forward split on the queries'
times); the rest as for real data (``releval.data.adapters.read_runs_only``).

Recommendation mode (``prepare.source`` interactions: a folder read by
``releval.data.interactions``; recsys_demo: ``releval.demo.recsys``; logged_feedback: the
impressions of ``offpolicy.log``, ``releval.data.feedback``): the split's cuts and
``recommend`` make the users queries (``user_queries``): documents are the items, queries
the users at each cut, judgments their positives, given_split the cut of each query;
interactions.parquet is the checked log (``S.INTERACTION_COLUMNS`` + the
``recommend.context`` columns), team_runs.parquet the demo's two simulated team systems
(``TEAM_COLUMNS``), horizons.parquet the user-queries and positives of each of
``recommend.horizons_days`` (``S.HORIZON_COLUMNS``); must_not_return, answers,
external_run.trec and retrained_run.parquet are empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import (
    TIME,
    RealData,
    dangling,
    no_must_not_return,
    read_beir,
    read_runs_only,
    read_tables,
)
from releval.data.feedback import as_interactions, users
from releval.data.interactions import cuts_of, horizon_rows, read_interactions, user_queries
from releval.data.readers import read_run
from releval.demo.answers import answer_map
from releval.demo.generator import generate
from releval.demo.recsys import RecDemo, generate_recsys, no_team_runs, team_runs
from releval.demo.team_run import SEEDS, simulate_external_run, simulate_retrained_run
from releval.errors import InputError
from releval.offpolicy.log import read_log
from releval.params import Params
from releval.project.inputs import INPUT_DIR, pinned


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``raw.<field>`` (``releval.artifacts``); external_run holds
    (query_id, doc_id, score[, system]), source the provenance, then the row counts."""

    documents: pd.DataFrame
    queries: pd.DataFrame
    judgments: pd.DataFrame
    given_split: pd.DataFrame
    answers: pd.DataFrame
    must_not_return: pd.DataFrame
    external_run: pd.DataFrame
    retrained_run: pd.DataFrame
    interactions: pd.DataFrame
    team_runs: pd.DataFrame
    source: dict
    horizons: pd.DataFrame = field(default_factory=lambda: horizon_rows(0, []))


NO_SPLIT = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str), S.SPLIT: pd.Series([], dtype=str)})
NO_RUN = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str), S.DOC_ID: pd.Series([], dtype=str),
                       S.SCORE: pd.Series([], dtype=float)})
NO_RETRAINED = NO_RUN.assign(**{S.SYSTEM: pd.Series([], dtype=str),
                               "status": pd.Series([], dtype=str)})
NO_ANSWERS = pd.DataFrame({c: pd.Series([], dtype=str) for c in S.ANSWER_COLUMNS})
NO_INTERACTIONS = pd.DataFrame({S.USER_ID: pd.Series([], dtype=str),
                                S.ITEM_ID: pd.Series([], dtype=str),
                                S.TIMESTAMP: pd.Series([], dtype=TIME),
                                S.LABEL: pd.Series([], dtype="int64")})


def _demo(p: Params, inputs: Path) -> Outputs:
    c = p.prepare
    data = generate(n_docs=c.n_docs, n_queries=c.n_queries, seed=p.base.seed, start=c.start,
                    months=c.months, tenants=c.tenants)
    return Outputs(data.documents, data.queries, data.ground_truth, NO_SPLIT,
                   answer_map(data.ground_truth, data.documents), data.must_not_return,
                   simulate_external_run(data, p.base.seed, p.candidates.depth),
                   simulate_retrained_run(data, p.base.seed, p.candidates.depth),
                   NO_INTERACTIONS, no_team_runs(),
                   {"source": "demo generator", "seed": p.base.seed,
                    "qrels": "generator ground truth",
                    "external_run": "simulated team system prod_v2 (demo only)",
                    "retrained_run": "simulated team system prod_v3, trained with seeds "
                                     f"{', '.join(map(str, SEEDS))} (demo only)"})


def _real(reader: Callable[[Path], RealData], label: str) -> Callable[[Params, Path], Outputs]:
    def load(p: Params, inputs: Path) -> Outputs:
        if not p.prepare.path:
            raise InputError(f"prepare.source={p.prepare.source} needs prepare.path", "params")
        path = pinned(p, "prepare.path", inputs)
        data = reader(path)
        points = dangling(data, p.prepare.max_unknown_docs, str(path))
        return Outputs(data.documents, data.queries, data.qrels, data.splits, NO_ANSWERS,
                       data.must_not_return, NO_RUN, NO_RETRAINED, NO_INTERACTIONS,
                       no_team_runs(),
                       {"source": f"{label} {p.prepare.path}", "qrels": f"{label} qrels",
                        "query_times": data.has_query_times, "qrels_pointing_nowhere": points})
    return load


def _runs(p: Params, inputs: Path) -> Outputs:
    """No corpus (``prepare.source: runs``): the pinned qrels and queries file, else the
    query ids of the qrels and of every team run (``candidates.systems.<s>.path``), and an
    empty documents table (``releval.data.adapters.read_runs_only``)."""
    qrels = pinned(p, "prepare.qrels", inputs)
    queries = pinned(p, "prepare.queries", inputs)
    ids = [] if queries is not None else [
        read_run(path)[S.QUERY_ID] for name in p.candidates.systems
        if (path := pinned(p, f"candidates.systems.{name}.path", inputs)) is not None]
    data = read_runs_only(qrels, queries, ids)
    points = dangling(data, 1.0, str(qrels))  # no corpus: every judged document is "unknown"
    points["unknown_documents"], points["first_unknown_document"] = 0, None
    return Outputs(data.documents, data.queries, data.qrels, data.splits, NO_ANSWERS,
                   data.must_not_return, NO_RUN, NO_RETRAINED, NO_INTERACTIONS, no_team_runs(),
                   {"source": f"runs judged by {p.prepare.qrels}"
                              + (f", queries {p.prepare.queries}" if p.prepare.queries else
                                 ", queries: the qrels' and runs' query ids"),
                    "qrels": "the dataset's own qrels", "documents_from": "none: no corpus "
                    "(the team's runs name the documents; nothing reads their text)",
                    "query_times": data.has_query_times, "qrels_pointing_nowhere": points})


def _users_as_queries(p: Params, log: pd.DataFrame, items: pd.DataFrame, source: dict,
                      demo: RecDemo | None = None) -> Outputs:
    """The recommendation tables of a checked log and item table (module docstring)."""
    r = p.recommend
    t1, t2 = cuts_of(log, p.split.method, p.split.cuts, p.split.quantiles)
    data = user_queries(log, items, t1, t2, r.horizon_days, r.exclude_seen, r.holdout_users,
                        r.context, p.base.seed, tuple(r.horizons_days))
    runs = (team_runs(demo, data, p.candidates.depth, r.exclude_seen, p.base.seed) if demo
            else no_team_runs())
    interactions = log[[*S.INTERACTION_COLUMNS, *r.context]].reset_index(drop=True)
    return Outputs(data.documents, data.queries, data.qrels, data.given_split, NO_ANSWERS,
                   no_must_not_return(), NO_RUN, NO_RETRAINED, interactions, runs,
                   source | {"qrels": f"label-1 interactions within {r.horizon_days} days of "
                             "each cut", "recommendation": data.report}, data.horizons)


def _interactions(p: Params, inputs: Path) -> Outputs:
    if not p.prepare.path:
        raise InputError(f"prepare.source={p.prepare.source} needs prepare.path", "params")
    log, items = read_interactions(pinned(p, "prepare.path", inputs))
    return _users_as_queries(p, log, items, {"source": f"interactions {p.prepare.path}"})


def _logged_feedback(p: Params, inputs: Path) -> Outputs:
    log = read_log(pinned(p, "offpolicy.log", inputs), slate_size=p.offpolicy.slate_size)
    interactions, items = as_interactions(log)
    return _users_as_queries(p, interactions, items, {
        "source": f"logged feedback {p.offpolicy.log}",
        "interactions_from": "one per impression: label 1 a positive reward (a click), 0 "
                             "shown without one", "users_from": users(log)[1]})


def _recsys_demo(p: Params, inputs: Path) -> Outputs:
    demo = generate_recsys(p.base.seed, n_users=p.prepare.n_queries, n_items=p.prepare.n_docs,
                           start=p.prepare.start, months=p.prepare.months)
    return _users_as_queries(p, demo.log, demo.items, {
        "source": "recommendation demo generator", "seed": p.base.seed,
        "team_runs": "simulated team systems team_calibrated, team_overconfident (demo only)"},
        demo)


SOURCES = {"demo": _demo, "beir": _real(read_beir, "BEIR"),
           "tables": _real(read_tables, "tables"), "interactions": _interactions,
           "recsys_demo": _recsys_demo, "logged_feedback": _logged_feedback, "runs": _runs}


@dataclass(frozen=True)
class Inputs:
    """pinned: the folder of the pinned inputs (``releval.project.inputs``)."""

    pinned: Path = INPUT_DIR


def run(p: Params, inputs: Inputs) -> Outputs:
    """The prepared tables of ``prepare.source``, the judgments with their hard_negative
    column, and source.json counting the rows; real data is read from its pinned copy."""
    tables = SOURCES[p.prepare.source](p, inputs.pinned)
    judgments = S.checked_hard_negatives(tables.judgments, "judgments")
    return replace(tables, judgments=judgments, source=tables.source | {
        "documents": len(tables.documents), "queries": len(tables.queries),
        "judgments": len(judgments), "hard_negatives": int(judgments[S.HARD_NEGATIVE].sum()),
        "must_not_return": len(tables.must_not_return)})


def line(p: Params, result: Outputs) -> str:
    """The stage's one line: the tables' sizes (recommendation: users, items, and the
    queries of each cut) and the source."""
    source = result.source
    if "recommendation" in source:
        rec = source["recommendation"]
        splits = "; ".join(f"{split} {c['users']:,} queries ({c['users_scored']:,} scored)"
                           for split, c in rec["splits"].items())
        splits += "".join(f"; at {days} days {by['test']['users_scored']:,} test users scored"
                          for days, by in rec.get("horizons", {}).items())
        return (f"prepare: {rec['users']:,} users, {rec['items']:,} items, "
                f"{rec['interactions']:,} interactions; {splits} ({source['source']})")
    nowhere = source.get("qrels_pointing_nowhere") or {}
    note = "".join(f", {nowhere[k]:,} judgments of {what}" for k, what in (
        ("unknown_documents", "documents not in the corpus"),
        ("unknown_queries", "queries not in the queries file (not evaluated)")) if nowhere.get(k))
    marks = source["hard_negatives"]
    return (f"prepare: {len(result.documents):,} documents, {len(result.queries):,} queries, "
            f"{len(result.judgments):,} judgments"
            + (f", {marks:,} of them hard negatives" if marks else "")
            + f" ({source['source']}){note}")

