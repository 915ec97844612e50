"""Aggregation and rate/mix decomposition on tiny hand-computed frames: the worked composition
example, rate-only change, additivity under random slices and weights, the four aggregates,
undefined values, and slices present on one side only."""

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from releval.decision.aggregation import CONTROLLED_NOTE, PAIRED_NOTE, aggregates, decompose
from releval.errors import InputError

EXACT = {"abs": 1e-12}


def sample(**slices: list) -> pd.DataFrame:
    """``slice=[value, ...]`` (weight 1) or ``slice=[(value, weight), ...]`` → a values frame."""
    rows = [(name, *(v if isinstance(v, tuple) else (v, 1.0)))
            for name, vals in slices.items() for v in vals]
    return pd.DataFrame(rows, columns=["slice", "value", "weight"])


def test_worked_example_is_pure_composition():
    before = sample(A=[0.8] * 20, B=[0.2] * 80)
    after = sample(A=[0.8] * 80, B=[0.2] * 20)
    d = decompose(before, after)
    assert d.before == pytest.approx(0.32, **EXACT)
    assert d.after == pytest.approx(0.68, **EXACT)
    assert d.delta == pytest.approx(0.36, **EXACT)
    assert d.rate == pytest.approx(0.0, **EXACT)
    assert d.mix == pytest.approx(0.36, **EXACT)
    assert d.equal_slice_before == pytest.approx(0.5, **EXACT)
    assert d.equal_slice_after == pytest.approx(0.5, **EXACT)
    assert d.mix_shift is True
    assert d.controlled is False and d.note == CONTROLLED_NOTE
    a, b = d.slices
    assert (a.slice, a.n_before, a.n_after) == ("A", 20, 80)
    assert (a.share_before, a.share_after) == pytest.approx((0.2, 0.8), **EXACT)
    assert (b.share_before, b.share_after) == pytest.approx((0.8, 0.2), **EXACT)
    assert a.mix == pytest.approx(0.6 * 0.8, **EXACT)  # (0.8 − 0.2)(0.8 + 0.8)/2
    assert b.mix == pytest.approx(-0.6 * 0.2, **EXACT)


def test_rate_only_change_has_no_mix_and_no_flag():
    before = sample(A=[0.8] * 20, B=[0.2] * 80)
    after = sample(A=[0.9] * 20, B=[0.2] * 80)
    d = decompose(before, after)
    assert d.delta == pytest.approx(0.02, **EXACT)  # 0.2 × 0.1
    assert d.rate == pytest.approx(0.02, **EXACT)
    assert d.mix == pytest.approx(0.0, **EXACT)
    assert d.equal_slice_after - d.equal_slice_before == pytest.approx(0.05, **EXACT)
    assert d.mix_shift is False
    assert d.controlled is False  # not said to be one sample: different samples
    same = decompose(before, after, same_sample=True)
    assert same.controlled is True and same.note == PAIRED_NOTE
    assert (same.delta, same.rate, same.mix) == (d.delta, d.rate, d.mix)


def test_aggregate_against_every_slice_is_flagged():
    # Both slices improve, but traffic moves to the weak slice: the aggregate falls.
    before = sample(A=[0.8] * 80, B=[0.2] * 20)
    after = sample(A=[0.85] * 20, B=[0.25] * 80)
    d = decompose(before, after)
    assert d.delta == pytest.approx(0.37 - 0.68, **EXACT)
    assert d.rate > 0 > d.mix
    assert d.mix_shift is True


def test_to_dict_is_json_ready():
    d = decompose(sample(A=[1.0], B=[0.0]), sample(A=[1.0]))
    out = json.loads(json.dumps(d.to_dict()))
    assert out["controlled"] is False and out["note"] == CONTROLLED_NOTE
    assert out["slices"][1] == {
        "slice": "B", "n_before": 1, "n_after": 0, "n_undefined_before": 0,
        "n_undefined_after": 0, "share_before": 0.5, "share_after": 0.0, "mean_before": 0.0,
        "mean_after": None, "rate": 0.0, "mix": 0.0}


