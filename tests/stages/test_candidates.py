"""Whole candidate windows of every route on demo data obey the access and time rule; in
recommendation mode the routes learn from the interaction log and a team's probabilities are
kept."""

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.demo.generator import GUEST_RUNBOOK_QUERY_ID, generate
from releval.errors import InputError
from releval.params import Params
from releval.retrieval.fusion import fuse
from stages.candidates import Inputs, run
from tests.retrieval.recs import catalogue, interactions, user_queries
from tests.retrieval.recs import windows as ranked_lists

ROUTES = ("bm25", "dense", "hybrid")


@pytest.fixture(scope="module")
def all_windows(tmp_path_factory):
    """Whole windows of every route on one demo dataset (hybrid: RRF of bm25 and dense)."""
    data = generate(n_docs=1500, n_queries=300, seed=5)
    cache = str(tmp_path_factory.mktemp("embeddings"))
    params = Params.model_validate({"candidates": {"depth": 200, "systems": {
        "bm25": {"route": "bm25"},
        "dense": {"route": "dense", "cache_dir": cache, "min_score": 0.3}}}})
    no_log = pd.DataFrame(columns=list(S.INTERACTION_COLUMNS))
    full = {name: run(params, Inputs(name, data.documents, data.queries, no_log))
            for name in ("bm25", "dense")}
    for latency in (r.latency for r in full.values()):  # one per query, in queries' order
        assert latency["query_id"].tolist() == data.queries["query_id"].tolist()
        assert (latency["latency_ms"] > 0).all()
    out = {name: (r.run, r.stats) for name, r in full.items()}
    cols = ["query_id", "doc_id", "rank", "score"]
    fused = fuse({n: out[n][0][cols] for n in out}, 200, {"method": "rrf", "k": 60})
    out["hybrid"] = (fused.assign(system="hybrid", route="hybrid")[
        ["system", "route", *cols]], {"depth": 200, "n_queries": len(data.queries),
                                      "latency_ms": {"p50": None, "p95": None, "p99": None}})
    return data, out


@pytest.fixture(params=ROUTES)
def windows(request, all_windows):
    data, out = all_windows
    return (data, *out[request.param])


def test_no_window_holds_a_forbidden_future_or_other_tenant_document(windows):
    data, table, _ = windows
    pairs = table.merge(data.documents, on="doc_id", suffixes=("", "_doc")).merge(
        data.queries, on="query_id", suffixes=("_doc", "_query"))
    assert len(pairs) == len(table)
    t = pairs["issued_at"]
    assert (pairs["tenant_doc"] == pairs["tenant_query"]).all()
    assert (pairs["published_at"] <= t).all()
    assert (pairs["status"].isin(["published", "deleted"])).all()
    assert (pairs["deleted_at"].isna() | (pairs["deleted_at"] > t)).all()
    acl_ok = [not acl or bool(set(acl) & set(groups)) or role == "admin"
              for acl, groups, role in zip(pairs["acl"], pairs["groups"], pairs["role"],
                                           strict=True)]
    assert all(acl_ok)


def test_windows_follow_the_run_contract_and_stats(windows):
    data, table, stats = windows
    assert list(table.columns) == ["system", "route", "query_id", "doc_id", "rank", "score"]
    assert not table.duplicated(["query_id", "doc_id"]).any()
    ranks = table.groupby("query_id")["rank"].agg(["min", "max", "size"])
    assert (ranks["min"] == 1).all() and (ranks["max"] == ranks["size"]).all()
    assert (table.groupby("query_id")["score"].diff().dropna() <= 0).all()
    assert stats["depth"] == 200 and stats["n_queries"] == len(data.queries)
    assert set(stats["latency_ms"]) == {"p50", "p95", "p99"}


def test_the_guests_runbook_question_gets_an_empty_bm25_window(all_windows):
    """Its words occur only in internal runbooks, so nothing the guest may see matches.
    (Dense windows are emptied only by a similarity floor, which depends on the data.)"""
    _, out = all_windows
    assert not (out["bm25"][0].query_id == GUEST_RUNBOOK_QUERY_ID).any()


