"""The content route: hand-computed recency-weighted profile cosines with a fixed encoder,
then the real MiniLM model on a few product titles."""

import math

import numpy as np
import pytest

from releval.data import contracts as S
from releval.data.history import History
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.params.systems import ContentSystem
from releval.retrieval.content import ContentRetriever
from releval.retrieval.routes import search
from tests.retrieval.recs import catalogue, interactions, user_queries, windows

VECTORS = {"A": (1.0, 0.0), "B": (0.0, 1.0), "C": (1.0, 1.0), "D": (-1.0, 0.0),
           "E": (0.0, -1.0)}


class Fixed:
    """An encoder giving each title its vector of VECTORS (the route normalises them)."""

    name = "fixed"

    def __call__(self, texts):
        return np.array([VECTORS[t] for t in texts], np.float32)


ITEMS = catalogue("a", "b", "c", "d", "e", titles={i: i.upper() for i in "abcde"},
                  published={"e": 10})
# u1: a 30 days before the cut (weight 1/2 at a 30-day half-life), b 60 days (weight 1/4):
# profile = (1/2 · a + 1/4 · b) / (3/4) = (2/3, 1/3), |profile| = √5 / 3.
LOG = interactions(("u1", "a", -30), ("u1", "b", -60), ("u2", "d", -1), ("u1", "c", 2))


def recommend(tmp_path, *users, exclude_seen=True, half_life_days=30.0, depth=10):
    retriever = ContentRetriever(doc_fields=("title",), cache_dir=tmp_path,
                                 half_life_days=half_life_days)
    retriever.encoder = Fixed()
    queries = user_queries(*users)
    retriever.index(ITEMS, History.of(LOG, queries, exclude_seen))
    return retriever.search(queries, depth, Visibility(ITEMS))


def shifted(cos: float) -> float:
    return (1 + cos) / 2


def assert_window(got, query_id, expected):
    """``query_id``'s window is ``expected`` [(doc_id, score)], scores to float32 precision."""
    window = windows(got.run).get(query_id, [])
    assert [d for d, _ in window] == [d for d, _ in expected]
    assert [s for _, s in window] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_scores_are_the_shifted_cosine_with_the_recency_weighted_profile(tmp_path):
    got = recommend(tmp_path, "u1", exclude_seen=False)
    norm = math.sqrt(5) / 3
    assert_window(got, "u1@test", [
        ("c", shifted((2 / 3 + 1 / 3) / math.sqrt(2) / norm)),
        ("a", shifted((2 / 3) / norm)),
        ("b", shifted((1 / 3) / norm)),
        ("d", shifted(-(2 / 3) / norm))])  # e: not published yet; c: bought after the cut
    assert got.stats["embeddings"] == {"documents_encoded": 5, "documents_cached": 0}
    assert got.stats["model"] == "fixed" and got.stats["dim"] == 2


def test_seen_items_go_and_the_half_life_weighs_recent_purchases(tmp_path):
    assert [d for d, _ in windows(recommend(tmp_path, "u1").run)["u1@test"]] == ["c", "d"]
    # a long half-life weighs a and b alike: profile (1/2, 1/2), b's cosine rises to 1/√2
    flat = windows(recommend(tmp_path, "u1", exclude_seen=False,
                             half_life_days=1e9).run)["u1@test"]
    assert dict(flat)["b"] == pytest.approx(shifted(1 / math.sqrt(2)), abs=1e-6)


def test_every_visible_item_is_eligible_and_users_without_history_get_nothing(tmp_path):
    got = recommend(tmp_path, "u2", "u9")  # u2 bought d: a is its opposite, scored 0
    assert_window(got, "u2@test", [("b", 0.5), ("c", shifted(-1 / math.sqrt(2)))])
    assert set(got.run[S.QUERY_ID]) == {"u2@test"} and got.stats["empty_profile"] == 1
    assert recommend(tmp_path, "u2", depth=1).run[S.DOC_ID].tolist() == ["b"]


def test_bad_settings_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="half_life_days must be > 0"):
        ContentRetriever(cache_dir=tmp_path, half_life_days=0)
    with pytest.raises(InputError, match="doc_fields"):
        ContentRetriever(cache_dir=tmp_path, doc_fields=())


def test_the_real_model_recommends_titles_like_the_users_purchases(tmp_path):
    titles = {"x1": "CHRISTMAS TREE HANGING DECORATION", "x2": "RED CHRISTMAS STAR ORNAMENT",
              "x3": "GARDEN HOSE REEL", "x4": "CERAMIC TEA CUP AND SAUCER",
              "x5": "SET OF 6 TEA TIME CAKE CASES"}
    items = catalogue(*titles, titles=titles)
    log = interactions(("u1", "x1", -3), ("u2", "x4", -3))
    queries = user_queries("u1", "u2")
    got = search(ContentSystem(cache_dir=str(tmp_path)), items, queries, 2,
                 history=History.of(log, queries, True))
    top = {q: docs[0][0] for q, docs in windows(got.run).items()}
    assert top == {"u1@test": "x2", "u2@test": "x5"}
