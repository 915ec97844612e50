"""Query slice labels and the per-slice paired comparison, on tiny hand-computed frames."""

import numpy as np
import pandas as pd
import pytest

from releval.decision.slices import labels, slice_table
from releval.decision.stats import holm, holm_verdicts, paired
from releval.errors import InputError
from releval.params.slices import Slices

T = pd.Timestamp("2025-03-31", tz="UTC")
IDS = ["q1", "q2", "q3", "q4", "q5", "q6"]


@pytest.fixture
def queries():
    return pd.DataFrame({
        "query_id": IDS,
        "text": ["a b", "a b c d", "a b c d e f g", "x  y z", "1 2 3 4 5 6", "single"],
        "issued_at": [T] * 6,
        "user_id": ["u1", "u2", "u1", "u3", "u4", "u4"],
        "tenant": ["acme", "globex", "acme", "acme", "globex", "acme"],
        "role": ["guest", "employee", "admin", "guest", "guest", "employee"],
        "tags": [["head", "typo"], [], ["tail", "numeric", "error_code"], ["tail"],
                 ["typo", "typo"], None],
    })


@pytest.fixture
def documents():
    return pd.DataFrame({
        "doc_id": ["d1", "d2", "d3", "d4"],
        "published_at": [T - pd.Timedelta(days=30), T - pd.Timedelta(days=30, seconds=1),
                         T + pd.Timedelta(days=2), T - pd.Timedelta(days=1)],
    })


@pytest.fixture
def qrels():
    # q1: d1 exactly new_days old; q2: d2 a second too old, d4 not relevant; q3: d3 after
    # the query; q4: nothing; q5: an old and a new one; q6: only a grade-0 judgment.
    return pd.DataFrame({
        "query_id": ["q1", "q2", "q2", "q3", "q5", "q5", "q6"],
        "doc_id": ["d1", "d2", "d4", "d3", "d2", "d4", "d1"],
        "grade": [1, 2, 0, 3, 1, 1, 0],
    })


@pytest.fixture
def hits():
    rows = [  # query, doc, grade, rank_bm25, rank_dense, pair
        ("q1", "d1", 1, 1, None, "bm25|dense"),  # q1: one doc per route -> both
        ("q1", "d9", 1, None, 3, "bm25|dense"),
        ("q2", "d2", 2, 2, 5, "bm25|dense"),  # in both windows -> both
        ("q3", "d3", 3, 4, None, "bm25|dense"),  # bm25-only
        ("q5", "d4", 1, None, None, "bm25|dense"),  # neither
        ("q6", "d5", 1, None, 1, "bm25|dense"),  # dense-only
        ("q4", "d1", 1, 1, 1, "bm25|other"),  # a later pair: ignored -> q4 no relevant
    ]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade", "rank_bm25",
                                        "rank_dense", "pair"])
    return frame.assign(route_hit="ignored here")


def label_map(frame, dimension):
    """query_id -> sorted list of slices of one dimension."""
    rows = frame[frame["dimension"] == dimension]
    return {q: sorted(g["slice"]) for q, g in rows.groupby("query_id")}


def make(queries, qrels, documents, hits, ids=IDS, **config):
    return labels(queries, qrels, documents, hits, ids, Slices(**config))


USER_DIMENSIONS = ("history", "returning", "country", "holdout")  # user-queries' columns


def test_every_query_gets_every_dimension_as_strings(queries, qrels, documents, hits):
    out = make(queries, qrels, documents, hits)
    assert list(out.columns) == ["query_id", "dimension", "slice"]
    assert list(pd.unique(out["dimension"])) == [
        d for d in Slices().dimensions if d not in USER_DIMENSIONS]
    for dimension, group in out.groupby("dimension"):
        assert set(group["query_id"]) == set(IDS), dimension
    assert all(isinstance(v, str) for v in out.to_numpy().ravel())