slice_rows = st.lists(
    st.tuples(st.sampled_from("abcde"),
              st.one_of(st.floats(0, 1), st.just(math.nan)),
              st.floats(0, 100)),
    min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(slice_rows, slice_rows)
def test_parts_add_up_to_delta(rows_b, rows_a):
    before, after = (pd.DataFrame(r, columns=["slice", "value", "weight"])
                     for r in (rows_b, rows_a))
    if any(aggregates(f)["traffic_weighted"] is None for f in (before, after)):
        with pytest.raises(InputError, match="no defined value with positive weight"):
            decompose(before, after)
        return
    d = decompose(before, after)
    assert d.before == pytest.approx(aggregates(before)["traffic_weighted"], abs=1e-9)
    assert d.after == pytest.approx(aggregates(after)["traffic_weighted"], abs=1e-9)
    assert d.rate + d.mix == pytest.approx(d.delta, abs=1e-9)
    assert sum(s.rate for s in d.slices) == pytest.approx(d.rate, abs=1e-9)
    assert sum(s.share_before for s in d.slices) == pytest.approx(1.0, abs=1e-9)
    assert sum(s.share_after for s in d.slices) == pytest.approx(1.0, abs=1e-9)
    if d.mix_shift:
        assert abs(d.mix) > abs(d.rate) and d.mix * d.delta > 0


def hand_example() -> pd.DataFrame:
    # a: values 1, 0 with weights 3, 1; b: value 0.5 with weight 1
    return sample(a=[(1.0, 3.0), (0.0, 1.0)], b=[(0.5, 1.0)])


def test_macro_traffic_weighted_and_equal_slice_differ():
    agg = aggregates(hand_example())
    assert agg["macro"] == pytest.approx(1.5 / 3, **EXACT)
    assert agg["traffic_weighted"] == pytest.approx(3.5 / 5, **EXACT)
    assert agg["equal_slice"] == pytest.approx((0.75 + 0.5) / 2, **EXACT)
    assert (agg["n"], agg["n_undefined"], agg["n_slices"], agg["micro"]) == (3, 0, 2, None)


def test_without_weights_traffic_weighted_is_macro():
    agg = aggregates(hand_example(), weight_col=None)
    assert agg["traffic_weighted"] == pytest.approx(agg["macro"], **EXACT)
    assert agg["equal_slice"] == pytest.approx(0.5, **EXACT)


def test_micro_is_ratio_of_sums():
    values = pd.DataFrame({"slice": ["x", "x", "y"], "value": [0.5, 1.0, math.nan],
                           "rel_ret": [1, 3, 0], "rel": [2, 3, 0]})
    agg = aggregates(values, weight_col=None, micro=("rel_ret", "rel"))
    assert agg["micro"] == pytest.approx(4 / 5, **EXACT)
    assert agg["macro"] == pytest.approx(0.75, **EXACT)


def test_undefined_values_are_excluded_and_counted():
    values = sample(a=[1.0, math.nan, 0.0], b=[math.nan, math.nan])
    agg = aggregates(values)
    assert (agg["n"], agg["n_undefined"], agg["n_slices"]) == (2, 3, 1)
    assert agg["macro"] == agg["traffic_weighted"] == agg["equal_slice"] == pytest.approx(0.5)
    a, b = decompose(values, values).slices  # per slice: defined and undefined counted apart
    assert (a.n_before, a.n_undefined_before, b.n_before, b.n_undefined_before) == (2, 1, 0, 2)
    assert a.mean_before == pytest.approx(0.5, **EXACT) and b.mean_before is None


def test_all_undefined_gives_none():
    agg = aggregates(sample(a=[math.nan]))
    assert (agg["macro"], agg["traffic_weighted"], agg["equal_slice"]) == (None, None, None)


def test_slice_present_in_one_evaluation_only():
    before = sample(A=[0.4, 0.6])
    after = sample(A=[0.6, 0.6], C=[0.2, 0.2])
    d = decompose(before, after)
    assert (d.before, d.after) == pytest.approx((0.5, 0.4), **EXACT)
    a, c = d.slices
    assert a.rate == pytest.approx((0.6 - 0.5) * (1 + 0.5) / 2, **EXACT)
    assert a.mix == pytest.approx((0.5 - 1) * (0.5 + 0.6) / 2, **EXACT)
    # C: share 0 before, its mean taken from after for the midpoint: all of s'm' is mix
    assert (c.share_before, c.mean_before, c.n_before) == (0.0, None, 0)
    assert c.rate == 0.0
    assert c.mix == pytest.approx(0.5 * 0.2, **EXACT)
    assert d.rate + d.mix == pytest.approx(d.delta, **EXACT)
    assert (d.equal_slice_before, d.equal_slice_after) == pytest.approx((0.5, 0.4), **EXACT)
    assert d.mix_shift is True  # falls while A, the only common slice, rose


@pytest.mark.parametrize(("frame", "message"), [
    (pd.DataFrame({"slice": ["a"], "value": [1.0]}), "missing column"),
    (pd.DataFrame({"slice": ["a", None], "value": [1.0, 0.0], "weight": [1.0, 1.0]}),
     "slice is missing"),
    (pd.DataFrame({"slice": ["a"], "value": [1.0], "weight": [-1.0]}), "weight must be"),
    (pd.DataFrame({"slice": ["a"], "value": [math.inf], "weight": [1.0]}), "finite or NaN"),
    (pd.DataFrame({"slice": ["a"], "value": ["x"], "weight": [1.0]}), "must be numeric"),
])
def test_bad_input_is_rejected(frame, message):
    with pytest.raises(InputError, match=message):
        aggregates(frame)
    with pytest.raises(InputError, match=message):
        decompose(frame, sample(a=[1.0]))
