"""Logged feedback as recommendation mode's interactions: a click is label 1, an impression
without one label 0; users from the log's user_id, else its text features, else its context."""

import pandas as pd

from releval.data.feedback import as_interactions, users


def log(**extra) -> pd.DataFrame:
    return pd.DataFrame({
        "context_id": ["c1", "c2", "c3"], "item_id": ["7", "8", "7"], "position": [1, 2, 1],
        "reward": [0.0, 1.0, 2.0], "propensity": [0.5, 0.5, 0.5],
        "timestamp": pd.to_datetime(["2025-01-03", "2025-01-01", "2025-01-02"], utc=True),
        **extra})


def test_impressions_become_interactions_in_time_order_and_clicks_positives():
    interactions, items = as_interactions(log(user_id=["u1", "u2", "u1"]))
    assert interactions["user_id"].tolist() == ["u2", "u1", "u1"]
    assert interactions["label"].tolist() == [1, 1, 0]
    assert items["item_id"].tolist() == ["7", "8"] and (items["title"] == "").all()
    assert items["first_seen"].tolist() == list(pd.to_datetime(["2025-01-02", "2025-01-01"],
                                                               utc=True))


def test_users_from_text_features_else_the_context():
    with_features = log(segment=["a|b", "a|b", "c"], score=[0.1, 0.2, 0.3])
    told, how = users(with_features)
    assert told[0] == told[1] != told[2] and len(told[0]) == 12
    assert how.startswith("the tuple of the log's text features (segment)")
    assert users(log())[0].tolist() == ["c1", "c2", "c3"]