def test_tag_one_row_per_tag_and_untagged(queries, qrels, documents, hits):
    tags = label_map(make(queries, qrels, documents, hits, dimensions=["tag"]), "tag")
    assert tags == {"q1": ["head", "typo"], "q2": ["untagged"],
                    "q3": ["error_code", "numeric", "tail"], "q4": ["tail"], "q5": ["typo"],
                    "q6": ["untagged"]}


def test_kind_joins_non_head_tail_tags_sorted(queries, qrels, documents, hits):
    kinds = label_map(make(queries, qrels, documents, hits, dimensions=["kind"]), "kind")
    assert kinds == {"q1": ["typo"], "q2": ["untagged"], "q3": ["error_code+numeric"],
                     "q4": ["untagged"], "q5": ["typo"], "q6": ["untagged"]}


def test_length_buckets_render_the_numbers_and_include_the_bounds(queries, qrels, documents,
                                                                  hits):
    out = make(queries, qrels, documents, hits, dimensions=["length"], length_buckets=(3, 6))
    short, medium, long = "short (≤3 words)", "medium (4–6 words)", "long (>6 words)"
    assert label_map(out, "length") == {"q1": [short], "q2": [medium], "q3": [long],
                                        "q4": [short], "q5": [medium], "q6": [short]}
    other = make(queries, qrels, documents, hits, dimensions=["length"], length_buckets=(1, 2))
    assert label_map(other, "length")["q1"] == ["medium (2–2 words)"]


def test_tenant_and_role_are_the_column_values(queries, qrels, documents, hits):
    out = make(queries, qrels, documents, hits, dimensions=["tenant", "role"])
    assert label_map(out, "tenant")["q2"] == ["globex"]
    assert label_map(out, "role") == {"q1": ["guest"], "q2": ["employee"], "q3": ["admin"],
                                      "q4": ["guest"], "q5": ["guest"], "q6": ["employee"]}


def test_freshness_boundary_future_and_no_relevant(queries, qrels, documents, hits):
    out = make(queries, qrels, documents, hits, dimensions=["freshness"], new_days=30)
    assert label_map(out, "freshness") == {
        "q1": ["new"], "q2": ["old"], "q3": ["old"], "q4": ["no relevant"], "q5": ["new"],
        "q6": ["no relevant"]}
    strict = labels(queries, qrels, documents, hits, IDS, Slices(dimensions=["freshness"]),
                    rel=2)
    assert label_map(strict, "freshness")["q1"] == ["no relevant"]
    assert label_map(strict, "freshness")["q2"] == ["old"]


def test_route_hit_classes_from_the_first_pair(queries, qrels, documents, hits):
    out = make(queries, qrels, documents, hits, dimensions=["route_hit"])
    assert label_map(out, "route_hit") == {
        "q1": ["both"], "q2": ["both"], "q3": ["bm25-only"], "q4": ["no relevant"],
        "q5": ["neither"], "q6": ["dense-only"]}


def test_route_hit_is_skipped_without_route_hits(queries, qrels, documents):
    for empty in (None, pd.DataFrame(columns=["route_hit", "pair"])):
        out = make(queries, qrels, documents, empty, dimensions=["route_hit", "role"])
        assert set(out["dimension"]) == {"role"}


def test_user_activity_head_users_with_ties_over_the_whole_log(queries, qrels, documents,
                                                               hits):
    # counts: u1 2, u4 2, u2 1, u3 1 of 6 queries; ties by user_id.
    half = make(queries, qrels, documents, hits, dimensions=["user_activity"], head_users=0.5)
    assert label_map(half, "user_activity") == {
        "q1": ["head users"], "q2": ["tail users"], "q3": ["head users"],
        "q4": ["tail users"], "q5": ["head users"], "q6": ["head users"]}
    # 0.3 of 6 = 1.8 queries: u1 alone (2) suffices; u4 ties with u1 but sorts after it.
    few = make(queries, qrels, documents, hits, ids=["q5", "q1"],
               dimensions=["user_activity"], head_users=0.3)
    assert label_map(few, "user_activity") == {"q1": ["head users"], "q5": ["tail users"]}
    # exactly reaching the share stops the head: 4/6 ≥ 2/3, so u2 is tail.
    exact = make(queries, qrels, documents, hits, dimensions=["user_activity"],
                 head_users=4 / 6)
    assert label_map(exact, "user_activity")["q2"] == ["tail users"]


