"""Fusion on tiny inline windows: hand-computed RRF and linear scores, the union rule, the run
contract, errors, and tuning that sees only validation queries."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from releval.data import contracts as S
from releval.errors import InputError
from releval.retrieval.fusion import (
    FUSIONS,
    NORMALISERS,
    Tuning,
    expand_grid,
    fuse,
    linear,
    rrf,
    tune,
)


def window(**queries) -> pd.DataFrame:
    """A run from ``query_id=[(doc_id, score), ...]`` listed best first (rank 1..n)."""
    rows = [(q, d, i, float(s)) for q, docs in queries.items()
            for i, (d, s) in enumerate(docs, start=1)]
    frame = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])
    return frame.astype({S.QUERY_ID: "str", S.DOC_ID: "str", S.RANK: "int64"})


def ranked(run: pd.DataFrame, query_id: str = "q") -> list[tuple[str, float]]:
    rows = run.loc[run[S.QUERY_ID] == query_id].sort_values(S.RANK)
    return list(zip(rows[S.DOC_ID], rows[S.SCORE], strict=True))


def assert_ranked(run: pd.DataFrame, expected: list[tuple[str, float]]) -> None:
    """``run``'s query q is exactly ``expected``: doc_ids in order, scores to float tolerance."""
    docs, scores = zip(*ranked(run), strict=True)
    assert list(docs) == [d for d, _ in expected]
    assert list(scores) == pytest.approx([s for _, s in expected])


def assert_contract(run: pd.DataFrame, depth: int) -> None:
    """Run contract: columns, rank 1..n, score non-increasing, ties by doc_id, ≤ depth."""
    assert list(run.columns) == [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]
    assert not run[S.SCORE].isna().any()
    assert not run.duplicated([S.QUERY_ID, S.DOC_ID]).any()
    for _, group in run.groupby(S.QUERY_ID):
        group = group.sort_values(S.RANK)
        assert group[S.RANK].tolist() == list(range(1, len(group) + 1))
        assert len(group) <= depth
        score, doc = group[S.SCORE].to_numpy(), group[S.DOC_ID].to_numpy()
        assert (np.diff(score) <= 0).all()
        tied = score[1:] == score[:-1]
        assert (doc[1:][tied] > doc[:-1][tied]).all()


# Two tiny windows for query q: A = d1 10, d2 5, d3 0; B = d2 3, d4 1.
A = window(q=[("d1", 10), ("d2", 5), ("d3", 0)])
B = window(q=[("d2", 3), ("d4", 1)])


def test_rrf_hand_computed():
    # k = 1: d2 = 1/(1+2) + 1/(1+1); d1 = 1/2; d4 = 1/3; d3 = 1/4
    out = rrf({"a": A, "b": B}, depth=10, k=1)
    assert_ranked(out, [("d2", 5 / 6), ("d1", 1 / 2), ("d4", 1 / 3), ("d3", 1 / 4)])
    assert_contract(out, 10)
    default = rrf({"a": A, "b": B}, depth=10)  # k = 60
    assert ranked(default)[0] == ("d2", pytest.approx(1 / 62 + 1 / 61))


def test_linear_minmax_hand_computed():
    # A → d1 1, d2 .5, d3 0; B → d2 1, d4 0; missing → the route's lowest, 0.
    # d1 = .25·1 + .75·0; d2 = .25·.5 + .75·1; d3 = 0 = d4 (tie → doc_id)
    out = linear({"a": A, "b": B}, 10, {"a": 0.25, "b": 0.75})
    assert_ranked(out, [("d2", 0.875), ("d1", 0.25), ("d3", 0.0), ("d4", 0.0)])
    assert_contract(out, 10)


def test_linear_minmax_constant_window_gives_one_to_all():
    # B holds only d2 (max = min): d2 → 1.0, and the missing-document rule gives d1, d3 1.0
    out = linear({"a": A, "b": window(q=[("d2", 7)])}, 10, {"a": 0.25, "b": 0.75})
    assert_ranked(out, [("d1", 1.0), ("d2", 0.875), ("d3", 0.75)])


