"""Safety violations over whole windows: tiny hand-built frames, then a seeded leak."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import REASONS, Visibility
from releval.decision.gate import decide
from releval.decision.gate.evidence import Evidence
from releval.decision.safety import (
    IN_TOP_K,
    SAFETY_REASONS,
    UNASSIGNED,
    VIOLATION_COLUMNS,
    in_splits,
    summary,
    violations,
)
from releval.demo.generator import generate
from releval.errors import InputError
from releval.params.rules import SafetyRule
from releval.retrieval.routes import make_retriever
from tests.documents import comparison as comparison_doc
from tests.documents import read_comparison
from tests.frames import AFTER, doc, documents, queries, query

FILLER = [f"f{i:02d}" for i in range(60)]
DOCS = documents(*(doc(d) for d in FILLER), doc("other", tenant="B"),
                 doc("finance", acl=["finance"]), doc("draft", status="draft"),
                 doc("gone", status="deleted", deleted="2024-03-01"),
                 doc("later", published=AFTER), doc("secret"))
QS = queries(query("q1"), query("q2"))
NO_BANS = pd.DataFrame(columns=list(S.MUST_NOT_RETURN_COLUMNS))


def window(query_id: str, placed: dict[int, str], n: int = 60, system: str = "bm25",
           route: str = "bm25") -> pd.DataFrame:
    """A run of n candidates for one query: filler documents, ``placed`` at their ranks."""
    filler = iter(FILLER)
    ids = [placed.get(rank) or next(filler) for rank in range(1, n + 1)]
    return pd.DataFrame({S.SYSTEM: system, S.ROUTE: route, S.QUERY_ID: query_id, S.DOC_ID: ids,
                         S.RANK: np.arange(1, n + 1), S.SCORE: np.linspace(10, 1, n)})


def bans(*pairs) -> pd.DataFrame:
    return pd.DataFrame([(q, d, "restricted answer: finance only") for q, d in pairs],
                        columns=list(S.MUST_NOT_RETURN_COLUMNS))


def test_each_reason_is_one_row_with_its_rank():
    run = window("q1", {1: "other", 2: "finance", 3: "draft", 4: "gone", 5: "later",
                        6: "ghost"})
    got = violations({"bm25": run}, QS, DOCS, NO_BANS)
    assert tuple(got.columns) == VIOLATION_COLUMNS
    assert list(zip(got[S.DOC_ID], got[S.REASON], got[S.RANK], strict=True)) == [
        ("other", "other_tenant", 1), ("finance", "acl", 2), ("draft", "status", 3),
        ("gone", "deleted", 4), ("later", "not_yet_published", 5),
        ("ghost", "unknown_document", 6)]
    assert got[IN_TOP_K].all() and (got[S.SYSTEM] == "bm25").all()


def test_the_whole_window_is_checked_not_only_the_top_k():
    run = window("q1", {57: "other"})
    got = violations({"bm25": run}, QS, DOCS, NO_BANS, top_k=10)
    assert got[[S.DOC_ID, S.RANK, S.REASON, IN_TOP_K]].values.tolist() == [
        ["other", 57, "other_tenant", False]]
    counts = summary(got, {"bm25": ["bm25"]})["bm25"]
    assert counts["violations"] == 1 and counts["below_top_k"] == 1
    assert violations({"bm25": run}, QS, DOCS, NO_BANS, top_k=60)[IN_TOP_K].all()


def test_must_not_return_adds_its_own_row():
    run = pd.concat([window("q1", {3: "secret", 8: "finance"}), window("q2", {2: "secret"})])
    got = violations({"bm25": run}, QS, DOCS, bans(("q1", "secret"), ("q1", "finance")))
    assert list(zip(got[S.QUERY_ID], got[S.DOC_ID], got[S.REASON], strict=True)) == [
        ("q1", "secret", "must_not_return"),  # visible, but listed
        ("q1", "finance", "must_not_return"), ("q1", "finance", "acl")]  # both rules broken
    # the listing is per query: q2 may get "secret"


def test_summary_sums_a_fused_system_and_its_routes():
    runs = {"bm25": window("q1", {12: "other", 40: "draft"}),
            "dense": window("q2", {1: "finance"}, system="dense", route="dense"),
            "hybrid": window("q1", {5: "gone"}, n=10, system="hybrid", route="hybrid")}
    got = violations(runs, QS, DOCS, bans(("q2", "finance")))
    assert got[S.SYSTEM].tolist() == ["bm25", "bm25", "dense", "dense", "hybrid"]
    assert got[S.ROUTE].tolist() == ["bm25", "bm25", "dense", "dense", "hybrid"]
    counts = summary(got, {"bm25": ["bm25"], "dense": ["dense"],
                           "hybrid": ["hybrid", "bm25", "dense"]})
    assert counts["hybrid"] == {
        "violations": 5,
        "by_reason": {"must_not_return": 1, "other_tenant": 1, "acl": 1, "status": 1,
                      "deleted": 1, "not_yet_published": 0, "unknown_document": 0},
        "queries_affected": 2, "below_top_k": 2, "own": 1}
    assert counts["bm25"]["violations"] == 2 and counts["bm25"]["queries_affected"] == 1
    assert counts["dense"]["by_reason"]["acl"] == 1 and counts["dense"]["below_top_k"] == 0
    assert list(counts["bm25"]["by_reason"]) == list(SAFETY_REASONS)
    assert set(SAFETY_REASONS) == {"must_not_return", *REASONS}


def test_clean_and_empty_windows_have_no_violations():
    runs = {"bm25": window("q1", {}), "empty": window("q1", {}).iloc[:0]}
    got = violations(runs, QS, DOCS, NO_BANS)
    assert got.empty and tuple(got.columns) == VIOLATION_COLUMNS
    assert violations({}, QS, DOCS, NO_BANS).empty
    assert summary(got, {"bm25": ["bm25"]})["bm25"]["violations"] == 0


def test_bad_arguments_are_input_errors():
    with pytest.raises(InputError, match="not in the queries table"):
        violations({"bm25": window("nobody", {})}, QS, DOCS, NO_BANS)
    with pytest.raises(InputError, match="top_k"):
        violations({"bm25": window("q1", {})}, QS, DOCS, NO_BANS, top_k=0)


@pytest.fixture(scope="module")
def seeded():
    """Small demo data and a clean BM25 window for every query (visible documents only)."""
    data = generate(n_docs=300, n_queries=60, seed=3)
    retriever = make_retriever("bm25")
    retriever.index(data.documents)
    found = retriever.search(data.queries, 50, Visibility(data.documents))
    clean = found.run.assign(**{S.SYSTEM: "bm25", S.ROUTE: "bm25"})[list(S.RUN_COLUMNS)]
    return data, clean


def inject(run: pd.DataFrame, query_id: str, doc_id: str, rank: int) -> pd.DataFrame:
    """``doc_id`` put at ``rank`` of ``query_id``'s window; the rest move down one rank."""
    mine = run[run[S.QUERY_ID] == query_id]
    rest = run[run[S.QUERY_ID] != query_id]
    moved = mine.assign(**{S.RANK: np.where(mine[S.RANK] >= rank, mine[S.RANK] + 1,
                                            mine[S.RANK])})
    score = float(mine.loc[mine[S.RANK] == rank, S.SCORE].iloc[0])
    leak = mine.iloc[[0]].assign(**{S.DOC_ID: doc_id, S.RANK: rank, S.SCORE: score})
    return pd.concat([rest, moved, leak]).sort_values([S.QUERY_ID, S.RANK]).reset_index(
        drop=True)