@pytest.fixture
def user_queries(queries):
    """The same queries as user-queries: history before the cut, held out, country."""
    return queries.assign(history=[0, 4, 5, 12, 0, 1],
                          held_out=[False, True, False, False, True, False],
                          country=["France", "EIRE", None, "France", "Germany", "EIRE"])


def test_user_query_dimensions(user_queries, qrels, documents, hits):
    out = make(user_queries, qrels, documents, hits, dimensions=list(USER_DIMENSIONS))
    assert list(pd.unique(out["dimension"])) == list(USER_DIMENSIONS)
    assert label_map(out, "history") == {
        "q1": ["long_tail"], "q2": ["long_tail"], "q3": ["active"], "q4": ["active"],
        "q5": ["long_tail"], "q6": ["long_tail"]}
    assert label_map(out, "returning") == {
        "q1": ["new"], "q2": ["returning"], "q3": ["returning"], "q4": ["returning"],
        "q5": ["new"], "q6": ["returning"]}
    assert label_map(out, "country") == {
        "q1": ["France"], "q2": ["EIRE"], "q3": ["unknown"], "q4": ["France"],
        "q5": ["Germany"], "q6": ["EIRE"]}
    assert label_map(out, "holdout") == {
        "q1": ["seen"], "q2": ["unseen"], "q3": ["seen"], "q4": ["seen"], "q5": ["unseen"],
        "q6": ["seen"]}
    strict = make(user_queries, qrels, documents, hits, dimensions=["history"],
                  long_tail_history=1)
    assert label_map(strict, "history")["q6"] == ["active"]
    assert label_map(strict, "history")["q1"] == ["long_tail"]


def test_user_query_dimensions_are_skipped_without_their_columns(user_queries, qrels,
                                                                   documents, hits):
    for column, skipped in (("history", {"history", "returning"}), ("country", {"country"}),
                            ("held_out", {"holdout"})):
        out = make(user_queries.drop(columns=column), qrels, documents, hits,
                   dimensions=[*USER_DIMENSIONS, "role"])
        assert set(out["dimension"]) == {*USER_DIMENSIONS, "role"} - skipped, column


def test_freshness_of_user_queries_from_the_items_first_seen(user_queries, qrels, documents,
                                                             hits):
    out = make(user_queries, qrels, documents, hits, dimensions=["freshness", "holdout"])
    assert label_map(out, "freshness")["q5"] == ["new"]  # d4 first seen a day before the cut


def test_labels_only_for_the_given_query_ids(queries, qrels, documents, hits):
    out = make(queries, qrels, documents, hits, ids=["q3"], dimensions=["tag", "freshness"])
    assert set(out["query_id"]) == {"q3"}
    assert len(out) == 4  # three tags and one freshness


def test_labels_reject_unknown_query_ids_and_missing_columns(queries, qrels, documents, hits):
    with pytest.raises(InputError, match="not in queries"):
        make(queries, qrels, documents, hits, ids=["q1", "nope"])
    with pytest.raises(InputError, match="published_at"):
        make(queries, qrels, documents[["doc_id"]], hits, dimensions=["freshness"])
    with pytest.raises(InputError, match="tags"):
        make(queries.drop(columns="tags"), qrels, documents, hits, dimensions=["kind"])


# --- slice_table ---------------------------------------------------------------------------

