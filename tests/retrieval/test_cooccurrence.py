"""The co-occurrence route on a hand-made log: count, cosine and jaccard sums over the
user's distinct items, held-out users served from their own history, visibility, no profile."""

import math

import pytest

from releval.data.history import History
from releval.errors import InputError
from releval.params.systems import CooccurrenceSystem
from releval.retrieval.cooccurrence import CooccurrenceRetriever
from releval.retrieval.routes import search
from tests.retrieval.recs import catalogue, interactions, user_queries, windows

# Fitting users before the cut: u1 {a, b}, u2 {a, b, c}, u3 {a, c}, u6 {c}, u4 {d}.
# n_a = 3, n_b = 2, n_c = 3, n_d = 1; C_ab = 2, C_ac = 2, C_bc = 1, nothing with d.
LOG = interactions(
    ("u1", "a", -10), ("u1", "b", -9), ("u1", "b", -8),  # a repeat purchase counts once
    ("u2", "a", -20), ("u2", "b", -20), ("u2", "c", -20),
    ("u3", "a", -5), ("u3", "c", -4), ("u6", "c", -3), ("u4", "d", -2),
    ("u1", "d", 3),  # after the cut
    ("u5", "a", -30), ("u7", "a", -1), ("u7", "a", -2), ("u7", "b", -3),  # held out
    ("u5", "e", -30),  # e: bought by u5 only, and not published yet
)
ITEMS = catalogue("a", "b", "c", "d", "e", published={"e": 10})
HELD = {"u5", "u7"}


def recommend(similarity, *users, exclude_seen=True, depth=10):
    queries = user_queries(*users, held_out=HELD)
    return search(CooccurrenceSystem(similarity=similarity), ITEMS, queries, depth,
                  history=History(LOG, exclude_seen, frozenset(HELD)))


@pytest.mark.parametrize("similarity, b, c", [
    ("count", 2, 2),
    ("cosine", 2 / math.sqrt(3 * 2), 2 / math.sqrt(3 * 3)),
    ("jaccard", 2 / (3 + 2 - 2), 2 / (3 + 3 - 2)),
])
def test_a_one_item_profile_scores_that_items_similarities(similarity, b, c):
    got = windows(recommend(similarity, "u5").run)["u5@test"]  # profile {a, e}: e co-occurs
    assert got == sorted([("b", round(b, 6)), ("c", round(c, 6))],  # with nothing fitted
                         key=lambda x: (-x[1], x[0]))


@pytest.mark.parametrize("similarity, c", [
    ("count", 2 + 1),
    ("cosine", 2 / math.sqrt(3 * 3) + 1 / math.sqrt(2 * 3)),
    ("jaccard", 2 / (3 + 3 - 2) + 1 / (2 + 3 - 1)),
])
def test_scores_sum_over_the_distinct_profile_items(similarity, c):
    got = recommend(similarity, "u7")  # profile {a, b}: a bought twice, counted once
    assert windows(got.run) == {"u7@test": [("c", round(c, 6))]}  # a and b are seen


def test_seen_items_score_by_the_other_profile_items_when_not_excluded():
    got = windows(recommend("count", "u7", exclude_seen=False).run)["u7@test"]
    assert got == [("c", 3.0), ("a", 2.0), ("b", 2.0)]  # the diagonal is zero: a by b only


def test_held_out_users_are_not_fitted_and_a_user_without_profile_gets_nothing():
    got = recommend("cosine", "u5", "u9", "u4")
    assert got.stats["fitting"] == [{"cut": "2024-06-01T00:00:00+00:00", "interactions": 10,
                                     "users": 5, "items": 4}]
    assert got.stats["empty_profile"] == 1
    found = windows(got.run)
    assert "u9@test" not in found and "u4@test" not in found  # d co-occurs with nothing
    assert found["u5@test"][0][0] == "b"


def test_depth_and_determinism():
    once, again = recommend("cosine", "u5", depth=1), recommend("cosine", "u5", depth=1)
    assert once.run.equals(again.run) and windows(once.run)["u5@test"] == [
        ("b", round(2 / math.sqrt(6), 6))]


def test_an_unknown_similarity_is_an_input_error():
    with pytest.raises(InputError, match="similarity must be one of count, cosine, jaccard"):
        CooccurrenceRetriever(similarity="lift")