def test_a_seeded_leak_below_the_top_k_is_found_and_counted_by_the_fused_system(seeded):
    data, clean = seeded
    queries, documents, banned = data.queries, data.documents, data.must_not_return
    assert violations({"bm25": clean}, queries, documents, banned).empty

    sizes = clean.groupby(S.QUERY_ID).size()
    query_id = sizes.index[sizes >= 20][0]
    tenant = queries.set_index(S.QUERY_ID).loc[query_id, S.TENANT]
    outsider = documents.loc[documents[S.TENANT] != tenant, S.DOC_ID].iloc[0]
    leaky = inject(clean, query_id, outsider, rank=15)
    mine = leaky[leaky[S.QUERY_ID] == query_id]
    assert mine[S.RANK].tolist() == list(range(1, len(mine) + 1))  # still a valid window
    assert (mine[S.SCORE].diff().dropna() <= 0).all()

    hybrid = leaky[leaky[S.RANK] <= 10].assign(**{S.SYSTEM: "hybrid", S.ROUTE: "hybrid"})
    got = violations({"bm25": leaky, "hybrid": hybrid}, queries, documents, banned, top_k=10)
    assert got[[S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.RANK, S.REASON, IN_TOP_K]].values.tolist() \
        == [["bm25", query_id, outsider, 15, "other_tenant", False]]
    counts = summary(got, {"bm25": ["bm25"], "hybrid": ["hybrid", "bm25"]})
    assert counts["bm25"]["below_top_k"] == 1 and counts["bm25"]["own"] == 1
    assert counts["bm25"]["by_reason"]["other_tenant"] == 1
    assert counts["hybrid"]["violations"] == 1 and counts["hybrid"]["below_top_k"] == 1
    assert counts["hybrid"]["own"] == 0 and counts["hybrid"]["queries_affected"] == 1


def test_the_seeded_leak_fails_the_safety_gate_however_good_the_relevance(seeded):
    data, clean = seeded
    query_id = clean.groupby(S.QUERY_ID).size().loc[lambda n: n >= 20].index[0]
    tenant = data.queries.set_index(S.QUERY_ID).loc[query_id, S.TENANT]
    outsider = data.documents.loc[data.documents[S.TENANT] != tenant, S.DOC_ID].iloc[0]
    routes = {"bm25": ["bm25"], "hybrid": ["hybrid", "bm25"]}

    def decision(bm25_window):
        hybrid = bm25_window[bm25_window[S.RANK] <= 10].assign(**{S.SYSTEM: "hybrid",
                                                                  S.ROUTE: "hybrid"})
        found = violations({"bm25": bm25_window, "hybrid": hybrid}, data.queries,
                           data.documents, data.must_not_return)
        evidence = Evidence(baseline="bm25", candidate="hybrid",
                            comparison=read_comparison(comparison_doc()),
                            safety={"top_k": 10, "systems": summary(found, routes)},
                            metrics={"hybrid": {"nDCG@10": 1.0}})
        return decide([SafetyRule()], evidence)

    assert decision(clean)["passed"]
    failed = decision(inject(clean, query_id, outsider, rank=15))
    assert not failed["passed"] and failed["failed"] == ["safety hybrid"]
    assert "other_tenant" in failed["rules"][0]["reason"]


def test_in_splits_labels_each_row_and_unassigned_where_the_split_lacks_the_query():
    rows = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q1"], S.RANK: [1, 2, 3]})
    split = pd.DataFrame({S.QUERY_ID: ["q1", "q3"], S.SPLIT: ["train", "test"]})
    got = in_splits(rows, split)
    assert list(got.columns) == [S.QUERY_ID, S.RANK, S.SPLIT]
    assert got[S.SPLIT].tolist() == ["train", UNASSIGNED, "train"] and UNASSIGNED == "unassigned"
    assert S.SPLIT not in rows.columns
