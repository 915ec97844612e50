"""The exact deep re-search: routes re-run exactly and deep, under the visibility rule."""

from releval.data import contracts as S
from releval.retrieval.bm25 import BM25System
from releval.retrieval.deep import exact_ranks
from releval.retrieval.external import ExternalSystem
from tests.frames import doc, documents, queries, query


def test_exact_ranks_reruns_scored_routes_under_visibility_and_skips_external():
    docs = documents(doc("p", "printer paper jam"), doc("s", "printer secret", acl=["hr"]),
                     doc("t", "printer toner"), doc("x", "lunch menu"))
    qs = queries(query("q1", "printer jam"), query("q2", "printer"))
    configs = {"lex": BM25System(), "ext": ExternalSystem(path="nowhere.trec")}
    out = exact_ranks(configs, docs, qs, ["q1"], deep_k=5)
    assert list(out.columns) == list(S.DEEP_COLUMNS)
    assert set(out["route_system"]) == {"lex"} and set(out[S.QUERY_ID]) == {"q1"}
    assert out[S.DOC_ID].tolist() == ["p", "t"]  # s is hidden, x shares no term
    assert exact_ranks(configs, docs, qs, ["q1", "q2"], deep_k=1)[S.RANK].max() == 1
