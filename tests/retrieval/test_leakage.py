"""The random-split leakage check: a trend only the future shows flatters the random split,
and on the real online-retail log the co-occurrence route is inflated by it."""

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.history import History
from releval.errors import InputError
from releval.params.systems import BM25System, CooccurrenceSystem, PopularitySystem
from releval.retrieval.leakage import random_split
from tests.retrieval.recs import (
    catalogue,
    days,
    interactions,
    online_retail,
    user_queries,
)

USERS = [f"u{i:02d}" for i in range(60)]
# Every user bought one of three old items before the cut and the new item z after it.
LOG = interactions(*((u, f"o{i % 3}", -60 + i) for i, u in enumerate(USERS)),
                   *((u, "z", 1 + i / 10) for i, u in enumerate(USERS)))
ITEMS = catalogue("o0", "o1", "o2", "z", published={"z": 1})
QUERIES = user_queries(*USERS)
QRELS = pd.DataFrame({S.QUERY_ID: QUERIES[S.QUERY_ID], S.DOC_ID: "z", S.GRADE: 1})


def check(configs, queries=QUERIES, seed=0):
    return random_split(configs, ITEMS, queries, QRELS, History.of(LOG, queries, True),
                        horizon_days=10, seed=seed)


def test_a_trend_of_the_test_window_is_invisible_forward_and_leaks_into_a_random_split():
    report = check({"pop": PopularitySystem()})
    assert (report["interactions"], report["held_out"], report["share"]) == (120, 60, 0.5)
    assert report["cut"] == "2024-06-01T00:00:00+00:00"
    assert report["issued_at"] == days(10).isoformat() and report["queries"] == 60
    assert "regardless of time" in report["protocol"]
    pop = report["systems"]["pop"]
    # forward: z is not on sale at the cut, so no user's positive can be recommended; random:
    # a held-out item (z, or the user's old item) is one of the four items, all still bought
    # by others in the kept part, so always in the window (users with nothing held out: no
    # positive, undefined)
    assert pop["route"] == "popularity"
    assert pop["forward"] == {"HR@10": 0.0, "nDCG@10": 0.0, "n": 60}
    assert pop["random"]["HR@10"] == 1.0 and 30 <= pop["random"]["n"] < 60
    assert pop["inflation"]["HR@10"] == 1.0 and pop["ratio"] == {"HR@10": None, "nDCG@10": None}
    assert check({"pop": PopularitySystem()}) == report  # seeded
    assert check({"pop": PopularitySystem()}, seed=1)["systems"]["pop"]["random"] != pop["random"]


def test_only_routes_fitted_on_the_log_and_one_cut_are_accepted():
    with pytest.raises(InputError, match="system lex \\(route bm25\\) is not fitted"):
        check({"lex": BM25System()})
    two = pd.concat([QUERIES.iloc[:2], user_queries("u03", at=days(-5))])
    with pytest.raises(InputError, match="must share one cut, got 2"):
        check({"pop": PopularitySystem()}, queries=two)


def test_on_the_real_log_a_random_split_inflates_cooccurrence():
    documents, queries, qrels, history = online_retail()
    report = random_split({"cooc": CooccurrenceSystem()}, documents, queries, qrels, history,
                          horizon_days=30, seed=0)
    cooc = report["systems"]["cooc"]
    assert cooc["forward"]["n"] == qrels[S.QUERY_ID].nunique()
    for measure in ("HR@10", "nDCG@10"):
        assert cooc["random"][measure] > cooc["forward"][measure] > 0
        assert cooc["inflation"][measure] > 0 and cooc["ratio"][measure] > 1
    assert 0 < report["share"] < 0.5