def test_the_guest_never_sees_the_internal_runbook(windows):
    data, table, _ = windows
    runbooks = data.ground_truth.loc[data.ground_truth.query_id == GUEST_RUNBOOK_QUERY_ID,
                                     "doc_id"]
    window = table.loc[table.query_id == GUEST_RUNBOOK_QUERY_ID, "doc_id"]
    assert len(runbooks) and not set(runbooks) & set(window)
    staff_only = data.documents.loc[data.documents.acl.map(lambda a: list(a) == ["staff"]),
                                    "doc_id"]
    assert not set(window) & set(pd.Series(staff_only))


REC = {"prepare": {"source": "interactions", "path": "shop"},
       "candidates": {"depth": 2, "systems": {
           "popularity": {"route": "popularity"}, "cooccurrence": {"route": "cooccurrence"},
           "team": {"route": "external", "path": "data/team.parquet"}}},
       "fusion": {"systems": {}}, "compare": {"baseline": "popularity", "candidate": "team"}}
LOG = interactions(("u1", "a", -5), ("u1", "b", -4), ("u2", "a", -3), ("u2", "c", -3),
                   ("u3", "b", -2))
ITEMS = catalogue("a", "b", "c")
USERS = user_queries("u1", "u2", "u3", "u4")


def test_recommendation_routes_learn_from_the_interaction_log():
    p = Params.model_validate(REC)
    pop = run(p, Inputs("popularity", ITEMS, USERS, LOG))
    assert ranked_lists(pop.run) == {
        "u1@test": [("c", 1.0)], "u2@test": [("b", 2.0)], "u3@test": [("a", 2.0), ("c", 1.0)],
        "u4@test": [("a", 2.0), ("b", 2.0)]}
    assert list(pop.run.columns) == list(S.RUN_COLUMNS)
    assert pop.stats["route"] == "popularity" and pop.stats["empty_profile"] == 1
    cooc = run(p, Inputs("cooccurrence", ITEMS, USERS, LOG))
    assert set(cooc.run["query_id"]) == {"u1@test", "u2@test", "u3@test"}
    with pytest.raises(InputError, match="route popularity recommends from an interaction log"):
        run(Params.model_validate(REC | {"prepare": {"source": "demo"}}), Inputs("popularity",
                                                                                 ITEMS,
            USERS, LOG))


def test_a_team_rec_table_keeps_its_probability_after_the_run_columns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    pd.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["c", "a", "b"],
                  "score": [2.0, 1.0, 0.5], "probability": [0.7, 0.2, 0.4]}).to_parquet(
        tmp_path / "data" / "team.parquet")
    got = run(Params.model_validate(REC), Inputs("team", ITEMS, USERS, LOG)).run
    assert list(got.columns) == [*S.RUN_COLUMNS, S.PROBABILITY]
    assert got[["query_id", "doc_id", S.PROBABILITY]].values.tolist() == [
        ["u1@test", "c", 0.7], ["u1@test", "a", 0.2], ["u2@test", "b", 0.4]]


def test_a_seeded_team_run_keeps_every_seed_and_ships_the_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u1"],
                  "item_id": ["c", "a", "b", "b", "a"],
                  "score": [2.0, 1.0, 3.0, 0.5, 1.0],
                  "system": ["v3@seed1", "v3@seed1", "v3@seed2", "v3@seed2", "v3@seed7"]}
                 ).to_parquet(tmp_path / "data" / "team.parquet")
    seeded = REC | {"candidates": {"depth": 2, "systems": {
        **REC["candidates"]["systems"],
        "v3": {"route": "external", "path": "data/team.parquet", "seeds": [1, 2]}}}}
    got = run(Params.model_validate(seeded), Inputs("v3", ITEMS, USERS, LOG))
    assert got.run[["query_id", "doc_id"]].values.tolist() == [["u1@test", "c"],
                                                               ["u1@test", "a"]]
    assert list(got.seeds.columns) == [*S.RUN_COLUMNS, S.SEED]
    assert (got.seeds[S.SYSTEM] == "v3").all()
    assert got.seeds[[S.SEED, "query_id", "doc_id"]].values.tolist() == [
        [1, "u1@test", "c"], [1, "u1@test", "a"], [2, "u1@test", "b"], [2, "u2@test", "b"]]
    assert got.stats["seeds"] == {"seeds": [1, 2], "shipped": 1,
                                  "candidates": {"1": 2, "2": 2}}
    unseeded = run(Params.model_validate(REC), Inputs("popularity", ITEMS, USERS, LOG))
    assert unseeded.seeds.empty and S.SEED in unseeded.seeds.columns
