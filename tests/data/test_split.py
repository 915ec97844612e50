import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from releval.data import contracts as S
from releval.data.split import leakage, normalise_text, split_queries, split_report
from releval.data.visibility import Visibility
from releval.errors import InputError

DAY0 = pd.Timestamp("2024-01-01", tz="UTC")


def queries(days, texts=None, tags=None):
    """Queries issued ``days`` after DAY0, ids q0, q1, ... in the contract's columns."""
    n = len(days)
    return pd.DataFrame({
        S.QUERY_ID: [f"q{i}" for i in range(n)],
        S.TEXT: texts or [f"text {i}" for i in range(n)],
        S.ISSUED_AT: DAY0 + pd.to_timedelta(list(days), unit="D"),
        S.USER_ID: "u1", S.TENANT: "acme", S.GROUPS: [["staff"]] * n, S.ROLE: "employee",
        S.TAGS: tags or [[] for _ in range(n)], S.WEIGHT: 1.0,
    })


def documents(days, sources=None, acl=None):
    """Published documents d0, d1, ... of tenant acme, published ``days`` after DAY0."""
    n = len(days)
    return pd.DataFrame({
        S.DOC_ID: [f"d{i}" for i in range(n)], S.TITLE: "t", S.TEXT: "body",
        S.SOURCE_ID: sources or [f"s{i}" for i in range(n)],
        S.PUBLISHED_AT: DAY0 + pd.to_timedelta(list(days), unit="D"),
        S.STATUS: "published", S.DELETED_AT: pd.NaT, S.TENANT: "acme",
        S.ACL: acl or [[] for _ in range(n)],
    })


def qrels(rows):
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.GRADE])


def assert_forward_in_time(frame, split):
    """Each query in one split; earlier splits strictly before the cut, later ones at/after."""
    table = split.table.merge(frame[[S.QUERY_ID, S.ISSUED_AT]], on=S.QUERY_ID)
    assert len(split.table) == len(frame) and split.table[S.QUERY_ID].is_unique
    assert set(split.table[S.QUERY_ID]) == set(frame[S.QUERY_ID])
    assert set(table[S.SPLIT]) <= set(S.SPLITS)
    times = {s: table.loc[table[S.SPLIT] == s, S.ISSUED_AT] for s in S.SPLITS}
    for (earlier, later), cut in zip([("train", "validation"), ("validation", "test")],
                                     split.cuts, strict=True):
        before = pd.concat([times["train"], times[earlier]])
        after = pd.concat([times[later], times["test"]])
        assert (before < cut).all() and (after >= cut).all()
        if len(times[earlier]) and len(times[later]):
            assert times[earlier].max() < times[later].min()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=40),
       st.tuples(st.integers(0, 35), st.integers(1, 10)))
def test_dates_split_is_forward_in_time(days, cut):
    first, gap = cut
    frame = queries(days)
    cuts = ((DAY0 + pd.Timedelta(days=first)).isoformat(),
            (DAY0 + pd.Timedelta(days=first + gap)).date().isoformat())
    split = split_queries(frame, "dates", cuts=cuts)
    assert split.cuts == (DAY0 + pd.Timedelta(days=first), DAY0 + pd.Timedelta(days=first + gap))
    assert_forward_in_time(frame, split)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=40),
       st.tuples(st.floats(0.01, 0.98), st.floats(0.01, 0.99)).filter(lambda q: q[0] < q[1]))
def test_quantiles_split_is_forward_in_time(days, quantiles):
    frame = queries(days)
    split = split_queries(frame, "quantiles", quantiles=quantiles)
    assert set(split.cuts) <= set(frame[S.ISSUED_AT])  # cuts are observed issue times
    assert_forward_in_time(frame, split)


def test_quantiles_on_distinct_times_and_ties():
    split = split_queries(queries(range(10)), "quantiles")  # ceil(0.7·9) = 7, ceil(0.85·9) = 8
    assert split.table[S.SPLIT].value_counts().to_dict() == {"train": 7, "validation": 1,
                                                              "test": 2}
    assert split.cuts == (DAY0 + pd.Timedelta(days=7), DAY0 + pd.Timedelta(days=8))
    tied = split_queries(queries([0, 1, 1, 1, 1]), "quantiles", quantiles=(0.5, 0.9))
    assert tied.table[S.SPLIT].tolist() == ["train", "test", "test", "test", "test"]


def test_dates_rule_at_the_cut():
    split = split_queries(queries([0, 1, 2, 3]), "dates", cuts=("2024-01-02", "2024-01-03"))
    assert split.table[S.SPLIT].tolist() == ["train", "validation", "test", "test"]
    assert split.method == "dates"


def test_given_split_and_default_test():
    frame = queries([0, 1, 2])
    given_split = pd.DataFrame({S.QUERY_ID: ["q2", "q0", "q1", "q9"],
                                S.SPLIT: ["train", "test", "validation", "train"]})
    split = split_queries(frame, "given", given=given_split)
    assert split.table[S.SPLIT].tolist() == ["test", "validation", "train"]
    assert split.cuts is None
    everything = split_queries(frame, "given")
    assert everything.table[S.SPLIT].tolist() == ["test"] * 3


