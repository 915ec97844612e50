"""Per-query status: an external run's status column (good and bad input), the built-in
routes' own "ok", the latency table and run_stats counts, a fused window's status, and the
embedding cache's hit rate."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.retrieval.base import Candidates, latency_table, run_stats, status_of
from releval.retrieval.dense import DenseRetriever
from releval.retrieval.embeddings import Encoder, cache_summary
from releval.retrieval.external import ExternalRetriever
from releval.retrieval.fusion import fused_status
from tests.frames import doc, documents, queries, query

DOCS = documents(*(doc(d) for d in ("d1", "d2", "d3")))
QS = queries(query("q1"), query("q2"), query("q3"))
NAN = float("nan")


def team_run(tmp_path, rows, name="run.parquet") -> str:
    path = tmp_path / name
    frame = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.SCORE, S.RUN_STATUS])
    if name.endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return str(path)


def search(path, system=None):
    retriever = ExternalRetriever(path, system=system)
    retriever.index(DOCS)
    return retriever.search(QS, 10, Visibility(DOCS))


def as_list(values) -> list:
    return [None if isinstance(v, float) and np.isnan(v) else v for v in values]


@pytest.mark.parametrize("name", ["run.parquet", "run.csv"])
def test_an_external_status_column_gives_each_query_its_status_and_nan_where_absent(
        tmp_path, name):
    path = team_run(tmp_path, [("q1", "d1", 2.0, "ok"), ("q1", "d2", 1.0, "ok"),
                               ("q2", "d3", 1.0, "fallback")], name)
    got = search(path)
    assert as_list(got.status) == ["ok", "fallback", None]  # q3 is not in the run
    stats = run_stats(got, QS)["status"]
    assert stats == {"ok": 1, "error": 0, "timeout": 0, "partial": 0, "fallback": 1,
                     "not_recorded": 1}
    table = latency_table(QS, got.latency_ms, got.status)
    assert as_list(table[S.RUN_STATUS]) == ["ok", "fallback", None]


def test_an_external_run_without_the_column_records_no_status(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 1 1.0 team\n")
    got = search(str(path))
    assert as_list(got.status) == [None, None, None]
    assert run_stats(got, QS)["status"]["not_recorded"] == 3


def test_the_status_of_the_chosen_system_only(tmp_path):
    path = tmp_path / "runs.parquet"
    pd.DataFrame({S.QUERY_ID: ["q1", "q1"], S.DOC_ID: ["d1", "d1"], S.SCORE: [1.0, 1.0],
                  S.SYSTEM: ["a", "b"], S.RUN_STATUS: ["error", "ok"]}).to_parquet(path)
    assert as_list(search(str(path), system="b").status) == ["ok", None, None]


@pytest.mark.parametrize("rows,row,rule", [
    ([("q1", "d1", 1.0, "ok"), ("q2", "d2", 1.0, "crashed")], 2,
     "status must be one of ok, error, timeout, partial, fallback on every row, got 'crashed'"),
    ([("q1", "d1", 1.0, "ok"), ("q2", "d2", 1.0, None)], 2, "got nan"),
    ([("q1", "d1", 2.0, "ok"), ("q2", "d2", 1.0, "ok"), ("q1", "d3", 1.0, "timeout")], 3,
     "status 'timeout' differs from 'ok' on the first row of query 'q1': one status per query"),
])
def test_a_bad_status_names_file_line_and_rule(tmp_path, rows, row, rule):
    path = team_run(tmp_path, rows, "run.csv")
    with pytest.raises(InputError) as caught:
        search(path)
    message = str(caught.value)
    assert path in message and f"line {row + 1}" in message and rule in message


def test_a_route_that_sets_no_status_answered_every_query_it_searched():
    found = Candidates(pd.DataFrame(columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]),
                       np.array([1.0, 2.0, NAN]))
    assert run_stats(found, QS)["status"]["ok"] == 3
    table = latency_table(QS, found.latency_ms)
    assert table[S.RUN_STATUS].tolist() == ["ok"] * 3


def test_status_of_a_latency_table_is_nan_where_it_records_none():
    table = pd.DataFrame({S.QUERY_ID: ["q2", "q1"], "latency_ms": [1.0, 2.0],
                          S.RUN_STATUS: ["error", "ok"]})
    assert as_list(status_of(table, QS)) == ["ok", "error", None]
    assert as_list(status_of(table.drop(columns=S.RUN_STATUS), QS)) == [None] * 3
    assert as_list(status_of(None, QS)) == [None] * 3


def test_a_fused_window_is_partial_when_exactly_one_source_failed():
    lexical = np.array(["ok", "ok", "error", "timeout", "ok", NAN], dtype=object)
    dense = np.array(["ok", "timeout", "ok", "error", NAN, "ok"], dtype=object)
    assert as_list(fused_status(lexical, dense)) == ["ok", "partial", "partial", "timeout",
                                                     None, None]


def test_cache_summary_counts_hits_and_misses_over_documents_and_queries():
    counts = {"documents_encoded": 2, "documents_cached": 6, "queries_encoded": 0,
              "queries_cached": 2}
    assert cache_summary(counts) == {"hits": 8, "misses": 2, "hit_rate": 0.8}
    assert cache_summary({"documents_encoded": 0, "documents_cached": 0})["hit_rate"] is None


def test_the_dense_route_reports_its_embedding_cache_hits(tmp_path, monkeypatch):
    monkeypatch.setattr(Encoder, "__call__", lambda self, texts: np.eye(len(texts), 8,
                                                                        dtype=np.float32))
    docs = documents(doc("a", "reset a password"), doc("b", "printer paper jam"))
    qs = queries(query("q", "password"), query("r", "printer"))
    caches = []
    for _ in range(2):  # a cold cache, then a warm one
        retriever = DenseRetriever(cache_dir=tmp_path)
        retriever.index(docs)
        caches.append(retriever.search(qs, 2, Visibility(docs)).stats["embedding_cache"])
    assert caches == [{"hits": 0, "misses": 4, "hit_rate": 0.0},
                      {"hits": 4, "misses": 0, "hit_rate": 1.0}]
