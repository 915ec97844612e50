"""The BM25 route's sharded search against the single index: the same run bit for bit on the
demo corpus (every method, uneven, many and one shard) on Local and on a 2-worker Dask
cluster, visibility per shard before the merge, corpus-wide statistics in every shard."""

import math

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility, forbidden_reasons
from releval.demo.generator import generate
from releval.errors import InputError
from releval.executor import opened, using
from releval.params.executor import DaskSettings, Shards
from releval.params.systems import BM25System
from releval.retrieval.bm25 import BM25Retriever
from releval.retrieval.bm25_shards import search_sharded
from releval.retrieval.routes import ROUTES, search
from tests.frames import AFTER, doc, documents, queries, query

DEPTH = 20
LAYOUTS = [  # (documents per shard, queries per block, queries per sub-batch)
    (1000, 500, 256),  # one shard, one block
    (250, 45, 7),  # uneven shards (the last of 100) and blocks, several sub-batches
    (37, 300, 256),  # many small shards
]
SYSTEMS = [BM25System(method="lucene"), BM25System(method="robertson", k1=1.2, b=0.6),
           BM25System(method="atire", k1=0.9, b=0.3)]


@pytest.fixture(scope="module")
def demo() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = generate(n_docs=600, n_queries=200, seed=5)
    return data.documents, data.queries


def single(config: BM25System, docs: pd.DataFrame, qs: pd.DataFrame, depth: int = DEPTH):
    retriever = BM25Retriever(**config.model_dump(exclude={"route"}))
    retriever.index(docs)
    return retriever.search(qs, depth, Visibility(docs))


@pytest.fixture(scope="module")
def expected(demo) -> dict[str, pd.DataFrame]:
    return {c.method: single(c, *demo).run for c in SYSTEMS}


@pytest.mark.parametrize("config", SYSTEMS, ids=lambda c: c.method)
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_sharded_equals_the_single_index_bit_for_bit(demo, expected, config, layout):
    docs, qs = demo
    n_docs, n_queries, batch = layout
    with opened("local"):
        got = search_sharded(config.model_copy(update={"batch_size": batch}), docs, qs, DEPTH,
                             Shards(documents=n_docs, queries=n_queries))
    pd.testing.assert_frame_equal(got.run, expected[config.method], check_exact=True)
    assert len(got.latency_ms) == len(qs) and (got.latency_ms > 0).all()
    assert got.stats["shards"] == {
        "document_shards": -(-len(docs) // n_docs), "documents_per_shard": n_docs,
        "query_blocks": -(-len(qs) // n_queries), "queries_per_block": n_queries,
        "workers": 1}


FORBIDDEN = [doc(f"x{i}", "quasar quasar", **rule) for i, rule in enumerate([
    {"tenant": "B"}, {"status": "draft"}, {"published": AFTER},
    {"status": "deleted", "deleted": "2024-03-01"}, {"acl": ["finance"]}])]
VISIBLE = [doc(f"v{i}", f"quasar weather report {'note ' * i}") for i in range(4)]


def test_visibility_applies_in_each_shard_before_its_top_k(demo):
    """Every shard's best matches are forbidden: a shard that cut to depth before dropping
    them would return short windows."""
    docs = documents(*FORBIDDEN[:3], VISIBLE[0], *FORBIDDEN[3:], *VISIBLE[1:])
    qs = queries(query("q", "quasar"), query("admin", "quasar", role="admin"))
    want = single(BM25System(), docs, qs, depth=3).run
    for size in (1, 3, 4, 20):
        got = search_sharded(BM25System(), docs, qs, 3, Shards(documents=size, queries=1))
        pd.testing.assert_frame_equal(got.run, want, check_exact=True)
    assert got.run.loc[got.run[S.QUERY_ID] == "q", S.DOC_ID].tolist() == ["v0", "v1", "v2"]
    demo_docs, demo_qs = demo
    got = search_sharded(BM25System(), demo_docs, demo_qs, DEPTH, Shards(documents=50))
    assert (forbidden_reasons(got.run, demo_qs, demo_docs) == "").all()
    counts = got.run.groupby(S.QUERY_ID).size()
    alone = single(BM25System(), demo_docs, demo_qs).run.groupby(S.QUERY_ID).size()
    pd.testing.assert_series_equal(counts, alone)


def test_a_term_of_one_shard_gets_the_corpus_idf():
    """"zebra" is only in shard 0 (N = 2 there, 4 in all): its score uses N = 4, df = 1 and
    the corpus' average length, with bm25s' float32 roundings; a repeated query term counts
    twice."""
    docs = documents(doc("a", "zebra apple"), doc("b", "apple pie crust"),
                     doc("c", "apple tart"), doc("d", "apple crumble topping golden"))
    qs = queries(query("q", "zebra"), query("twice", "zebra zebra"))
    got = search_sharded(BM25System(), docs, qs, 5, Shards(documents=2)).run
    idf = np.float32(math.log(1 + (4 - 1 + 0.5) / (1 + 0.5)))
    tfc = 1 / (1.5 * ((1 - 0.75) + 0.75 * 2 / np.float64(11 / 4)) + np.float32(1))
    zebra = np.float32(np.float64(idf) * tfc)
    assert got[S.DOC_ID].tolist() == ["a", "a"]
    assert got[S.SCORE].tolist() == [float(zebra), float(zebra + zebra)]
    pd.testing.assert_frame_equal(got, single(BM25System(), docs, qs, depth=5).run,
                                  check_exact=True)
    alone = single(BM25System(), docs.iloc[:2], qs.iloc[:1], depth=5).run
    assert alone[S.SCORE].iloc[0] != got[S.SCORE].iloc[0]  # shard statistics would differ


def test_registered_as_the_bm25_route_sharded_search_and_bad_input(demo):
    docs, qs = demo
    assert ROUTES["bm25"].sharded is search_sharded
    got = search(BM25System(), docs, qs.head(20), DEPTH, shards=Shards(documents=200))
    assert got.stats["shards"]["document_shards"] == -(-len(docs) // 200)
    pd.testing.assert_frame_equal(got.run, search(BM25System(), docs, qs.head(20), DEPTH).run,
                                  check_exact=True)
    with pytest.raises(InputError, match="query_id 'q' is not unique"):
        search_sharded(BM25System(), docs, queries(query("q"), query("q")), 5, Shards())
    with pytest.raises(InputError, match="doc_id 'v0' is not unique"):
        search_sharded(BM25System(), documents(*VISIBLE, VISIBLE[0]), qs, 5, Shards())
    with pytest.raises(InputError, match="no documents"):
        search_sharded(BM25System(), docs.iloc[:0], qs, 5, Shards())
    with pytest.raises(InputError, match="depth"):
        search_sharded(BM25System(), docs, qs, 0, Shards())
    with pytest.raises(InputError, match="stemmer"):
        search_sharded(BM25System(stemmer="klingon"), docs, qs, 5, Shards())


@pytest.fixture(scope="module")
def cluster():
    with opened("dask", DaskSettings(n_workers=2)) as executor:
        yield executor


@pytest.mark.parametrize("config", SYSTEMS, ids=lambda c: c.method)
def test_sharded_on_a_dask_cluster_equals_the_single_index(demo, expected, cluster, config):
    docs, qs = demo
    with using(cluster):
        got = search_sharded(config, docs, qs, DEPTH, Shards(documents=170, queries=90))
    pd.testing.assert_frame_equal(got.run, expected[config.method], check_exact=True)
    # the workers the cluster had (2, less one a loaded machine's nanny is restarting)
    assert 1 <= got.stats["shards"]["workers"] == cluster.workers <= 2
