"""The BM25 route on tiny inline corpora: ranking, visibility, window filling, contracts."""

import bm25s
import numpy as np
import pandas as pd
import pytest
import Stemmer

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.retrieval.base import run_stats
from releval.retrieval.bm25 import BM25Retriever
from releval.retrieval.routes import ROUTES, make_retriever
from tests.frames import AFTER, BEFORE, doc, documents, queries, query


def search(docs, qs, depth=10, visibility=None, **params):
    retriever = BM25Retriever(**params)
    retriever.index(docs)
    return retriever.search(qs, depth, visibility or Visibility(docs))


def ranked(candidates, query_id="q") -> list[str]:
    run = candidates.run
    return run.loc[run[S.QUERY_ID] == query_id].sort_values(S.RANK)[S.DOC_ID].tolist()


FILLER = "weather report sunny afternoon"
# Five documents that match "quasar" best, each forbidden to the query by one rule.
FORBIDDEN = [
    doc("x-tenant", "quasar quasar", tenant="B"),
    doc("x-draft", "quasar quasar", status="draft"),
    doc("x-future", "quasar quasar", published=AFTER),
    doc("x-deleted", "quasar quasar", status="deleted", deleted="2024-03-01"),
    doc("x-acl", "quasar quasar", acl=["finance"]),
]
# Visible documents that mention "quasar" once in a longer text, so they score lower.
VISIBLE = [doc(f"v{i}", f"quasar {FILLER} {'note ' * i}") for i in range(4)]
NOISE = [doc(f"n{i}", f"{FILLER} gardening tips {i}") for i in range(3)]


def permissive(docs: pd.DataFrame) -> Visibility:
    """Visibility of the same doc_ids where everything is published to tenant A for all."""
    return Visibility(docs.assign(**{S.PUBLISHED_AT: pd.Timestamp(BEFORE, tz="UTC"),
                                      S.STATUS: "published", S.DELETED_AT: pd.NaT,
                                      S.TENANT: "A", S.ACL: [[] for _ in range(len(docs))]}))


def test_exact_term_query_ranks_the_doc_with_the_term_first():
    docs = documents(doc("a", "kafka consumer lag"), doc("b", "zookeeper election timeout"),
                     doc("c", "consumer group rebalance"), *NOISE)
    got = ranked(search(docs, queries(query("q", "zookeeper"))))
    assert got == ["b"]
    assert ranked(search(docs, queries(query("q", "consumer lag"))))[:2] == ["a", "c"]


def test_title_is_indexed_with_the_text():
    docs = documents(doc("a", "nothing here", title="Quarterly budget"), *NOISE)
    assert ranked(search(docs, queries(query("q", "budget")))) == ["a"]


def test_forbidden_documents_never_appear_even_when_they_match_best():
    docs = documents(*FORBIDDEN, *VISIBLE, *NOISE)
    qs = queries(query("q", "quasar"))
    unrestricted = ranked(search(docs, qs, visibility=permissive(docs)))
    assert set(unrestricted[:5]) == {d[S.DOC_ID] for d in FORBIDDEN}  # they do match best
    got = ranked(search(docs, qs))
    assert got == ["v0", "v1", "v2", "v3"]


def test_window_is_filled_to_depth_below_forbidden_top_scorers():
    docs = documents(*FORBIDDEN, *VISIBLE, *NOISE)
    qs = queries(query("q", "quasar"))
    assert ranked(search(docs, qs, depth=3)) == ["v0", "v1", "v2"]
    assert ranked(search(docs, qs, depth=4)) == ["v0", "v1", "v2", "v3"]
    assert ranked(search(docs, qs, depth=50)) == ["v0", "v1", "v2", "v3"]  # score 0: not in


def test_admin_sees_acl_restricted_documents_of_its_tenant_only():
    docs = documents(*FORBIDDEN, *VISIBLE)
    got = ranked(search(docs, queries(query("q", "quasar", groups=(), role="admin"))))
    assert got == ["x-acl", "v0", "v1", "v2", "v3"]


