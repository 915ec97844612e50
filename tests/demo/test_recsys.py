"""The recommendation demo: a seeded log with popularity skew, items appearing over time, tastes
by topic; and two team systems whose probabilities are true (calibrated) or miscalibrated."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.history import History
from releval.data.interactions import cuts_of, user_queries
from releval.data.visibility import Visibility
from releval.demo.recsys import TEAM_COLUMNS, TOPICS, generate_recsys, team_runs

DEPTH = 50


@pytest.fixture(scope="module")
def demo():
    return generate_recsys(seed=11)


@pytest.fixture(scope="module")
def data(demo):
    t1, t2 = cuts_of(demo.log, "quantiles", None, (0.7, 0.85))
    return user_queries(demo.log, demo.items, t1, t2, 30, True, 0.0, ["country"], 11)


@pytest.fixture(scope="module")
def runs(demo, data):
    return team_runs(demo, data, DEPTH)


def test_seeded_and_shaped_like_an_interaction_log(demo):
    small = generate_recsys(seed=2, n_users=200, n_items=100, months=3)
    again = generate_recsys(seed=2, n_users=200, n_items=100, months=3)
    pd.testing.assert_frame_equal(small.log, again.log)
    pd.testing.assert_frame_equal(small.items, again.items)
    assert not small.log.equals(generate_recsys(seed=3, n_users=200, n_items=100,
                                                months=3).log)
    log = demo.log
    assert list(log.columns) == [*S.INTERACTION_COLUMNS, "country"]
    assert list(demo.items.columns) == [S.ITEM_ID, S.TITLE, S.CATEGORY, S.FIRST_SEEN]
    assert 40_000 <= len(log) <= 80_000 and log[S.TIMESTAMP].is_monotonic_increasing
    assert str(log[S.TIMESTAMP].dt.tz) == "UTC" and set(log[S.LABEL]) == {0, 1}
    assert 0.005 < (log[S.LABEL] == 0).mean() < 0.05  # some cancellations
    bought = log[log[S.LABEL] == 1]
    assert bought.duplicated([S.USER_ID, S.ITEM_ID]).mean() > 0.2  # repeat purchases
    shares = log.drop_duplicates(S.USER_ID)["country"].value_counts(normalize=True)
    assert shares.index[0] == "United Kingdom" and shares.iloc[0] > 0.7 and len(shares) > 3
    end = pd.Timestamp("2026-01-01", tz="UTC")
    assert log[S.TIMESTAMP].min() >= pd.Timestamp("2025-01-01", tz="UTC")
    assert log[S.TIMESTAMP].max() < end


def test_popularity_is_skewed(demo):
    counts = demo.log.loc[demo.log[S.LABEL] == 1, S.ITEM_ID].value_counts()
    assert counts.iloc[: len(demo.items) // 5].sum() > 0.5 * counts.sum()


def test_items_appear_over_time_and_are_never_bought_before(demo):
    items = demo.items.set_index(S.ITEM_ID)
    first = items[S.FIRST_SEEN]
    assert (first == pd.Timestamp("2025-01-01", tz="UTC")).mean() > 0.3
    assert (first >= pd.Timestamp("2025-10-01", tz="UTC")).sum() > 20  # new in the last months
    assert (demo.log[S.TIMESTAMP].to_numpy() >= first[demo.log[S.ITEM_ID]].to_numpy()).all()


def test_titles_share_their_topics_words(demo):
    items = demo.items
    assert set(items[S.CATEGORY]) == set(TOPICS)
    nouns = items[S.CATEGORY].map(TOPICS)
    assert all(any(title.endswith(n) for n in ns) for title, ns in zip(items[S.TITLE], nouns,
                                                                       strict=True))
    users = demo.log[demo.log[S.LABEL] == 1].merge(items, on=S.ITEM_ID)
    top = pd.crosstab(users[S.USER_ID], users[S.CATEGORY], normalize="index").max(axis=1)
    assert top.median() > 3 / len(TOPICS)  # a user's purchases concentrate on a few topics


def test_team_runs_rank_unseen_visible_items_best_first(demo, data, runs):
    assert list(runs.columns) == list(TEAM_COLUMNS)
    assert set(runs[S.SYSTEM]) == {"team_calibrated", "team_overconfident"}
    assert set(runs[S.SPLIT]) == {"validation", "test"}
    assert not runs.duplicated([S.SYSTEM, S.SPLIT, S.USER_ID, S.ITEM_ID]).any()
    lists = runs.groupby([S.SYSTEM, S.SPLIT, S.USER_ID], sort=False)
    assert lists.size().max() == DEPTH
    assert (lists[S.SCORE].diff().dropna() <= 0).all()
    assert runs[S.PROBABILITY].between(0, 1).all()
    calibrated, over = (runs[runs[S.SYSTEM] == s].reset_index(drop=True)
                        for s in ("team_calibrated", "team_overconfident"))
    assert (over[S.SCORE] == over[S.PROBABILITY]).all()
    top = {name: run[run.groupby([S.SPLIT, S.USER_ID]).cumcount() < 10].assign(
        q=lambda r: r[S.USER_ID] + "@" + r[S.SPLIT]).merge(
        data.qrels, left_on=["q", S.ITEM_ID], right_on=[S.QUERY_ID, S.DOC_ID])
        for name, run in (("calibrated", calibrated), ("over", over))}
    assert len(top["over"]) > 1.05 * len(top["calibrated"])  # the sharper ranking
    pairs = calibrated.assign(**{S.QUERY_ID: calibrated[S.USER_ID] + "@" + calibrated[S.SPLIT],
                                 S.DOC_ID: calibrated[S.ITEM_ID]})
    queries = data.queries.set_index(S.QUERY_ID).loc[pairs[S.QUERY_ID].unique()].reset_index()
    assert pairs[S.QUERY_ID].isin(data.queries[S.QUERY_ID]).all()
    mask = Visibility(data.documents).mask(queries)
    qi = pd.Index(queries[S.QUERY_ID]).get_indexer(pairs[S.QUERY_ID])
    di = pd.Index(data.documents[S.DOC_ID]).get_indexer(pairs[S.DOC_ID])
    assert mask[qi, di].all()  # only items visible at the cut
    seen = History(demo.log, True).seen_mask(queries, data.documents[S.DOC_ID].to_numpy())
    assert not seen[qi, di].any()  # never an item the user already bought


def ece(runs: pd.DataFrame, qrels: pd.DataFrame, split: str, bins: int = 10) -> float:
    """Σ_b n_b/n·|mean predicted − observed| over equal-width probability bins."""
    rows = runs[runs[S.SPLIT] == split]
    rows = rows.assign(**{S.QUERY_ID: rows[S.USER_ID] + f"@{split}", S.DOC_ID: rows[S.ITEM_ID]})
    y = rows.merge(qrels, on=[S.QUERY_ID, S.DOC_ID], how="left")[S.GRADE].notna().to_numpy(float)
    p = rows[S.PROBABILITY].to_numpy()
    b = np.minimum((p * bins).astype(int), bins - 1)
    n = np.bincount(b, minlength=bins)
    gap = np.abs(np.bincount(b, p, bins) - np.bincount(b, y, bins))
    return float(gap.sum() / n.sum())


def test_the_calibrated_team_is_calibrated_and_the_other_is_not(data, runs):
    calibrated = ece(runs[runs[S.SYSTEM] == "team_calibrated"], data.qrels, "test")
    over = ece(runs[runs[S.SYSTEM] == "team_overconfident"], data.qrels, "test")
    assert calibrated < 0.005 and over > 2 * calibrated
    test = runs[(runs[S.SPLIT] == "test") & (runs[S.SYSTEM] == "team_calibrated")]
    hits = test.assign(q=test[S.USER_ID] + "@test").merge(
        data.qrels, left_on=["q", S.ITEM_ID], right_on=[S.QUERY_ID, S.DOC_ID])
    assert len(hits) > 0.3 * data.report["splits"]["test"]["positives"]  # it finds many


def test_with_seen_items_allowed_rebuys_are_priced_in():
    demo = generate_recsys(seed=4, n_users=800, n_items=300)
    t1, t2 = cuts_of(demo.log, "quantiles", None, (0.7, 0.85))
    data = user_queries(demo.log, demo.items, t1, t2, 30, False, 0.0, [], 4)
    runs = team_runs(demo, data, 30, exclude_seen=False)
    test = runs[runs[S.SPLIT] == "test"]
    owned = demo.log[(demo.log[S.LABEL] == 1) & (demo.log[S.TIMESTAMP] < t2)]
    seen = test.merge(owned[[S.USER_ID, S.ITEM_ID]].drop_duplicates(), on=[S.USER_ID, S.ITEM_ID])
    assert len(seen) > 0.1 * len(test)  # seen items compete, their rebuys priced in
    calibrated = ece(test[test[S.SYSTEM] == "team_calibrated"], data.qrels, "test")
    assert calibrated < 0.01
    assert ece(test[test[S.SYSTEM] == "team_overconfident"], data.qrels, "test") > 2 * calibrated