def test_linear_zscore_hand_computed():
    # A: mean 5, population std √(50/3) → d1 √1.5, d2 0, d3 −√1.5; B: mean 2, std 1 → ±1.
    # Missing → the route's lowest: d1 gets B's −1, d4 gets A's −√1.5 (ties d3 → doc_id).
    z = math.sqrt(1.5)
    out = linear({"a": A, "b": B}, 10, {"a": 0.5, "b": 0.5}, norm="zscore")
    assert_ranked(out, [("d2", 0.5), ("d1", 0.5 * z - 0.5), ("d3", -0.5 * z - 0.5),
                        ("d4", -0.5 * z - 0.5)])
    assert_contract(out, 10)


def test_zscore_of_a_constant_window_is_zero():
    out = linear({"a": window(q=[("x", 0.1), ("y", 0.1), ("z", 0.1)]), "b": window()}, 10,
                 {"a": 1.0, "b": 1.0}, norm="zscore")
    assert ranked(out) == [("x", 0.0), ("y", 0.0), ("z", 0.0)]


@pytest.mark.parametrize("params", [{"method": "rrf", "k": 60},
                                    {"method": "linear", "weights": {"a": 0.5, "b": 0.5}},
                                    {"method": "linear", "weights": {"a": 0.5, "b": 0.5},
                                     "norm": "zscore"}])
def test_union_only_and_per_query_windows(params):
    a = window(q=[("d1", 3), ("d2", 2)], p=[("e1", 1)])
    b = window(q=[("d2", 9), ("d5", 1)], r=[("f1", 4), ("f2", 4)])
    out = fuse({"a": a, "b": b}, 10, params)
    assert {(q, d) for q, d in zip(out[S.QUERY_ID], out[S.DOC_ID], strict=True)} == {
        ("q", "d1"), ("q", "d2"), ("q", "d5"), ("p", "e1"), ("r", "f1"), ("r", "f2")}
    assert_contract(out, 10)


def test_depth_truncates_each_query():
    a = window(q=[("d1", 3), ("d2", 2), ("d3", 1)], p=[("e1", 2), ("e2", 1)])
    b = window(q=[("d4", 3), ("d5", 2)], p=[("e3", 1)])
    out = rrf({"a": a, "b": b}, depth=2)
    assert out.groupby(S.QUERY_ID).size().to_dict() == {"p": 2, "q": 2}
    assert [d for d, _ in ranked(out)] == ["d1", "d4"]  # 1/61 each: tie → doc_id
    assert_contract(out, 2)


def test_ties_fall_to_doc_id_even_when_float_sums_depend_on_order():
    # x ranks (1, 7, 2), y ranks (2, 1, 7) over routes a, b, c: equal RRF scores, but a
    # left-to-right float sum makes y larger by one ulp. Fused: x first, then y.
    def route(x, y, tag):
        docs = [f"{tag}{i}" for i in range(1, 8)]
        docs[x - 1], docs[y - 1] = "x", "y"
        return window(q=[(d, 8 - i) for i, d in enumerate(docs, start=1)])

    out = rrf({"a": route(1, 2, "a"), "b": route(7, 1, "b"), "c": route(2, 7, "c")}, 2)
    assert ranked(out)[0] == ("x", ranked(out)[1][1])
    assert [d for d, _ in ranked(out)] == ["x", "y"]


def test_a_route_without_a_window_for_the_query_changes_no_order():
    a = window(q=[("d1", 3), ("d2", 1)])
    out = linear({"a": a, "b": window(p=[("e", 1)])}, 10, {"a": 1.0, "b": 2.0})
    assert ranked(out) == [("d1", 1.0), ("d2", 0.0)]


@pytest.mark.parametrize("params", [{"method": "rrf", "k": 1},
                                    {"method": "linear", "weights": {"a": 0.25, "b": 0.75}}])
def test_a_source_runs_probability_column_is_ignored_and_not_carried(params):
    a = A.assign(**{S.PROBABILITY: [0.9, 0.4, 0.1]})
    out = fuse({"a": a, "b": B}, 10, params)
    assert list(out.columns) == [S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]
    pd.testing.assert_frame_equal(out, fuse({"a": A, "b": B}, 10, params))