def test_ranks_contiguous_and_scores_non_increasing():
    docs = documents(*FORBIDDEN, *VISIBLE, *NOISE, doc("w", "sunny quasar weather"))
    qs = queries(query("q1", "quasar weather"), query("q2", "sunny afternoon tips"),
                 query("q3", "quasar"))
    run = search(docs, qs, depth=5).run
    assert list(run.columns) == [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]
    assert run[S.RANK].dtype == np.int64 and run[S.SCORE].dtype == np.float64
    assert set(run[S.QUERY_ID]) == {"q1", "q2", "q3"}
    for _, group in run.groupby(S.QUERY_ID):
        assert group[S.RANK].tolist() == list(range(1, len(group) + 1))
        assert (np.diff(group[S.SCORE].to_numpy()) <= 0).all()
        assert group[S.SCORE].gt(0).all() and group[S.DOC_ID].is_unique
    assert not run[S.SCORE].isna().any()


def test_ties_break_by_doc_id_ascending_also_at_the_cut():
    docs = documents(doc("m", "tied words"), doc("c", "tied words"), doc("x", "tied words"),
                     *NOISE)
    candidates = search(docs, queries(query("q", "tied")), depth=2)
    assert ranked(candidates) == ["c", "m"]
    assert candidates.run[S.SCORE].nunique() == 1


