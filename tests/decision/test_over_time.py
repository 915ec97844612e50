"""A run's kept figures and the over-time comparison of two runs: the kept per-slice tables
give the same decomposition as the raw per-query values, the worked composition example,
and the cases that cannot be set side by side."""

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from releval.decision.aggregation import (
    compare_slices,
    decompose,
    from_rows,
    slice_rows,
    slice_table,
)
from releval.decision.over_time import compare_figures, figures

EXACT = {"abs": 1e-12}


def diff_rows(**slices: list[float]) -> pd.DataFrame:
    """The compare stage's per-query rows for one measure, candidate = baseline + 0.1."""
    values = [(name, v) for name, vals in slices.items() for v in vals]
    return pd.DataFrame({"query_id": [f"q{i}" for i in range(len(values))],
                         "measure": "RR@10", "baseline": [v for _, v in values],
                         "candidate": [v + 0.1 for _, v in values],
                         "diff": 0.1, "stratum": [s for s, _ in values], "weight": 1.0})


def kept(rows: pd.DataFrame) -> dict:
    """The figures as the receipt keeps them: through JSON."""
    return json.loads(json.dumps(figures(rows, "bm25", "hybrid", "kind", resamples=200,
                                         alpha=0.05, seed=1)))


def test_figures_keep_mean_ci_and_per_slice_table():
    f = kept(diff_rows(error_code=[1, 1, 1, 1, 0], paraphrase=[1, 0, 0, 0, 0]))
    rr = f["systems"]["bm25"]["RR@10"]
    assert rr["mean"] == pytest.approx(0.5) and rr["n"] == 10 and rr["n_undefined"] == 0
    assert rr["ci_low"] <= rr["mean"] <= rr["ci_high"]
    assert rr["slices"] == [
        {"slice": "error_code", "n": 5, "n_undefined": 0, "weight": 5.0, "mean": 0.8},
        {"slice": "paraphrase", "n": 5, "n_undefined": 0, "weight": 5.0, "mean": 0.2}]
    assert f["systems"]["hybrid"]["RR@10"]["mean"] == pytest.approx(0.6)


def test_the_composition_example_between_two_runs():
    before = kept(diff_rows(error_code=[1] * 4 + [0], paraphrase=[1] * 4 + [0] * 16))
    after = kept(diff_rows(error_code=[1] * 16 + [0] * 4, paraphrase=[1] + [0] * 4))
    moved = compare_figures(before, after)
    assert moved["controlled"] is False and moved["comparable"] is True
    assert "uncontrolled" in moved["note"]
    d = moved["systems"]["bm25"]["RR@10"]
    assert (d["before"], d["after"]) == pytest.approx((0.32, 0.68), **EXACT)
    assert d["rate"] == pytest.approx(0.0, **EXACT) and d["mix"] == pytest.approx(0.36, **EXACT)
    assert d["rate"] + d["mix"] == pytest.approx(d["delta"], **EXACT)
    assert d["equal_slice_before"] == d["equal_slice_after"] == pytest.approx(0.5, **EXACT)
    assert d["mix_shift"] is True
    assert (d["macro_before"], d["macro_after"]) == pytest.approx((0.32, 0.68))


rows = st.lists(st.tuples(st.sampled_from("abc"), st.floats(0, 1), st.floats(0.01, 50)),
                min_size=1, max_size=25)


@settings(max_examples=100, deadline=None)
@given(rows, rows)
def test_kept_tables_decompose_as_the_raw_values_do(rows_b, rows_a):
    before, after = (pd.DataFrame(r, columns=["slice", "value", "weight"])
                     for r in (rows_b, rows_a))
    raw = decompose(before, after)
    tables = [from_rows(json.loads(json.dumps(slice_rows(slice_table(f)))))
              for f in (before, after)]

    kept_parts = compare_slices(*tables)
    for field in ("before", "after", "delta", "rate", "mix", "equal_slice_before",
                  "equal_slice_after"):
        assert getattr(kept_parts, field) == pytest.approx(getattr(raw, field), abs=1e-9)
    assert kept_parts.mix_shift == raw.mix_shift or abs(raw.delta) < 1e-9


def test_runs_that_cannot_be_set_side_by_side_say_why():
    after = kept(diff_rows(a=[1, 0]))
    assert compare_figures(None, after)["why"] == "the earlier run kept no per-slice figures"
    assert compare_figures(after, None)["why"] == "this run kept no per-slice figures"
    other = after | {"dimension": "tenant"}
    moved = compare_figures(other, after)
    assert moved["comparable"] is False and "compare.strata changed" in moved["why"]
    assert moved["controlled"] is False