def test_registries():
    assert FUSIONS == {"rrf": rrf, "linear": linear}
    assert set(NORMALISERS) == {"minmax", "zscore"}


@pytest.mark.parametrize(("call", "message"), [
    (lambda: rrf({"a": A}, 10), "at least two runs"),
    (lambda: fuse({"a": A, "b": B}, 10, {"method": "combsum"}), "unknown fusion method"),
    (lambda: fuse({"a": A, "b": B}, 10, {"method": "rrf", "kk": 1}), "rrf:"),
    (lambda: linear({"a": A, "b": B}, 10, {"a": 1, "b": 1}, norm="l2"), "unknown norm"),
    (lambda: linear({"a": A, "b": B}, 10, {"a": 1, "b": 1, "dense": 1}), "no run"),
    (lambda: linear({"a": A, "b": B}, 10, {"a": 1}), "no weight for route"),
    (lambda: linear({"a": A, "b": B}, 10, {"a": 1, "b": -1}), "≥ 0"),
    (lambda: rrf({"a": A, "b": B}, 0), "depth"),
    (lambda: rrf({"a": A, "b": B}, 10, k=-1), "k must be"),
    (lambda: rrf({"a": A, "b": B.drop(columns=S.RANK)}, 10), "missing column"),
    (lambda: rrf({"a": A, "b": B.assign(score=np.nan)}, 10), "NaN"),
    (lambda: rrf({"a": A, "b": B.assign(rank=0)}, 10), "rank"),
    (lambda: rrf({"a": A, "b": B.assign(doc_id="d9")}, 10), "repeats"),
    (lambda: expand_grid("combsum", [60], [], [], ("a", "b")), "unknown fusion method"),
    (lambda: expand_grid("linear", [], [1.5], ["minmax"], ("a", "b")), "[0, 1]"),
    (lambda: expand_grid("rrf", [60], [], [], ("a", "a")), "two distinct routes"),
])
def test_bad_input_is_an_input_error(call, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        call()


def test_expand_grid():
    assert expand_grid("rrf", [10, 60], [0.5], ["zscore"], ("bm25", "dense")) == [
        {"method": "rrf", "k": 10}, {"method": "rrf", "k": 60}]
    assert expand_grid("linear", [60], [0.7, 1.0], ["minmax", "zscore"], ("bm25", "dense")) == [
        {"method": "linear", "weights": {"bm25": 0.7, "dense": 0.3}, "norm": "minmax"},
        {"method": "linear", "weights": {"bm25": 1.0, "dense": 0.0}, "norm": "minmax"},
        {"method": "linear", "weights": {"bm25": 0.7, "dense": 0.3}, "norm": "zscore"},
        {"method": "linear", "weights": {"bm25": 1.0, "dense": 0.0}, "norm": "zscore"}]


# Tuning: each query has one relevant document r (grade 3) and two non-relevant n1, n2.
# Validation query v: route a ranks r last, route b ranks r first. Test queries t1..t3: the
# opposite. nDCG@10 on v: a only → (3/log2 4)/3 = .5; b only → 1; rrf(60) → n1, r, n2 → 1/log2 3.
RUNS = {
    "a": window(v=[("n1", 3), ("n2", 2), ("r", 1)],
                **{t: [("r", 3), ("n1", 2), ("n2", 1)] for t in ("t1", "t2", "t3")}),
    "b": window(v=[("r", 3), ("n1", 2), ("n2", 1)],
                **{t: [("n1", 3), ("n2", 2), ("r", 1)] for t in ("t1", "t2", "t3")}),
}
QRELS = pd.DataFrame([(q, d, 3 if d == "r" else 0) for q in ("v", "t1", "t2", "t3")
                      for d in ("r", "n1", "n2")], columns=[S.QUERY_ID, S.DOC_ID, S.GRADE])
A_ONLY = {"method": "linear", "weights": {"a": 1.0, "b": 0.0}, "norm": "minmax"}
B_ONLY = {"method": "linear", "weights": {"a": 0.0, "b": 1.0}, "norm": "minmax"}
B_ONLY_Z = {"method": "linear", "weights": {"a": 0.0, "b": 1.0}, "norm": "zscore"}
RRF = {"method": "rrf", "k": 60}


def test_tune_picks_the_best_validation_entry():
    result = tune(RUNS, QRELS, ["v"], 10, [A_ONLY, B_ONLY, RRF])
    assert isinstance(result, Tuning)
    assert result.best == B_ONLY
    assert result.table["params"].tolist() == [json.dumps(p, sort_keys=True)
                                               for p in (A_ONLY, B_ONLY, RRF)]
    assert result.table[S.VALUE].tolist() == pytest.approx([0.5, 1.0, 1 / math.log2(3)])
    assert result.table["n"].tolist() == [1, 1, 1]
    assert (result.table[S.MEASURE] == "nDCG@10").all()


def test_tune_ties_go_to_the_earliest_entry():
    assert tune(RUNS, QRELS, ["v"], 10, [A_ONLY, B_ONLY_Z, B_ONLY]).best == B_ONLY_Z
    assert tune(RUNS, QRELS, ["v"], 10, [A_ONLY, B_ONLY, B_ONLY_Z]).best == B_ONLY


def test_tune_never_looks_at_test_queries():
    grid = [A_ONLY, B_ONLY, RRF]
    # over all queries a only would win: (.5 + 3·1)/4 > (1 + 3·.5)/4
    assert tune(RUNS, QRELS, ["v", "t1", "t2", "t3"], 10, grid).best == A_ONLY
    validation = tune(RUNS, QRELS, ["v"], 10, grid)
    assert validation.best == B_ONLY
    # dropping the test queries' rows and judgments changes nothing
    only_v = tune({r: run[run[S.QUERY_ID] == "v"] for r, run in RUNS.items()},
                  QRELS[QRELS[S.QUERY_ID] == "v"], ["v"], 10, grid)
    pd.testing.assert_frame_equal(only_v.table, validation.table)


def test_tune_rejects_an_empty_grid_and_an_undefined_objective():
    with pytest.raises(InputError, match="grid is empty"):
        tune(RUNS, QRELS, ["v"], 10, [])
    unjudged = QRELS.assign(grade=0)
    with pytest.raises(InputError, match="undefined on every validation query"):
        tune(RUNS, unjudged, ["v"], 10, [RRF])


@st.composite
def windows(draw):
    """2–3 routes over queries q0..q2 and documents d0..d7, each a valid window (scores
    drawn from few values so ties are common), plus depth and fusion params."""
    routes = [f"r{i}" for i in range(draw(st.integers(2, 3)))]
    runs = {}
    for route in routes:
        rows = []
        for q in ("q0", "q1", "q2"):
            docs = draw(st.lists(st.sampled_from([f"d{i}" for i in range(8)]), unique=True,
                                 max_size=6))
            scores = draw(st.lists(st.integers(0, 3), min_size=len(docs), max_size=len(docs)))
            ordered = sorted(zip(scores, docs, strict=True), key=lambda sd: (-sd[0], sd[1]))
            rows += [(q, d, i, float(s)) for i, (s, d) in enumerate(ordered, start=1)]
        runs[route] = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])
    params = draw(st.sampled_from([
        {"method": "rrf", "k": 60}, {"method": "rrf", "k": 0},
        {"method": "linear", "weights": dict.fromkeys(routes, 0.5), "norm": "minmax"},
        {"method": "linear", "weights": dict.fromkeys(routes, 0.5), "norm": "zscore"}]))
    return runs, draw(st.integers(1, 10)), params


@settings(max_examples=60, deadline=None)
@given(windows())
def test_property_union_and_window_size(case):
    runs, depth, params = case
    out = fuse(runs, depth, params)
    union = pd.concat(runs.values()).groupby(S.QUERY_ID)[S.DOC_ID].agg(set).to_dict()
    got = out.groupby(S.QUERY_ID)[S.DOC_ID].agg(set).to_dict()
    assert set(got) == set(union)
    for q, docs in union.items():
        assert got[q] <= docs
        assert len(got[q]) == min(depth, len(docs))
    assert_contract(out, depth)