def test_scores_equal_bm25s_scores():
    docs = documents(*VISIBLE, *NOISE, doc("r", "runners running runs"))
    got = search(docs, queries(query("q", "quasar running weather")), depth=20).run
    texts = (docs[S.TITLE] + " " + docs[S.TEXT]).tolist()
    stemmer = Stemmer.Stemmer("english")
    bm25 = bm25s.BM25()
    bm25.index(bm25s.tokenize(texts, stemmer=stemmer, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize(["quasar running weather"], stemmer=stemmer, return_ids=False,
                            show_progress=False)[0]
    expected = pd.Series(bm25.get_scores(tokens), index=docs[S.DOC_ID])
    expected = expected[expected > 0]
    assert sorted(got[S.DOC_ID]) == sorted(expected.index)
    np.testing.assert_allclose(got.set_index(S.DOC_ID)[S.SCORE], expected[got[S.DOC_ID]],
                               rtol=1e-6)


def test_guest_with_only_internal_matches_gets_an_empty_window():
    docs = documents(doc("i1", "payroll schedule", acl=["internal"]),
                     doc("i2", "payroll export", acl=["internal"]), *NOISE)
    qs = queries(query("guest", "payroll", groups=(), role="guest"),
                 query("staff", "payroll", groups=("internal",)))
    candidates = search(docs, qs)
    assert ranked(candidates, "guest") == []
    assert sorted(ranked(candidates, "staff")) == ["i1", "i2"]
    assert run_stats(candidates, qs)["candidates_per_query"]["empty"] == 1


def score(candidates, doc_id) -> float:
    run = candidates.run
    return float(run.loc[run[S.DOC_ID] == doc_id, S.SCORE].iloc[0])


def test_parameters_change_scores():
    docs = documents(doc("a", "runs runs fast track"), doc("b", f"runs {FILLER} {FILLER}"),
                     *NOISE)
    qs = queries(query("q", "runs"))
    base = search(docs, qs)
    assert score(search(docs, qs, k1=0.5), "a") != pytest.approx(score(base, "a"))
    assert score(search(docs, qs, b=0.0), "b") != pytest.approx(score(base, "b"))
    assert score(search(docs, qs, b=0.0), "b") > score(base, "b")  # no length penalty
    running = queries(query("q", "running"))
    assert ranked(search(docs, running)) == ["a", "b"]  # stemmed: running ~ runs
    assert ranked(search(docs, running, stemmer=None)) == []


def test_run_stats_keys_and_values():
    docs = documents(*VISIBLE, *NOISE)
    qs = queries(query("q1", "quasar"), query("q2", "gardening"), query("q3", "unmatched"))
    stats = run_stats(search(docs, qs, depth=2), qs)
    assert stats["n_queries"] == 3
    assert stats["candidates_per_query"] == {"mean": pytest.approx(4 / 3), "min": 0, "max": 2,
                                             "empty": 1}
    latency = stats["latency_ms"]
    assert set(latency) == {"p50", "p95", "p99"}
    assert 0 <= latency["p50"] <= latency["p95"] <= latency["p99"]
    assert run_stats(search(docs, qs.iloc[:0]), qs.iloc[:0])["candidates_per_query"] == {
        "mean": None, "min": None, "max": None, "empty": 0}


def test_latency_is_per_query_and_batched_search_matches_one_batch():
    docs = documents(*FORBIDDEN, *VISIBLE, *NOISE)
    qs = queries(*(query(f"q{i}", t) for i, t in enumerate(["quasar", "sunny", "tips"] * 3)))
    whole = search(docs, qs, depth=3)
    batched = search(docs, qs, depth=3, batch_size=2)
    assert whole.latency_ms.shape == (9,) and (batched.latency_ms > 0).all()
    pd.testing.assert_frame_equal(whole.run, batched.run)


def test_registry_and_bad_input():
    assert ROUTES["bm25"].retriever is BM25Retriever
    assert make_retriever("bm25", k1=1.2).k1 == 1.2
    with pytest.raises(InputError, match="unknown route 'splade'.*known routes: bm25"):
        make_retriever("splade")
    with pytest.raises(InputError, match="k2"):
        make_retriever("bm25", k2=1.0)
    with pytest.raises(InputError, match="method"):
        BM25Retriever(method="bm25+")
    with pytest.raises(InputError, match="stemmer"):
        BM25Retriever(stemmer="klingon")
    with pytest.raises(InputError, match="stopwords"):
        BM25Retriever(stopwords="klingon")
    docs = documents(*VISIBLE)
    with pytest.raises(InputError, match="depth"):
        search(docs, queries(query("q", "quasar")), depth=0)
    with pytest.raises(InputError, match="different documents"):
        search(docs, queries(query("q", "quasar")), visibility=Visibility(docs.iloc[::-1]))
    with pytest.raises(InputError, match="doc_id 'v0' is not unique"):
        BM25Retriever().index(documents(*VISIBLE, VISIBLE[0]))
    with pytest.raises(InputError, match="query_id 'q' is not unique"):
        search(docs, queries(query("q", "a"), query("q", "b")))


SCRIPT = """
import hashlib, sys
import numpy as np
from releval.data.visibility import Visibility
from releval.demo.generator import generate
from releval.retrieval.bm25 import BM25Retriever
data = generate(n_docs=200, n_queries=40, seed=5)
texts = data.documents["text"].str.split().str[:6].str.join(" ")
queries = data.queries.head(len(texts)).assign(text=texts.head(40).to_numpy())
if sys.argv[1] == "reversed":
    queries = queries.assign(text=queries["text"].str.split().str[::-1].str.join(" "))
retriever = BM25Retriever()
retriever.index(data.documents)
run = retriever.search(queries, 20, Visibility(data.documents)).run
print(hashlib.sha256(run.to_csv(index=False, float_format="%.9g").encode()).hexdigest())
"""


def test_word_order_and_the_process_change_no_score_and_no_tie_order():
    """bm25s adds the query terms' float32 contributions in the order given: the route
    passes them sorted by term text, so neither the words' order nor the process's hash seed
    (which orders bm25s' term ids) changes a score or the order of ties."""
    import os
    import subprocess
    import sys

    def digest(order: str, seed: str) -> str:
        env = os.environ | {"PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", SCRIPT, order], capture_output=True,
                              text=True, check=True, env=env)
        return done.stdout.strip()

    assert len({digest("as is", "1"), digest("reversed", "2"), digest("as is", "3")}) == 1
