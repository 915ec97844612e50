"""The external route on tiny inline run files: order, depth, run rules, visibility flags."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import REASONS, Visibility, visible_pairs
from releval.decision import safety
from releval.documents.run_stats import RunStats
from releval.errors import InputError
from releval.metrics.ranking import Ranking
from releval.report import summary as summary_md
from releval.report.decision import SAFETY_COUNTS
from releval.retrieval.base import run_stats
from releval.retrieval.external import ExternalRetriever
from tests.frames import AFTER, doc, documents, queries, query

DOCS = documents(*(doc(d) for d in ("d1", "d2", "d3", "d10", "é", "Z")))
QS = queries(query("q1"), query("q2"))


def trec(tmp_path, *lines, name="run.trec") -> str:
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def table(tmp_path, rows, name="run.parquet") -> str:
    path = tmp_path / name
    frame = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])
    if name.endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return str(path)


def search(path, docs=DOCS, qs=QS, depth=10, system=None):
    retriever = ExternalRetriever(path, system=system)
    retriever.index(docs)
    return retriever.search(qs, depth, Visibility(docs))


def ranked(candidates, query_id="q1") -> list[str]:
    run = candidates.run
    return run.loc[run[S.QUERY_ID] == query_id].sort_values(S.RANK)[S.DOC_ID].tolist()


def test_trec_run_is_ordered_by_score_then_doc_id_descending_ignoring_its_rank(tmp_path):
    path = trec(tmp_path, "q1 Q0 d1 1 1.0 sys", "q1 Q0 d2 2 2.0 sys", "q1 Q0 d10 3 2.0 sys",
                "q1 Q0 d3 4 2.0 sys", "q2 Q0 d1 9 0.5 sys")
    got = search(path)
    assert ranked(got) == ["d3", "d2", "d10", "d1"]  # "d3" > "d2" > "d10" as strings
    assert got.run[S.RANK].tolist() == [1, 2, 3, 4, 1]
    assert got.run[S.SCORE].tolist() == [2.0, 2.0, 2.0, 1.0, 0.5]
    assert list(got.run.columns) == [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]


def test_score_order_matches_the_evaluation_engine(tmp_path):
    rows = [("q1", d, 1, s) for d, s in [("d1", 1.0), ("d2", 3.0), ("d10", 3.0), ("é", 3.0),
                                         ("Z", 3.0), ("d3", 0.5)]]
    rows += [("q2", d, 1, s) for d, s in [("Z", 0.1), ("d3", 0.1), ("é", 0.2)]]
    path = trec(tmp_path, *(f"{q} Q0 {d} {r} {s} sys" for q, d, r, s in rows))
    got = search(path)
    run = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]).drop(
        columns=S.RANK)
    # grade = position in ``rows``, so the engine's row grades spell out its order
    qrels = run[[S.QUERY_ID, S.DOC_ID]].assign(**{S.GRADE: np.arange(len(rows))})
    engine = Ranking(run, qrels, max_grade=len(rows))
    names = run[S.DOC_ID].to_numpy()
    for code, query_id in enumerate(engine.queries):
        expected = names[engine.grade[engine.q == code].astype(int)].tolist()
        assert ranked(got, query_id) == expected
    assert ranked(got, "q1") == ["é", "d2", "d10", "Z", "d1", "d3"]


def test_explicit_rank_orders_a_table_and_ranks_become_contiguous(tmp_path):
    rows = [("q1", "d1", 3, 2.0), ("q1", "d3", 7, 2.0), ("q1", "d2", 10, 1.0),
            ("q2", "d2", 5, 0.5)]
    got = search(table(tmp_path, rows))
    assert ranked(got) == ["d1", "d3", "d2"]  # the rank column breaks the score tie
    assert got.run[S.RANK].tolist() == [1, 2, 3, 1]


def test_depth_truncates_with_contiguous_ranks_and_counts_the_dropped_rows(tmp_path):
    rows = [("q1", d, r, 10.0 - r) for r, d in enumerate(["d1", "d2", "d3", "d10"], 1)]
    rows.append(("q2", "d2", 4, 1.0))
    got = search(table(tmp_path, rows, name="run.csv"), depth=2)
    assert ranked(got) == ["d1", "d2"]
    assert got.run[S.RANK].tolist() == [1, 2, 1]
    assert got.stats["source"]["truncated_to_depth"] == 2
    assert got.stats["source"]["rows_out"] == 3


def test_duplicate_doc_in_a_query_names_file_and_line(tmp_path):
    path = trec(tmp_path, "q1 Q0 d1 1 2.0 sys", "q2 Q0 d1 1 2.0 sys", "q1 Q0 d1 2 1.0 sys")
    with pytest.raises(InputError) as err:
        search(path)
    assert err.value.source == path and err.value.where == "line 3"
    assert "duplicate doc_id 'd1'" in err.value.rule and "\n" not in str(err.value)


@pytest.mark.parametrize("rows, where, rule", [
    ([("q1", "d1", 1, 2.0), ("q1", "d2", 2, float("nan"))], "row 2", "score is NaN"),
    ([("q1", "d1", 1, 2.0), ("q1", "d2", 1, 1.0)], "row 2", "rank 1 repeated"),
    ([("q1", "d1", 1, 1.0), ("q1", "d2", 2, 2.0)], "row 2", "must not increase with rank"),
])
def test_run_rules_are_input_errors_naming_the_row(tmp_path, rows, where, rule):
    path = table(tmp_path, rows)
    with pytest.raises(InputError) as err:
        search(path)
    assert err.value.source == path and err.value.where == where and rule in err.value.rule


def test_forbidden_documents_are_flagged_with_their_reason_and_kept(tmp_path):
    docs = documents(doc("ok"), doc("future", published=AFTER),
                     doc("gone", status="deleted", deleted="2024-03-01"),
                     doc("tenant-b", tenant="B"), doc("finance", acl=["finance"]),
                     doc("draft", status="draft"), doc("eng-only", acl=["eng"]))
    names = ["ok", "future", "gone", "tenant-b", "finance", "draft", "eng-only", "ghost"]
    path = trec(tmp_path, *(f"q1 Q0 {d} 1 {10 - i} sys" for i, d in enumerate(names)))
    got = search(path, docs=docs, qs=queries(query("q1")))
    assert ranked(got) == names  # nothing filtered
    flags = got.stats["visibility"]
    assert {k: v for k, v in flags.items() if k != "examples"} == {
        "forbidden": 6, "unknown_document": 1, "other_tenant": 1, "acl": 1, "status": 1,
        "deleted": 1, "not_yet_published": 1}
    assert flags["forbidden"] == sum(flags[r] for r in REASONS)
    assert {(e[S.DOC_ID], e["reason"]) for e in flags["examples"]} == {
        ("future", "not_yet_published"), ("gone", "deleted"), ("tenant-b", "other_tenant"),
        ("finance", "acl"), ("draft", "status"), ("ghost", "unknown_document")}
    visible = visible_pairs(Visibility(docs), queries(query("q1")), got.run)
    assert flags["forbidden"] == int((~visible).sum())


def test_the_unfiltered_count_is_the_safety_violations_less_must_not_return(tmp_path):
    """The Candidates table's count of an external run and the safety stage's violations
    count different things, each named where it is shown: the run's returned pairs the
    access/time rule forbids, and one row per (returned pair, rule broken), must_not_return
    included (a pair breaking both counts twice)."""
    docs = documents(doc("ok"), doc("banned"), doc("gone", status="deleted",
                                                    deleted="2024-03-01"),
                     doc("finance", acl=["finance"]))
    qs = queries(query("q1"))
    path = trec(tmp_path, *(f"q1 Q0 {d} 1 {10 - i} sys"
                            for i, d in enumerate(("ok", "banned", "gone", "finance"))))
    got = search(path, docs=docs, qs=qs)
    must_not = pd.DataFrame({S.QUERY_ID: ["q1", "q1"], S.DOC_ID: ["banned", "gone"],
                             S.REASON: ["legal", "legal"]})
    found = safety.summary(safety.violations({"prod": got.run}, qs, docs, must_not),
                           {"prod": ["prod"]})["prod"]
    assert got.stats["visibility"]["forbidden"] == 2  # gone (deleted), finance (acl)
    assert found["violations"] == 4  # + banned, + gone again: must_not_return
    by_reason = found["by_reason"]
    assert got.stats["visibility"]["forbidden"] == sum(by_reason[r] for r in REASONS)
    assert found["violations"] == (got.stats["visibility"]["forbidden"]
                                   + by_reason[safety.MUST_NOT_RETURN])
    stats = run_stats(got, qs) | {"system": "prod", "route": "external", "depth": 10}
    note = summary_md._notes(RunStats.model_validate(stats))
    assert "not filtered: 2 returned (query, document) pairs the query may not see" in note
    assert "must_not_return" in SAFETY_COUNTS and "sum to the Candidates" in SAFETY_COUNTS

def test_admins_see_acl_restricted_documents(tmp_path):
    docs = documents(doc("finance", acl=["finance"]))
    got = search(trec(tmp_path, "q1 Q0 finance 1 1.0 sys"), docs=docs,
                 qs=queries(query("q1", role="admin")))
    assert got.stats["visibility"]["forbidden"] == 0 and got.stats["visibility"]["acl"] == 0


def test_unknown_queries_are_counted_and_dropped(tmp_path):
    path = trec(tmp_path, "q1 Q0 d1 1 1.0 sys", "zz Q0 d1 1 1.0 sys", "zz Q0 d2 2 0.5 sys",
                "yy Q0 d1 1 1.0 sys")
    got = search(path)
    assert set(got.run[S.QUERY_ID]) == {"q1"}
    source = got.stats["source"]
    assert (source["queries_in_run"], source["queries_unknown"]) == (3, 2)
    assert (source["rows_in"], source["rows_unknown_queries"], source["rows_out"]) == (4, 3, 1)


def test_a_multi_system_file_needs_a_system(tmp_path):
    path = trec(tmp_path, "q1 Q0 d1 1 1.0 prod", "q1 Q0 d2 1 1.0 retrained",
                "q1 Q0 d3 2 0.5 retrained")
    with pytest.raises(InputError, match="2 systems \\(prod, retrained\\)"):
        search(path)
    with pytest.raises(InputError, match="'nope' is not in the run; it holds prod, retrained"):
        search(path, system="nope")
    got = search(path, system="retrained")
    assert ranked(got) == ["d2", "d3"]
    assert got.stats["source"]["rows_other_systems"] == 1


def test_latency_is_not_measured_and_the_source_is_pinned(tmp_path):
    path = trec(tmp_path, "q1 Q0 d1 1 1.0 sys", "q1 Q0 d2 2 0.5 sys")
    got = search(path)
    assert np.isnan(got.latency_ms).all() and len(got.latency_ms) == len(QS)
    assert got.stats["latency"] == "not measured (external run)"
    stats = run_stats(got, QS)
    assert stats["latency_ms"] == {"p50": None, "p95": None, "p99": None}
    assert stats["candidates_per_query"] == {"mean": 1.0, "min": 0, "max": 2, "empty": 1}
    with open(path, "rb") as f:
        assert stats["source"]["sha256"] == hashlib.sha256(f.read()).hexdigest()
    assert stats["source"]["path"] == path
    json.dumps(stats, allow_nan=False)  # JSON-ready: no NaN, only plain types


def test_search_needs_the_indexed_documents_and_unique_query_ids(tmp_path):
    path = trec(tmp_path, "q1 Q0 d1 1 1.0 sys")
    with pytest.raises(RuntimeError):
        ExternalRetriever(path).search(QS, 10, Visibility(DOCS))
    retriever = ExternalRetriever(path)
    retriever.index(DOCS)
    with pytest.raises(InputError, match="different documents table"):
        retriever.search(QS, 10, Visibility(DOCS.iloc[:2]))
    with pytest.raises(InputError, match="query_id 'q1' is not unique"):
        retriever.search(queries(query("q1"), query("q1")), 10, Visibility(DOCS))
    assert ExternalRetriever.route == "external"


REC_DOCS = documents(*(doc(d) for d in ("085123A", "22423", "m", "M")))
USERS = queries(query("17850@test"), query("17850@validation"), query("13047@test"))


def rec_table(tmp_path, frame: pd.DataFrame, name="team.parquet") -> str:
    path = tmp_path / name
    frame.to_csv(path, index=False) if name.endswith(".csv") else frame.to_parquet(path)
    return str(path)


@pytest.mark.parametrize("name", ["team.parquet", "team.csv"])
def test_a_rec_table_maps_users_and_items_to_queries_and_documents(tmp_path, name):
    frame = pd.DataFrame({S.SYSTEM: ["gbdt"] * 5, S.USER_ID: ["17850"] * 3 + ["13047"] * 2,
                          S.ITEM_ID: ["085123A", "M", "m", "22423", "085123A"],
                          S.SCORE: [0.9, 0.5, 0.7, 0.2, 0.4],
                          S.PROBABILITY: [0.8, 0.1, 0.3, 0.05, 0.5]})
    got = search(rec_table(tmp_path, frame, name), docs=REC_DOCS, qs=USERS)
    assert ranked(got, "17850@test") == ["085123A", "m", "M"]  # ids are strings, case kept
    assert ranked(got, "13047@test") == ["085123A", "22423"]
    assert list(got.run.columns) == [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE, S.PROBABILITY]
    assert got.run[S.PROBABILITY].tolist() == [0.8, 0.3, 0.1, 0.5, 0.05]
    assert got.stats["source"]["rows_out"] == 5


def test_a_rec_tables_split_column_names_the_cut(tmp_path):
    frame = pd.DataFrame({S.USER_ID: ["17850", "17850"], S.ITEM_ID: ["22423", "m"],
                          S.SPLIT: ["validation", "test"], S.RANK: [1, 1], S.SCORE: 1.0})
    got = search(rec_table(tmp_path, frame), docs=REC_DOCS, qs=USERS)
    assert ranked(got, "17850@validation") == ["22423"] and ranked(got, "17850@test") == ["m"]
    assert S.PROBABILITY not in got.run.columns


@pytest.mark.parametrize("column, values, where, rule", [
    (S.PROBABILITY, [0.5, 1.5], "line 3", "probability must be a number in \\[0, 1\\] on "
                                          "every row, got 1.5"),
    (S.PROBABILITY, [0.5, None], "line 3", "probability must be a number in \\[0, 1\\]"),
    (S.SPLIT, ["test", "later"], "line 3", "split must be one of train, validation, test, "
                                           "got 'later'"),
    (S.SCORE, [1.0, "high"], "line 3", "score must be a number, got 'high'"),
    (S.ITEM_ID, ["m", None], "line 3", "item_id is missing"),
])
def test_rec_table_rules_are_input_errors_naming_file_and_line(tmp_path, column, values,
                                                               where, rule):
    frame = pd.DataFrame({S.USER_ID: ["17850", "13047"], S.ITEM_ID: ["m", "M"],
                          S.SCORE: [1.0, 0.5]}).assign(**{column: values})
    path = rec_table(tmp_path, frame, "team.csv")
    with pytest.raises(InputError, match=rule) as err:
        search(path, docs=REC_DOCS, qs=USERS)
    assert err.value.source == path and err.value.where == where


def test_probability_in_a_parquet_run_names_its_row(tmp_path):
    frame = pd.DataFrame({S.QUERY_ID: ["q1", "q1"], S.DOC_ID: ["d1", "d2"], S.SCORE: [2.0, 1.0],
                          S.PROBABILITY: [0.2, -0.1]})
    path = str(tmp_path / "run.parquet")
    frame.to_parquet(path)
    with pytest.raises(InputError, match="got -0.1") as err:
        search(path)
    assert err.value.where == "row 2"


def test_a_rec_csv_line_with_more_fields_than_the_header_is_an_input_error(tmp_path):
    path = tmp_path / "team.csv"
    path.write_text("user_id,item_id,score\n17850,m,1.0\n17850,M,0.5,extra\n")
    with pytest.raises(InputError, match="Expected 3 fields in line 3, saw 4 \\(more fields"):
        search(str(path), docs=REC_DOCS, qs=USERS)
