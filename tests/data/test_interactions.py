"""The interaction log and item table: reading rules, cuts, users as queries (a hand-computed
tiny log), and the real online-retail data."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.interactions import cuts_of, read_interactions, user_queries
from releval.data.visibility import Visibility
from releval.errors import InputError

RETAIL = Path(__file__).resolve().parents[3] / "shared" / "data" / "online-retail"
HEADER = "user_id,item_id,timestamp,label,country\n"
ITEMS = "item_id,title,first_seen\na,Red mug,\nb,Blue mug,\nc,Tin,\nd,Lamp,2025-01-20\ne,Kite,\n"
# u1 buys a and b, then (validation window) a again, c, and cancels b; u2 first buys in the
# validation window; u3 only in the test window (a repeated line); u4 has a cancellation only;
# u5 buys after every window. Cuts 01-10 and 01-20, horizon 30 days.
LOG = HEADER + "\n".join([
    "u1,a,2025-01-02T10:00:00Z,1,UK", "u4,a,2025-01-03T10:00:00Z,0,UK",
    "u1,b,2025-01-05T10:00:00Z,1,UK", "u2,c,2025-01-11T10:00:00Z,1,DE",
    "u1,a,2025-01-12T10:00:00Z,1,FR", "u1,c,2025-01-14T10:00:00Z,1,FR",
    "u1,b,2025-01-16T10:00:00Z,0,FR", "u3,d,2025-01-22T10:00:00Z,1,NL",
    "u3,d,2025-01-22T10:00:00Z,1,NL", "u2,c,2025-01-25T10:00:00Z,1,DE",
    "u5,b,2025-02-25T10:00:00Z,1,UK"]) + "\n"
T1, T2 = pd.Timestamp("2025-01-10", tz="UTC"), pd.Timestamp("2025-01-20", tz="UTC")


def folder(tmp_path: Path, log: str = LOG, items: str = ITEMS) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "interactions.csv").write_text(log)
    (tmp_path / "items.csv").write_text(items)
    return tmp_path


def tiny(tmp_path, exclude_seen=True, holdout=0.0, seed=0):
    log, items = read_interactions(folder(tmp_path))
    return user_queries(log, items, T1, T2, 30, exclude_seen, holdout, ["country"], seed)


def by_query(frame: pd.DataFrame) -> dict:
    return {q: sorted(g[S.DOC_ID]) for q, g in frame.groupby(S.QUERY_ID)}


def test_ids_are_strings_and_keep_their_case(tmp_path):
    items = "item_id,title\nM,Manual\nm,manual\n85123A,Heart\n00123,Zero\n"
    log = ("user_id,item_id,timestamp,label\n012,M,2011-01-01T08:00:00Z,1\n"
           "012,m,2011-01-01 09:00,0\n7,85123A,2011-01-02T08:00:00+01:00,1\n7,00123,2011-01-02,1\n")
    log, items = read_interactions(folder(tmp_path, log, items))
    assert log[S.ITEM_ID].tolist() == ["M", "m", "85123A", "00123"]
    assert log[S.USER_ID].tolist() == ["012", "012", "7", "7"]
    assert items[S.ITEM_ID].tolist() == ["M", "m", "85123A", "00123"]
    assert log[S.LABEL].dtype == np.int64 and str(log[S.TIMESTAMP].dt.tz) == "UTC"
    assert log[S.TIMESTAMP].tolist() == [pd.Timestamp(t, tz="UTC") for t in (
        "2011-01-01 08:00", "2011-01-01 09:00", "2011-01-02 07:00", "2011-01-02")]
    assert log.attrs == {"source": str(tmp_path / "interactions.csv"), "unit": "line"}


@pytest.mark.parametrize("log,items,message", [
    ("user_id,item_id,label\nu,a,1\n", ITEMS,
     r"interactions.csv: missing column\(s\) timestamp"),
    (HEADER + "u1,a,2025-01-02,1,UK\n,a,2025-01-02,1,UK\n", ITEMS,
     r"interactions.csv:line 3: user_id is empty"),
    (HEADER + "u1, ,2025-01-02,1,UK\n", ITEMS, r"interactions.csv:line 2: item_id is empty"),
    (HEADER + "u1,a,2025-01-02,1,UK\nu1,a,yesterday,1,UK\n", ITEMS,
     r"interactions.csv:line 3: timestamp must be an ISO-8601 timestamp, got 'yesterday'"),
    (HEADER + "u1,a,,1,UK\n", ITEMS, r"interactions.csv:line 2: timestamp is missing"),
    (HEADER + "u1,a,2025-01-02,2,UK\n", ITEMS,
     r"interactions.csv:line 2: label must be 0 or 1, got '2'"),
    (HEADER + "u1,a,2025-01-02,1,UK\nu1,z,2025-01-02,1,UK\n", ITEMS,
     r"interactions.csv:line 3: item_id 'z' is not in items.csv"),
    (HEADER + "u1,d,2025-01-19,1,UK\n", ITEMS,
     r"interactions.csv:line 2: interaction at 2025-01-19 00:00:00\+00:00 is before the "
     r"first_seen 2025-01-20 00:00:00\+00:00 of item 'd' \(items.csv line 5\)"),
    (HEADER, ITEMS, r"interactions.csv: no interactions"),
    (LOG, "item_id,title\na,A\nb,B\na,C\n", r"items.csv:line 4: item_id 'a' is not unique"),
    (LOG, "item_id\na\n", r"items.csv: missing column\(s\) title"),
    (LOG, "item_id,title,first_seen\na,A,soon\n",
     r"items.csv:line 2: first_seen must be an ISO-8601 timestamp, got 'soon'"),
    (HEADER + "u1,a,2025-01-02,1,UK,extra\n", ITEMS,
     r"interactions.csv:line 2: more fields than the header"),
    (HEADER + "u1,a,2025-01-02,1,UK\nu1,a,2025-01-02,1,UK,extra\n", ITEMS,
     r"interactions.csv:line 3: 6 fields, more than the header's 5"),
])
def test_every_rule_is_one_line_naming_file_and_row(tmp_path, log, items, message):
    with pytest.raises(InputError, match=message) as error:
        read_interactions(folder(tmp_path, log, items))
    assert "\n" not in str(error.value)


def test_parquet_rows_and_the_choice_of_files(tmp_path):
    log = pd.DataFrame({S.USER_ID: [1, 2], S.ITEM_ID: ["a", "a"], S.LABEL: [1, 5],
                        S.TIMESTAMP: pd.to_datetime(["2025-01-02", "2025-01-03"])})
    (tmp_path / "items.csv").write_text(ITEMS)
    log.to_parquet(tmp_path / "interactions.parquet")
    with pytest.raises(InputError, match=r"interactions.parquet:row 2: label must be 0 or 1"):
        read_interactions(tmp_path)
    log.assign(**{S.LABEL: [1, 0]}).to_parquet(tmp_path / "interactions.parquet")
    read, _ = read_interactions(tmp_path)
    assert read[S.USER_ID].tolist() == ["1", "2"]  # naive times are UTC
    assert read[S.TIMESTAMP].iloc[0] == pd.Timestamp("2025-01-02", tz="UTC")
    (tmp_path / "interactions.csv").write_text(LOG)
    with pytest.raises(InputError, match="both interactions.csv and interactions.parquet"):
        read_interactions(tmp_path)
    (tmp_path / "items.csv").unlink()
    with pytest.raises(InputError, match="no items.csv or items.parquet"):
        read_interactions(tmp_path)
    with pytest.raises(InputError, match="expected a folder"):
        read_interactions(tmp_path / "absent")


def test_cuts_by_dates_and_quantiles(tmp_path):
    log, _ = read_interactions(folder(tmp_path))
    assert cuts_of(log, "dates", ("2025-01-10", "2025-01-20"), (0.1, 0.2)) == (T1, T2)
    t1, t2 = cuts_of(log, "quantiles", None, (0.5, 0.8))
    times = sorted(log[S.TIMESTAMP])
    assert (t1, t2) == (times[5], times[8])  # 'higher' of 11 timestamps: positions 5 and 8
    for method, cuts, quantiles, message in [
            ("given", None, (0.5, 0.8), "split.method given does not apply to interactions"),
            ("dates", None, (0.5, 0.8), "needs split.cuts"),
            ("dates", ("2025-01-20", "2025-01-10"), (0.5, 0.8), "must be increasing"),
            ("dates", ("2025-01-10", "2025-03-01"), (0.5, 0.8), "after the last interaction"),
            ("quantiles", None, (0.8, 0.5), "split.quantiles must be increasing")]:
        with pytest.raises(InputError, match=message):
            cuts_of(log, method, cuts, quantiles)


def test_users_at_each_cut_their_history_context_and_positives(tmp_path):
    data = tiny(tmp_path)
    q = data.queries
    assert list(q.columns) == [*S.QUERY_COLUMNS, S.HISTORY, S.HELD_OUT, "country"]
    assert q[S.QUERY_ID].tolist() == ["u1@validation", "u2@validation", "u4@validation",
                                      "u1@test", "u2@test", "u3@test", "u4@test"]
    assert q[S.HISTORY].tolist() == [2, 0, 1, 5, 1, 0, 1]
    assert q["country"].tolist() == ["UK", "DE", "UK", "FR", "DE", "NL", "UK"]
    assert q[S.ISSUED_AT].tolist() == [T1] * 3 + [T2] * 4
    assert (q[S.TEXT] == "").all() and (q[S.ROLE] == "guest").all() and not q[S.HELD_OUT].any()
    assert data.given_split[S.SPLIT].tolist() == ["validation"] * 3 + ["test"] * 4
    assert by_query(data.qrels) == {"u1@validation": ["c"], "u2@validation": ["c"],
                                    "u3@test": ["d"]}  # u1's a and u2's c: seen before
    assert (data.qrels[S.GRADE] == 1).all() and list(data.qrels.columns) == list(S.QRELS_COLUMNS)
    assert data.windows == {"validation": (T1, T2),  # the horizon is clipped at t2
                            "test": (T2, T2 + pd.Timedelta(days=30))}
    assert data.report["splits"]["validation"] == {
        "cut": T1.isoformat(), "horizon_end": T2.isoformat(), "users": 3,
        "users_with_positives_in_horizon": 2, "users_scored": 0,
        "users_only_unpublished_positives": 2,  # c is first seen after t1: no route has it
        "undefined_users": 3, "new_users": 1, "held_out_users": 0,
        "positives": 2, "seen_positives_removed": 1, "positives_not_visible": 2}
    assert data.report["splits"]["test"] | {"cut": None, "horizon_end": None} == {
        "cut": None, "horizon_end": None, "users": 4, "users_with_positives_in_horizon": 1,
        "users_scored": 1, "users_only_unpublished_positives": 0,
        "undefined_users": 3, "new_users": 1, "held_out_users": 0, "positives": 1,
        "seen_positives_removed": 1, "positives_not_visible": 0}
    assert set(data.report["definitions"]) == set(data.report["splits"]["test"]) - {
        "cut", "horizon_end"}
    assert {k: v for k, v in data.report.items() if k not in ("splits", "definitions")} == {
        "interactions": 11, "users": 5, "items": 5, "items_interacted": 4,
        "items_never_recommendable": 1, "duplicate_rows_kept": 1, "cancellations": 2,
        "horizon_days": 30, "exclude_seen": True, "holdout_users": 0.0, "held_out_users": 0}


def test_without_exclude_seen_repeat_purchases_are_positives(tmp_path):
    data = tiny(tmp_path, exclude_seen=False)
    assert by_query(data.qrels) == {"u1@validation": ["a", "c"], "u2@validation": ["c"],
                                    "u2@test": ["c"], "u3@test": ["d"]}
    assert data.report["splits"]["test"]["seen_positives_removed"] == 0


def test_items_are_documents_visible_from_first_seen_or_first_interaction(tmp_path):
    data = tiny(tmp_path)
    docs = data.documents
    assert list(docs.columns) == list(S.DOCUMENT_COLUMNS)
    assert docs[S.DOC_ID].tolist() == ["a", "b", "c", "d", "e"]
    assert docs[S.TEXT].tolist() == ["Red mug", "Blue mug", "Tin", "Lamp", "Kite"]
    assert docs[S.PUBLISHED_AT].tolist() == [pd.Timestamp(t, tz="UTC") for t in (
        "2025-01-02 10:00", "2025-01-05 10:00", "2025-01-11 10:00", "2025-01-20",
        "2025-02-26 10:00")]  # e: never interacted, no first_seen: after the log's end
    mask = Visibility(docs).mask(data.queries)
    assert mask[0].tolist() == [True, True, False, False, False]  # at t1: c not yet seen
    assert mask[3].tolist() == [True, True, True, True, False]  # at t2
    assert not mask[:, 4].any()


def test_category_joins_the_text(tmp_path):
    items = "item_id,title,category\na,Red mug,kitchen\nb,Blue mug,\nc,Tin,x\nd,Lamp,y\n"
    log, items = read_interactions(folder(tmp_path, LOG.replace("u3,d", "u3,c"), items))
    data = user_queries(log, items, T1, T2, 30, True, 0.0, [], 0)
    assert data.documents[S.TEXT].tolist() == ["Red mug kitchen", "Blue mug", "Tin x", "Lamp y"]
    assert list(data.queries.columns) == [*S.QUERY_COLUMNS, S.HISTORY, S.HELD_OUT]
    with pytest.raises(InputError, match="recommend.context column 'city' is not a context"):
        user_queries(log, items, T1, T2, 30, True, 0.0, ["city"], 0)


def test_held_out_users_are_a_seeded_share_of_the_sorted_users(tmp_path):
    data = tiny(tmp_path, holdout=0.4, seed=3)
    held = ["u1", "u2", "u3", "u4", "u5"]
    held = sorted(np.array(held)[np.random.default_rng(3).choice(5, 2, replace=False)])
    q = data.queries
    assert sorted(set(q.loc[q[S.HELD_OUT], S.USER_ID])) == [u for u in held if u != "u5"]
    assert data.report["held_out_users"] == 2
    rows = [f"u{i:03d},a,2025-01-0{1 + i % 9}T00:00:00Z,1\n" for i in range(200)]
    log, items = read_interactions(folder(tmp_path / "many", "user_id,item_id,timestamp,label\n"
                                          + "".join(rows) + "x,a,2025-02-01,1\n", ITEMS))
    data = user_queries(log, items, T1, T2, 30, True, 0.25, [], 7)
    test = data.queries[data.given_split[S.SPLIT] == "test"]
    assert data.report["held_out_users"] == 50 and test[S.HELD_OUT].sum() == 50


@pytest.fixture(scope="module")
def retail():
    if not (RETAIL / "interactions.csv").is_file():
        pytest.fail(f"shared test data missing: expected {RETAIL}")
    return read_interactions(RETAIL)


def test_online_retail_counts_and_a_forward_cut(retail):
    log, items = retail
    assert len(log) == 406_829 and log[S.USER_ID].nunique() == 4_372
    assert log[S.ITEM_ID].nunique() == 3_684 and len(items) == 4_070
    assert {"M", "85123A"} <= set(log[S.ITEM_ID]) and {"M", "m"} <= set(items[S.ITEM_ID])
    assert (log[S.LABEL] == 0).sum() == 8_905
    t1, t2 = cuts_of(log, "dates", ("2011-10-01", "2011-11-01"), (0.7, 0.85))
    data = user_queries(log, items, t1, t2, 30, True, 0.1, ["country"], 0)
    report = data.report
    assert report["interactions"] == 406_829 and report["items_interacted"] == 3_684
    val, test = report["splits"]["validation"], report["splits"]["test"]
    assert 3_000 < val["users"] < test["users"] <= 4_372
    assert val["users_scored"] > 1_000 and test["users_scored"] > 1_000
    assert test["users_with_positives_in_horizon"] == test["users_scored"] + test[
        "users_only_unpublished_positives"]
    assert val["positives"] > 10_000 and test["seen_positives_removed"] > 0
    assert abs(report["held_out_users"] - 437) <= 1
    # validation positives come from [t1, t1 + 30 days), never at or after t2
    end = data.windows["validation"][1]
    assert end == pd.Timestamp("2011-10-31", tz="UTC") <= t2
    split = data.given_split.set_index(S.QUERY_ID)[S.SPLIT]
    qrels = data.qrels[data.qrels[S.QUERY_ID].map(split) == "validation"]
    bought = log[(log[S.LABEL] == 1) & (log[S.TIMESTAMP] >= t1) & (log[S.TIMESTAMP] < end)]
    pairs = set(zip(bought[S.USER_ID] + "@validation", bought[S.ITEM_ID], strict=True))
    assert set(zip(qrels[S.QUERY_ID], qrels[S.DOC_ID], strict=True)) <= pairs
    # no history at or after a query's cut: histories add up to the lines before each cut
    q = data.queries.merge(data.given_split, on=S.QUERY_ID)
    for name, cut in (("validation", t1), ("test", t2)):
        assert q.loc[q[S.SPLIT] == name, S.HISTORY].sum() == (log[S.TIMESTAMP] < cut).sum()
