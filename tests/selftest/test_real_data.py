"""The self-test on real data: CACM (BM25 under two settings, their fusion, the evaluator on
the collection's qrels) and the recommendation demo (users as queries, the routes that learn
from the log, the team tables not applicable)."""

import pytest

from releval.data.adapters import read_beir
from releval.params import Params, load_params
from releval.selftest import selftest, totals
from stages.prepare import Inputs as PrepareInputs
from stages.prepare import run as prepare
from tests.dag import ROOT
from tests.selftest.conftest import NO_LOG

CACM = ROOT.parent / "shared" / "data" / "cacm"


def test_every_relation_holds_on_cacm():
    data = read_beir(CACM)
    p = Params.model_validate({
        "prepare": {"source": "beir", "max_grade": 1},
        "candidates": {"systems": {"bm25": {"route": "bm25", "k1": 1.2},
                                   "robertson": {"route": "bm25", "method": "robertson",
                                                 "k1": 0.9, "b": 0.4}}},
        "fusion": {"systems": {"hybrid": {"lexical": "bm25", "dense": "robertson"}}}})
    rows = selftest(p, data.documents, data.queries, data.qrels, NO_LOG)
    assert (rows["status"] == "passed").all(), rows.loc[rows["status"] != "passed",
                                                        ["system", "relation", "example"]]
    assert len(rows) == 2 * 6 + 2 + 4 and (rows["reached"] > 0).all()
    assert totals(rows)["ok"] and totals(rows)["trials"] == 18 * 50


@pytest.fixture(scope="module")
def recsys(embeddings):
    raw = load_params(ROOT / "examples" / "recsys-demo.yaml").model_dump()
    raw["prepare"].update(n_docs=200, n_queries=200)
    raw["candidates"]["systems"]["content"]["cache_dir"] = embeddings
    raw["selftest"] = {"trials": 30}
    p = Params.model_validate(raw)
    return p, prepare(p, PrepareInputs())


def test_every_relation_holds_for_the_routes_that_learn_from_the_log(recsys):
    p, data = recsys
    rows = selftest(p, data.documents, data.queries, data.judgments, data.interactions)
    applied = rows[rows["status"] != "not_applicable"]
    assert (applied["status"] == "passed").all(), applied.loc[
        applied["status"] != "passed", ["system", "relation", "example"]]
    learnt = applied[applied["route"].isin(["popularity", "cooccurrence", "content"])]
    assert learnt.groupby("system")["relation"].apply(set).to_dict() == dict.fromkeys(
        ["popularity", "cooccurrence", "content"],
        {"doc_rename", "prefix_stability", "invisible_document"})
    assert (applied["reached"] > 0).all()
    teams = rows[rows["route"] == "external"]
    assert len(teams) and (teams["status"] == "not_applicable").all()


def test_a_route_that_needs_a_log_does_not_apply_without_one(demo, embeddings):
    p = Params.model_validate({
        "candidates": {"systems": {"bm25": {"route": "bm25"},
                                   "popular": {"route": "popularity"}}},
        "fusion": {"systems": {}}, "compare": {"baseline": "bm25", "candidate": "popular"}})
    rows = selftest(p, demo.documents, demo.queries, demo.ground_truth, NO_LOG,
                    relations=["doc_rename"]).set_index("system")
    assert rows.loc["bm25", "status"] == "passed"
    assert rows.loc["popular", "status"] == "not_applicable"
    assert "interaction log" in rows.loc["popular", "example"]
