"""The exact deep re-search: routes re-run exactly and deep, under the visibility rule."""

from releval.data import contracts as S
from releval.data.history import History
from releval.params.systems import BM25System, CooccurrenceSystem, ExternalSystem, PopularitySystem
from releval.retrieval.deep import exact_ranks
from tests.frames import doc, documents, queries, query
from tests.retrieval.recs import catalogue, interactions, user_queries


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


def test_recommendation_routes_are_re_searched_from_the_same_history():
    log = interactions(("u1", "a", -5), ("u1", "b", -4), ("u2", "a", -3), ("u3", "c", -2))
    items = catalogue("a", "b", "c")
    asked = user_queries("u1", "u2", "u9")
    configs = {"pop": PopularitySystem(), "cooc": CooccurrenceSystem(similarity="count")}
    out = exact_ranks(configs, items, asked, ["u2@test", "u9@test"], deep_k=5,
                      history=History.of(log, asked, True))
    got = {(s, q): list(g[S.DOC_ID]) for (s, q), g in out.groupby(["route_system", S.QUERY_ID])}
    assert got == {("pop", "u2@test"): ["b", "c"], ("pop", "u9@test"): ["a", "b", "c"],
                   ("cooc", "u2@test"): ["b"]}  # u9 has no profile