@pytest.mark.parametrize("kwargs,message", [
    ({"method": "random"}, "unknown split method 'random'; known: dates, quantiles, given"),
    ({"method": "dates", "cuts": ("2024-02-01", "2024-01-01")}, "cuts must be increasing"),
    ({"method": "dates", "cuts": ("2024-01-01", "2024-01-01")}, "cuts must be increasing"),
    ({"method": "dates"}, "needs cuts"),
    ({"method": "dates", "cuts": ("soon", "later")}, "cuts must be ISO dates"),
    ({"method": "quantiles", "quantiles": (0.9, 0.5)}, "quantiles must be increasing"),
    ({"method": "given", "given": pd.DataFrame({S.QUERY_ID: ["q1"], S.SPLIT: ["test"]})},
     "2 queries not in the given split: q0, q2"),
    ({"method": "given", "given": pd.DataFrame({S.QUERY_ID: ["q0", "q0"],
                                                S.SPLIT: ["test", "train"]})},
     "queries in more than one split: q0"),
    ({"method": "given", "given": pd.DataFrame({S.QUERY_ID: ["q0"], S.SPLIT: ["dev"]})},
     "split must be one of train, validation, test, got 'dev'"),
])
def test_bad_split_requests_are_input_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        split_queries(queries([0, 1, 2]), **kwargs)


def test_missing_issue_time_and_repeated_query_are_input_errors():
    frame = queries([0, 1, 2])
    frame.loc[1, S.ISSUED_AT] = pd.NaT
    with pytest.raises(InputError, match="missing for query q1"):
        split_queries(frame, "quantiles")
    with pytest.raises(InputError, match="repeated: q0"):
        split_queries(pd.concat([queries([0]), queries([1])]), "quantiles")


def leaky_case():
    """q0, q1 train; q2 validation; q3, q4 test. Source s1 is relevant to q0 and q3."""
    frame = queries([0, 1, 5, 10, 11],
                    texts=["Reset  password?", "vpn setup", "vpn setup", "reset password",
                           "VPN-setup!"],
                    tags=[["head"], ["head", "typo"], ["tail"], ["head"], []])
    docs = documents([0, 0, 0, 0], sources=["s1", "s1", "s2", "s3"])
    judged = qrels([("q0", "d0", 2), ("q3", "d1", 1), ("q4", "d1", 0), ("q2", "d2", 3),
                    ("q4", "d2", 1), ("q1", "d9", 1), ("q4", "d9", 2)])
    split = split_queries(frame, "dates", cuts=("2024-01-05", "2024-01-10"))
    return frame, docs, judged, split


def test_leakage_finds_shared_sources_and_repeated_texts():
    frame, docs, judged, split = leaky_case()
    found = leakage(frame, split.table, judged, docs)
    # s2 is shared only with validation; d9 is not in documents, so it is its own source
    assert found["shared_sources"] == {
        "count": 2, "test_queries_affected": 2,
        "sources": [{"source_id": "d9", "train_queries": 1, "test_queries": 1},
                    {"source_id": "s1", "train_queries": 1, "test_queries": 1}]}
    # "VPN-setup!" normalises to "vpnsetup", not "vpn setup"
    assert found["duplicate_texts"] == {
        "count": 1,
        "examples": [{"query_id": "q3", "text": "reset password", "train_query_ids": ["q0"]}]}


def test_normalised_text_and_empty_texts_never_match():
    texts = pd.Series(["Reset, PASSWORD!!", " error\tE-42 ", "¿Qué?", "???"])
    assert normalise_text(texts).tolist() == ["reset password", "error e42", "qué", ""]
    frame = queries([0, 10], texts=["???", "!"])
    split = split_queries(frame, "dates", cuts=("2024-01-05", "2024-01-06"))
    assert leakage(frame, split.table, qrels([]), documents([0]))["duplicate_texts"] == {
        "count": 0, "examples": []}


def test_report_counts_per_split_and_tag_and_is_json():
    frame, docs, judged, split = leaky_case()
    report = split_report(split, frame, judged, docs)
    assert json.loads(json.dumps(report)) == report
    assert report["method"] == "dates" and report["temporal"] is True
    assert report["cuts"] == ["2024-01-05T00:00:00+00:00", "2024-01-10T00:00:00+00:00"]
    assert report["counts"] == {"train": 2, "validation": 1, "test": 2}
    assert report["counts_by_tag"] == {"train": {"head": 2, "tail": 0, "typo": 1},
                                       "validation": {"head": 0, "tail": 1, "typo": 0},
                                       "test": {"head": 1, "tail": 0, "typo": 0}}
    assert report["leakage"]["duplicate_texts"]["count"] == 1
    assert "note" not in report


def test_report_of_given_split_says_it_is_not_temporal():
    frame = queries([0, 1])
    report = split_report(split_queries(frame, "given"), frame, qrels([]), documents([0]))
    assert report["note"] == "split given by the dataset, not by time"
    assert report["cuts"] is None and report["temporal"] is False
    assert report["counts"] == {"train": 0, "validation": 0, "test": 2}
    assert report["counts_by_tag"] == {"train": {}, "validation": {}, "test": {}}
    assert report["leakage"]["shared_sources"]["count"] == 0
    assert json.loads(json.dumps(report)) == report


def test_nothing_visible_from_the_future_in_test():
    frame = queries(range(0, 20, 2))
    docs = documents(range(0, 30, 3), acl=[[], ["staff"], ["finance"]] * 3 + [[]])
    split = split_queries(frame, "quantiles")
    test = frame[frame[S.QUERY_ID].isin(split.table.loc[split.table[S.SPLIT] == "test",
                                                         S.QUERY_ID])]
    visible = Visibility(docs).mask(test)
    assert visible.any() and not visible.all()  # some documents are still in the future
    issued = test[S.ISSUED_AT].to_numpy()[:, None]
    published = docs[S.PUBLISHED_AT].to_numpy()[None, :]
    assert not np.any(visible & (published > issued))