A1 = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
B1 = [0.3, 0.2, np.nan, 0.8, 0.9, 1.0]
C1 = [0.0, 0.0, 0.0, 1.0, 1.0, np.nan]
A2 = [0.5] * 6
B2 = [0.5, 0.6, 0.7, 0.5, 0.4, 0.9]
OPTIONS = {"min_n": 3, "min_effect": 0.01, "resamples": 500, "alpha": 0.05, "seed": 7}


@pytest.fixture
def per_query():
    values = {("A", "m1"): A1, ("B", "m1"): B1, ("C", "m1"): C1, ("A", "m2"): A2,
              ("B", "m2"): B2, ("C", "m2"): A2}
    return pd.concat([pd.DataFrame({"system": s, "query_id": IDS, "measure": m, "value": v})
                      for (s, m), v in values.items()], ignore_index=True)


@pytest.fixture
def slice_labels():
    rows = [("q1", "g", "x"), ("q2", "g", "x"), ("q3", "g", "x"), ("q4", "g", "y"),
            ("q5", "g", "y"), ("q6", "g", "y"), ("q1", "h", "z"), ("q4", "h", "z")]
    return pd.DataFrame(rows, columns=["query_id", "dimension", "slice"])


def table_of(per_query, slice_labels, **options):
    return slice_table(per_query, slice_labels, ["A", "B", "C"], ["m1", "m2"], "A", "B",
                       **{**OPTIONS, **options})


def row(table, dimension, slice_, measure):
    found = table[(table["dimension"] == dimension) & (table["slice"] == slice_)
                  & (table["measure"] == measure)]
    assert len(found) == 1
    return found.iloc[0]


def test_rows_all_first_then_slices_with_counts_and_means(per_query, slice_labels):
    table = table_of(per_query, slice_labels)
    assert list(zip(table["dimension"], table["slice"], table["measure"], strict=True)) == [
        ("all", "all", "m1"), ("all", "all", "m2"), ("g", "x", "m1"), ("g", "x", "m2"),
        ("g", "y", "m1"), ("g", "y", "m2"), ("h", "z", "m1"), ("h", "z", "m2")]
    assert list(table.columns[:9]) == ["dimension", "slice", "measure", "n", "n_queries",
                                       "mean_A", "mean_B", "mean_C", "too_small"]
    assert list(table.columns[-1:]) == ["p_holm"]
    everything = row(table, "all", "all", "m1")
    assert (everything["n"], everything["n_queries"]) == (5, 6)
    assert everything["mean_A"] == pytest.approx(0.35)
    assert everything["mean_B"] == pytest.approx(0.64)
    assert everything["mean_C"] == pytest.approx(0.4)
    x = row(table, "g", "x", "m1")
    assert (x["n"], x["n_queries"]) == (2, 3)
    assert (x["mean_A"], x["mean_B"], x["mean_C"]) == pytest.approx((0.2, 0.25, 0.0))
    y = row(table, "g", "y", "m1")
    assert (y["mean_A"], y["mean_B"], y["mean_C"]) == pytest.approx((0.5, 0.9, 1.0))


def test_too_small_rows_are_not_tested(per_query, slice_labels):
    table = table_of(per_query, slice_labels)
    small = table[table["too_small"]]
    assert set(zip(small["slice"], small["measure"], strict=True)) == {
        ("x", "m1"), ("z", "m1"), ("z", "m2")}
    assert (small["verdict"] == "too small").all()
    for col in ("mean_diff", "ci_low", "ci_high", "p_value", "p_holm", "wins"):
        assert small[col].isna().all(), col
    assert table.loc[~table["too_small"], "p_value"].notna().all()


def test_p_holm_is_holm_over_every_tested_row(per_query, slice_labels):
    table = table_of(per_query, slice_labels)
    tested = table[~table["too_small"]]
    assert len(tested) == 5
    np.testing.assert_allclose(tested["p_holm"], holm(tested["p_value"].to_numpy()))
    assert (tested["p_holm"] >= tested["p_value"]).all()
    assert (tested["p_holm"] > tested["p_value"]).any()


