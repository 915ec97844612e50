"""The dense route's sharded search against the single index, on the demo corpus with stored
random vectors (nothing is encoded): exact windows bit for bit on Local and on a 2-worker
Dask cluster, visibility per shard, IVF and HNSW shards with their ANN recall."""

import hashlib

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility, forbidden_reasons
from releval.demo.generator import generate
from releval.errors import InputError
from releval.executor import Local, opened, using
from releval.params.executor import DaskSettings, Shards
from releval.params.systems import DenseSystem
from releval.retrieval.dense import DenseRetriever
from releval.retrieval.dense_shards import search_sharded
from releval.retrieval.routes import ROUTES, search

DEPTH = 20
LAYOUTS = [  # (documents per shard, queries per block)
    (1000, 100),  # even-ish: 4 shards, the last of 42 documents
    (777, 37),  # uneven shards and blocks, cut inside scoring tiles
    (128, 300),  # many small shards, one block
    (10_000, 7),  # one shard, small blocks
]


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def stored(folder, vectors) -> tuple[pd.DataFrame, pd.DataFrame, DenseSystem]:
    """(documents, queries, config): the demo tables, their vectors stored in the cache
    under ``folder`` (documents: ``vectors(texts)``; queries: random)."""
    data = generate(n_docs=3000, n_queries=300, seed=3)
    config = DenseSystem(cache_dir=str(folder))
    retriever = DenseRetriever(**config.model_dump(exclude={"route"}))
    retriever.document_cache.encode(retriever.document_texts(data.documents), vectors)
    retriever.query_cache.encode(data.queries[S.TEXT].fillna("").astype(str).tolist(),
                                 lambda texts: unit(np.random.default_rng(1).standard_normal(
                                     (len(texts), 384), dtype=np.float32)))
    return data.documents, data.queries, config


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Documents drawn from 2,048 vectors by their text's digest, so many documents tie."""
    pool = unit(np.random.default_rng(0).standard_normal((2048, 384), dtype=np.float32))
    return stored(tmp_path_factory.mktemp("tied"), lambda texts: pool[
        [hashlib.sha256(t.encode()).digest()[0] * 8 + len(t) % 8 for t in texts]])


@pytest.fixture(scope="module")
def distinct(tmp_path_factory):
    """A vector of its own for every text: ties only between documents of the same text (which
    BLAS may score in different last bits at different places, so they are ordered alike
    only by the same scorer)."""
    return stored(tmp_path_factory.mktemp("distinct"), lambda texts: unit(
        np.random.default_rng(2).standard_normal((len(texts), 384), dtype=np.float32)))


