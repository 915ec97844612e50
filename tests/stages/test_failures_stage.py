"""Stage failures: the compared systems' misses traced to layers, on a tiny corpus."""

import pandas as pd

from releval.data import contracts as S
from releval.decision.safety import VIOLATION_COLUMNS, violations
from releval.params import Params
from stages.failures import Inputs, run
from tests.frames import doc, documents, queries, query
from tests.retrieval.recs import catalogue, interactions, user_queries

DOCS = documents(doc("p", "printer paper jam"), doc("t", "printer toner"),
                 doc("x", "lunch menu"), doc("s", "printer secret", acl=["hr"]))
QUERIES = queries(query("q1", "printer jam"))
SPLIT = pd.DataFrame({S.QUERY_ID: ["q1"], S.SPLIT: ["test"]})
JUDGED = pd.DataFrame({S.QUERY_ID: ["q1"] * 3, S.DOC_ID: ["p", "t", "x"], S.GRADE: [0, 1, 2]})
LABELS = pd.DataFrame({S.QUERY_ID: ["q1"], S.DIMENSION: ["kind"], S.SLICE: ["plain"]})
NO_ANSWERS = pd.DataFrame(columns=list(S.ANSWER_COLUMNS))
NO_LOG = pd.DataFrame(columns=list(S.INTERACTION_COLUMNS))


def window(*doc_ids):
    n = len(doc_ids)
    return pd.DataFrame({S.QUERY_ID: "q1", S.DOC_ID: list(doc_ids), S.RANK: range(1, n + 1),
                         S.SCORE: [float(n - i) for i in range(n)]})


RUNS = {"lex": window("p", "t"), "ext": window("p", "s")}
PARAMS = Params.model_validate({
    "candidates": {"systems": {"lex": {"route": "bm25"},
                               "ext": {"route": "external", "path": "run.trec"}}},
    "fusion": {"systems": {}}, "compare": {"baseline": "lex", "candidate": "ext"},
    "failures": {"k": 1, "deep_k": 10}})


def test_misses_go_to_the_first_layer_that_lost_them():
    unsafe = violations(RUNS, QUERIES, DOCS, pd.DataFrame(columns=list(S.MUST_NOT_RETURN_COLUMNS)),
                        top_k=1).assign(**{S.SPLIT: "test"})
    out = run(PARAMS, Inputs(RUNS, {}, JUDGED, QUERIES, DOCS, SPLIT, LABELS, unsafe, NO_ANSWERS,
              NO_LOG))
    layers = {(r.system, r.doc_id, r.kind): r.layer for r in out.failures.itertuples()}
    assert layers == {("lex", "t", "relevance"): "ranking",  # bm25 ranks it 2nd: below k
                      ("lex", "x", "relevance"): "representation",  # no route finds it
                      ("ext", "t", "relevance"): "ranking",  # no exact scorer to blame
                      ("ext", "x", "relevance"): "ranking",
                      ("ext", "s", "safety"): "filter"}  # the acl leak
    assert set(out.failures["stratum"]) == {"plain"}
    changed = {r["layer"]: r["difference"] for r in out.report["by_layer"]}
    assert changed["representation"] == -1 and changed["ranking"] == 1
    assert out.report["safety"] == {"lex": 0, "ext": 1} and out.report["queries"] == 1
    assert out.report["review"] is None and out.quarantine.empty
    assert len(out.worksheet) == len(out.failures)
    overall = out.summary[out.summary[S.DIMENSION] == S.ALL]
    assert overall["count"].sum() == len(out.failures)


def test_recommendation_routes_are_re_searched_deep_from_the_interaction_log():
    """u1 bought a; others bought a with b, and c alone. Popularity's window of one misses
    c (ranking: it is in the deep window); co-occurrence never reaches c (representation)."""
    log = interactions(("u1", "a", -9), ("u2", "a", -8), ("u2", "b", -8), ("u3", "a", -7),
                       ("u3", "b", -7), ("u4", "c", -6))
    users = user_queries("u1")
    p = Params.model_validate({
        "prepare": {"source": "interactions", "path": "shop"},
        "candidates": {"depth": 1, "systems": {"pop": {"route": "popularity"},
                                               "cooc": {"route": "cooccurrence"}}},
        "fusion": {"systems": {}}, "compare": {"baseline": "pop", "candidate": "cooc"},
        "failures": {"k": 1, "deep_k": 10}})
    window = pd.DataFrame({S.QUERY_ID: ["u1@test"], S.DOC_ID: ["b"], S.RANK: [1],
                           S.SCORE: [1.0]})
    judged = pd.DataFrame({S.QUERY_ID: ["u1@test"] * 2, S.DOC_ID: ["c", "b"], S.GRADE: [1, 0]})
    split = pd.DataFrame({S.QUERY_ID: ["u1@test"], S.SPLIT: ["test"]})
    labels = pd.DataFrame({S.QUERY_ID: ["u1@test"], S.DIMENSION: ["kind"], S.SLICE: ["plain"]})
    no_violations = pd.DataFrame(columns=[*VIOLATION_COLUMNS, S.SPLIT])
    out = run(p, Inputs({"pop": window, "cooc": window}, {}, judged, users, catalogue("a", "b",
                                                                                      "c"),
              split, labels, no_violations, NO_ANSWERS, log))
    layers = {r.system: r.layer for r in out.failures.itertuples()}
    assert layers == {"pop": "ranking", "cooc": "representation"}
