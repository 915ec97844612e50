"""The popularity route on a hand-made log: trailing-window counts per cut, ties, visibility,
seen items, held-out users, depth."""

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.history import History
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.params.systems import PopularitySystem
from releval.retrieval.popularity import PopularityRetriever
from releval.retrieval.routes import search
from tests.retrieval.recs import catalogue, days, interactions, user_queries, windows

LOG = interactions(
    ("u1", "a", -12), ("u1", "b", -7),
    ("u2", "a", -4), ("u2", "e", -3),
    ("u3", "a", -2, 0),  # a cancellation: not counted
    ("u3", "c", -143),  # before the 90-day window of the test cut, inside the validation one
    ("u3", "f", -1), ("u2", "f", -1), ("u1", "f", -1),  # f: not published until after the cut
    ("u3", "b", 5),  # after the cut
)
ITEMS = catalogue("f", "e", "d", "c", "b", "a", published={"f": 30})


def recommend(queries, log=LOG, depth=10, exclude_seen=True, **params):
    history = History.of(log, queries, exclude_seen)
    return search(PopularitySystem(**params), ITEMS, queries, depth, history=history)


def test_scores_count_the_positives_of_the_trailing_window_with_ties_by_doc_id():
    got = recommend(user_queries("u9"))
    # a: u1 and u2 (u3's is a cancellation); b, e: one each, tied -> doc_id order; c is too
    # old, b's second purchase comes after the cut, f is not published yet, d never sold
    assert windows(got.run) == {"u9@test": [("a", 2.0), ("b", 1.0), ("e", 1.0)]}
    assert got.run[S.RANK].tolist() == [1, 2, 3]
    assert windows(recommend(user_queries("u9"), window_days=200).run)["u9@test"] == [
        ("a", 2.0), ("b", 1.0), ("c", 1.0), ("e", 1.0)]


def test_each_cut_counts_its_own_window_once():
    queries = pd.concat([user_queries("u9", "u8"),
                         user_queries("u9", at=days(-100), split="validation")])
    got = recommend(queries)
    assert windows(got.run)["u9@validation"] == [("c", 1.0)]  # 143 days before t2: in t1's
    assert windows(got.run)["u8@test"] == windows(got.run)["u9@test"]
    assert [f["interactions"] for f in got.stats["fitting"]] == [1, 8]  # t1 then t2
    assert got.stats["empty_profile"] == 3
    assert len(got.latency_ms) == 3 and (got.latency_ms > 0).all()


def test_seen_items_are_excluded_only_when_asked():
    queries = user_queries("u1", "u2")
    assert windows(recommend(queries).run) == {"u1@test": [("e", 1.0)],
                                               "u2@test": [("b", 1.0)]}
    assert windows(recommend(queries, exclude_seen=False).run)["u1@test"] == [
        ("a", 2.0), ("b", 1.0), ("e", 1.0)]


def test_held_out_users_are_not_counted_but_their_own_items_are_excluded():
    got = recommend(user_queries("u2", "u9", held_out={"u2"}))
    assert windows(got.run) == {"u2@test": [("b", 1.0)],  # a, e: u2's own
                                "u9@test": [("a", 1.0), ("b", 1.0)]}  # u2's a, e not counted
    assert got.stats["fitting"][0]["users"] == 2


def test_depth_cuts_the_window_and_search_is_deterministic():
    queries = user_queries("u9", "u8")
    once, again = recommend(queries, depth=2), recommend(queries, depth=2)
    pd.testing.assert_frame_equal(once.run, again.run)
    assert windows(once.run)["u9@test"] == [("a", 2.0), ("b", 1.0)]


def test_a_route_needing_history_without_it_is_an_input_error():
    with pytest.raises(InputError, match="route popularity recommends from an interaction log"):
        search(PopularitySystem(), ITEMS, user_queries("u9"), 10)
    retriever = PopularityRetriever()
    with pytest.raises(RuntimeError, match="before index"):
        retriever.search(user_queries("u9"), 10, Visibility(ITEMS))
    retriever.index(ITEMS, History(LOG))
    with pytest.raises(InputError, match="different documents table"):
        retriever.search(user_queries("u9"), 10, Visibility(ITEMS.iloc[1:]))
