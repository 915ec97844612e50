"""The self-test on the demo: every relation holds on releval's own subjects and reaches its
branch; what does not apply says why; a relation that reaches nothing fails."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.retrieval.base import Candidates
from releval.retrieval.bm25 import BM25Retriever
from releval.selftest import RELATIONS, selftest, totals
from releval.selftest.generators import SOURCE_DOC, window_queries
from releval.selftest.relation import Tally
from tests.selftest.conftest import NO_LOG
from tests.selftest.mutants import retrievers


@pytest.fixture(scope="module")
def rows(demo, demo_params):
    return selftest(demo_params, demo.documents, demo.queries, demo.ground_truth, NO_LOG)


def test_every_relation_holds_on_the_demo_and_reaches_its_branch(rows):
    applied = rows[rows["status"] != "not_applicable"]
    assert applied["ok"].all(), applied.loc[~applied["ok"], ["system", "relation", "example"]]
    assert (applied["reached"] > 0).all() and (applied["failed"] == 0).all()
    assert (applied["passed"] == applied["reached"]).all()
    assert (applied["reached"] <= applied["trials"]).all()
    assert set(applied["relation"]) == set(RELATIONS)
    by_system = applied.groupby("system")["relation"].apply(set).to_dict()
    assert by_system["bm25"] == {"term_permutation", "absent_term", "analyzer_agreement",
                                 "doc_rename", "prefix_stability", "invisible_document"}
    assert by_system["dense"] == by_system["ann"] == {
        "doc_rename", "prefix_stability", "invisible_document", "brute_force", "hnsw_exact"}
    assert by_system["hybrid"] == {"self_fusion", "unit_weights"}
    assert by_system["evaluator"] == {"row_permutation", "id_rename", "split_files",
                                      "ideal_ndcg"}


def test_an_approximate_system_is_held_to_its_exact_settings(rows):
    ann = rows[rows["system"] == "ann"].set_index("relation")["precondition"]
    assert "exact settings" in ann["doc_rename"] and "exact settings" in ann["brute_force"]
    assert "exact settings" not in ann["hnsw_exact"]
    assert "exact settings" not in rows[rows["system"] == "dense"]["precondition"].str.cat()


def test_a_team_run_file_is_not_applicable_and_says_why(rows):
    team = rows[rows["system"] == "prod_v2"]
    assert set(team["relation"]) == {"doc_rename", "prefix_stability", "invisible_document"}
    assert (team["status"] == "not_applicable").all() and team["ok"].isna().all()
    assert team["example"].str.contains("no scorer to re-run").all()
    assert (team[["trials", "reached", "passed", "failed"]] == 0).all().all()
    t = totals(rows)
    assert t["ok"] and t["not_applicable"] == 3 and t["systems"]["prod_v2"]["relations"] == 0
    assert t["systems"]["prod_v2"]["ok"] is None and t["systems"]["bm25"]["ok"] is True
    assert t["relations"] == len(rows) - 3
    assert t["reached"] == t["passed"] == rows["passed"].sum() and t["failed"] == 0


class Mute(BM25Retriever):
    """Answers every query with an empty window."""

    def search(self, queries, depth, visibility):
        found = super().search(queries, depth, visibility)
        return Candidates(found.run.iloc[:0], found.latency_ms)


def test_a_relation_that_reaches_no_trial_fails(demo, demo_params):
    route = ["term_permutation", "doc_rename", "prefix_stability", "invisible_document"]
    rows = selftest(demo_params, demo.documents, demo.queries, demo.ground_truth, NO_LOG,
                    retrievers("bm25", Mute), relations=route)
    mute = rows[rows["system"] == "bm25"]
    assert len(mute) == 4 and (mute["status"] == "unreached").all()
    assert (mute["reached"] == 0).all() and (mute["trials"] > 0).all()
    assert not mute["ok"].any() and mute["example"].str.contains("zero work").all()
    assert not totals(rows)["ok"] and totals(rows)["not_passed"] == 4
    nothing = Tally.of(np.zeros(3, bool), ["", "", ""])
    assert nothing.status == "unreached" and nothing.failed == 0


def test_linear_weights_do_not_apply_to_a_fusion_without_linear(demo, demo_params):
    params = demo_params.model_copy(update={"fusion": demo_params.fusion.model_copy(update={
        "systems": {"hybrid": demo_params.fusion.systems["hybrid"].model_copy(
            update={"methods": ["rrf"]})}})})
    rows = selftest(params, demo.documents, demo.queries, demo.ground_truth, NO_LOG,
                    relations=["unit_weights", "self_fusion"]).set_index("relation")
    assert rows.loc["unit_weights", "status"] == "not_applicable"
    assert "no linear" in rows.loc["unit_weights", "example"]
    assert rows.loc["self_fusion", "status"] == "passed"


def test_an_unknown_relation_is_an_input_error(demo, demo_params):
    with pytest.raises(InputError, match="unknown relation"):
        selftest(demo_params, demo.documents, demo.queries, demo.ground_truth, NO_LOG,
                 relations=["commutativity"])


def test_trials_are_windows_of_a_visible_document_asked_by_an_admin_of_its_tenant(demo):
    trials = window_queries(demo.documents, 40, np.random.default_rng(0))
    docs = demo.documents.set_index(S.DOC_ID)
    source = docs.loc[trials[SOURCE_DOC]]
    text = (source[S.TITLE] + " " + source[S.TEXT]).to_numpy()
    assert all(q in t for q, t in zip(trials[S.TEXT], text, strict=True))
    assert trials[S.TEXT].str.split().str.len().between(1, 6).all()
    assert (trials[S.ROLE] == "admin").all()
    assert (trials[S.TENANT] == source[S.TENANT].to_numpy()).all()
    mask = Visibility(demo.documents).mask(trials)
    column = pd.Index(demo.documents[S.DOC_ID]).get_indexer(trials[SOURCE_DOC])
    assert mask[np.arange(len(trials)), column].all()