def test_all_row_equals_paired_on_every_query(per_query, slice_labels):
    table = table_of(per_query, slice_labels)
    expected = paired(np.array(A1), np.array(B1), min_effect=0.01, resamples=500, seed=7)
    got = row(table, "all", "all", "m1")
    for field in ("mean_diff", "median_diff", "wins", "ties", "losses", "ci_low", "ci_high",
                  "p_value", "min_effect", "unit"):
        assert got[field] == getattr(expected, field), field
    assert got["verdict"] == holm_verdicts([expected.verdict], [got["p_holm"]], 0.05)[0]
    y = row(table, "g", "y", "m2")
    assert y["mean_diff"] == pytest.approx(paired(np.array(A2[3:]), np.array(B2[3:]),
                                                  resamples=500).mean_diff)


def test_min_effect_per_measure(per_query, slice_labels):
    table = table_of(per_query, slice_labels, min_effect={"m1": 0.05, "m2": 0.5})
    assert row(table, "all", "all", "m1")["min_effect"] == 0.05
    m2 = row(table, "all", "all", "m2")
    expected = paired(np.array(A2), np.array(B2), min_effect=0.5, resamples=500, seed=7)
    assert (m2["min_effect"], m2["verdict"]) == (0.5, expected.verdict)
    assert m2["verdict"] == "no consequential change"
    with pytest.raises(InputError, match="min_effect"):
        table_of(per_query, slice_labels, min_effect={"m1": 0.05})


def test_clusters_resample_users_and_one_user_is_too_small(per_query, slice_labels):
    users = pd.Series(["u1", "u1", "u1", "u2", "u3", "u3"], index=IDS)
    table = table_of(per_query, slice_labels, clusters=users)
    expected = paired(np.array(A2), np.array(B2), clusters=users.to_numpy(), min_effect=0.01,
                      resamples=500, seed=7)
    everything = row(table, "all", "all", "m2")
    assert (everything["unit"], everything["p_value"]) == ("cluster", expected.p_value)
    assert row(table, "g", "x", "m2")["too_small"]  # three queries, one user
    assert not row(table, "g", "y", "m2")["too_small"]


def test_a_slice_without_metric_rows_is_too_small_not_an_error(per_query, slice_labels):
    extra = pd.concat([slice_labels, pd.DataFrame(
        {"query_id": ["q9"], "dimension": ["h"], "slice": ["w"]})], ignore_index=True)
    table = table_of(per_query, extra)
    w = row(table, "h", "w", "m1")
    assert (w["n"], w["n_queries"], w["too_small"]) == (0, 1, True)
    assert np.isnan(w["mean_A"])
    assert row(table, "all", "all", "m1")["n_queries"] == 7


@pytest.mark.parametrize("change, message", [
    ({"systems": ["A", "Z"]}, "system"),
    ({"measures": ["m1", "nope"]}, "measure"),
    ({"candidate": "A"}, "same system"),
    ({"per_query": "drop value"}, "value"),
    ({"labels": "drop slice"}, "slice"),
    ({"labels": "all"}, "reserved"),
])
def test_bad_input_is_an_input_error(per_query, slice_labels, change, message):
    args = {"systems": ["A", "B"], "measures": ["m1"], "baseline": "A", "candidate": "B"}
    args.update({k: v for k, v in change.items() if k in args})
    if change.get("per_query") == "drop value":
        per_query = per_query.drop(columns="value")
    if change.get("labels") == "drop slice":
        slice_labels = slice_labels.drop(columns="slice")
    if change.get("labels") == "all":
        slice_labels = slice_labels.assign(dimension="all")
    with pytest.raises(InputError, match=message):
        slice_table(per_query, slice_labels, args["systems"], args["measures"],
                    args["baseline"], args["candidate"], **OPTIONS)