@pytest.fixture(scope="module")
def single(corpus):
    """The single index's exact search of the corpus."""
    documents, queries, config = corpus
    return search(config, documents, queries, DEPTH)


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 workers, made active only where a test says so."""
    with opened("dask", DaskSettings(n_workers=2)) as dask, using(Local()):
        yield dask


def same_windows(got, want):
    pd.testing.assert_frame_equal(got.run, want.run, check_exact=True)
    assert np.array_equal(got.run[S.SCORE].to_numpy().view(np.int64),
                          want.run[S.SCORE].to_numpy().view(np.int64))  # bit for bit
    assert {k: v for k, v in got.stats.items() if k != "shards"} == want.stats
    assert got.latency_ms.shape == want.latency_ms.shape and (got.latency_ms > 0).all()


def test_the_dense_route_registers_its_sharded_search():
    assert ROUTES["dense"].sharded is search_sharded
    assert {"nlist", "nprobe", "ann_sample"} <= set(ROUTES["dense"].ann_knobs)


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{d}x{q}" for d, q in LAYOUTS])
def test_sharded_exact_equals_the_single_index_bit_for_bit(corpus, single, layout):
    documents, queries, config = corpus
    with opened("local"):
        got = search(config, documents, queries, DEPTH,
                     shards=Shards(documents=layout[0], queries=layout[1]))
    same_windows(got, single)
    assert got.stats["shards"]["document_shards"] == -(-len(documents) // layout[0])
    assert got.run[S.SCORE].duplicated().any()  # tied documents, ordered as by one index


def test_the_single_index_is_the_same_whatever_its_batches(corpus, single):
    documents, queries, config = corpus
    retriever = DenseRetriever(**config.model_dump(exclude={"route"}), search_batch=45)
    retriever.index(documents)
    same_windows(retriever.search(queries, DEPTH, Visibility(documents)), single)


def test_the_similarity_floor_cuts_the_merged_windows(corpus):
    documents, queries, config = corpus
    floor = config.model_copy(update={"min_score": 0.12})
    want = search(floor, documents, queries, DEPTH)
    got = search(floor, documents, queries, DEPTH, shards=Shards(documents=700, queries=64))
    same_windows(got, want)
    assert 0 < len(got.run) < len(queries) * DEPTH and got.run[S.SCORE].min() >= 0.12


def test_sharded_exact_on_a_dask_cluster_equals_the_single_index(corpus, single, cluster):
    documents, queries, config = corpus
    with using(cluster):
        for layout in ((1000, 100), (777, 37)):
            got = search(config, documents, queries, DEPTH,
                         shards=Shards(documents=layout[0], queries=layout[1]))
            same_windows(got, single)
            # the workers the cluster had (2, less one a loaded machine is restarting)
            assert 1 <= got.stats["shards"]["workers"] == cluster.workers <= 2
        hnsw = search(config.model_copy(update={"index": "hnsw"}), documents, queries, DEPTH,
                      shards=Shards(documents=1000, queries=100))
    assert 0.9 <= hnsw.stats[f"ann_recall@{DEPTH}"] <= 1.0


def full_and_allowed(candidates, documents, queries, depth):
    """No forbidden document, and each window holds min(depth, documents it may see)."""
    run = candidates.run
    assert (forbidden_reasons(run, queries, documents) == "").all()
    sizes = run.groupby(S.QUERY_ID).size().reindex(queries[S.QUERY_ID], fill_value=0)
    visible = Visibility(documents).mask(queries).sum(axis=1)
    np.testing.assert_array_equal(sizes.to_numpy(), np.minimum(visible, depth))
    assert (run.groupby(S.QUERY_ID)[S.RANK].max() == run.groupby(S.QUERY_ID).size()).all()
    return visible


def test_shards_apply_visibility_and_fill_windows_as_the_single_index(corpus, single):
    documents, queries, config = corpus
    full_and_allowed(single, documents, queries, DEPTH)
    depth = 100
    want = search(config, documents, queries, depth)
    visible = full_and_allowed(want, documents, queries, depth)
    assert (visible < depth).any() and (visible < len(documents) / 10).any()  # rules bite
    layout = Shards(documents=500, queries=128)
    for kind in ("exact", "hnsw", "ivf"):
        ann = {"index": kind, "nlist": 16, "nprobe": 1, "ef_search": 8, "hnsw_m": 4}
        got = search(config.model_copy(update=ann), documents, queries, depth, shards=layout)
        full_and_allowed(got, documents, queries, depth)
        if kind == "exact":
            same_windows(got, want)


@pytest.mark.parametrize("shards", [None, Shards(documents=1000, queries=100)],
                         ids=["single", "sharded"])
def test_ivf_windows_and_ann_recall(distinct, shards):
    documents, queries, config = distinct
    exact = search(config, documents, queries, DEPTH)
    ivf = config.model_copy(update={"index": "ivf", "nlist": 32, "nprobe": 2})
    some = search(ivf, documents, queries, DEPTH, shards=shards)
    full_and_allowed(some, documents, queries, DEPTH)
    recall = some.stats[f"ann_recall@{DEPTH}"]
    assert 0 <= recall < 1 and some.stats["index"] == "ivf"
    assert some.stats["ann_recall_sample"] == exact.run[S.QUERY_ID].nunique()
    every = search(ivf.model_copy(update={"nprobe": 32}), documents, queries, DEPTH,
                   shards=shards)
    assert every.stats[f"ann_recall@{DEPTH}"] == 1.0
    pairs = [set(zip(c.run[S.QUERY_ID], c.run[S.DOC_ID], strict=True)) for c in (every, exact)]
    assert pairs[0] == pairs[1]
    sampled = search(ivf.model_copy(update={"ann_sample": 50}), documents, queries, DEPTH,
                     shards=shards)
    assert 40 <= sampled.stats["ann_recall_sample"] <= 50
    assert 0 <= sampled.stats[f"ann_recall@{DEPTH}"] <= 1


def test_ivf_lists_are_clipped_to_the_shard_and_builds_repeat(corpus):
    documents, queries, config = corpus
    ivf = config.model_copy(update={"index": "ivf", "nlist": 10**6, "nprobe": 4})
    layout = Shards(documents=900, queries=300)
    first = search(ivf, documents, queries, DEPTH, shards=layout)
    full_and_allowed(first, documents, queries, DEPTH)
    pd.testing.assert_frame_equal(search(ivf, documents, queries, DEPTH, shards=layout).run,
                                  first.run)


def test_hnsw_shards_report_their_recall(corpus, single):
    documents, queries, config = corpus
    hnsw = config.model_copy(update={"index": "hnsw", "hnsw_m": 4, "ef_construction": 8,
                                     "ef_search": 4})
    got = search(hnsw, documents, queries, DEPTH, shards=Shards(documents=1000, queries=100))
    full_and_allowed(got, documents, queries, DEPTH)
    assert 0 <= got.stats[f"ann_recall@{DEPTH}"] <= 1 and got.stats["index"] == "hnsw"
    assert got.stats["ann_recall_sample"] == single.run[S.QUERY_ID].nunique()


def test_bad_input(corpus):
    documents, queries, config = corpus
    layout = Shards(documents=1000, queries=100)
    with pytest.raises(InputError, match="no documents"):
        search_sharded(config, documents.iloc[:0], queries, DEPTH, layout)
    with pytest.raises(InputError, match="is not unique"):
        search_sharded(config, pd.concat([documents, documents.iloc[:1]]), queries, DEPTH,
                       layout)
    with pytest.raises(InputError, match="depth"):
        search_sharded(config, documents, queries, 0, layout)
    with pytest.raises(InputError, match="missing column"):
        search_sharded(config, documents.drop(columns=S.TITLE), queries, DEPTH, layout)
    with pytest.raises(InputError, match="index must be one of exact, hnsw, ivf"):
        DenseRetriever(index="annoy", cache_dir=config.cache_dir)
