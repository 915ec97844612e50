"""The plot registry: every entry draws from the sample, returns None without its data, and
renders to one SVG whose ids are scoped."""

import re

import pandas as pd
import pytest

from releval.decision import power
from releval.report.plots import PLOTS, Plot, plot, rank_bands, svg
from tests.report.sample import CAND, COMPARISON, RELIABILITY, inputs, rec_inputs

NO_MDE = {**COMPARISON, "paired": [{k: v for k, v in COMPARISON["paired"][0].items()
                                     if k not in ("sd", "mde")}]}
NEEDS = {"power": {"comparison": NO_MDE}, "per_query_diff": {"per_query_diff": None},
         "curves": {"curves": None},
         "judged": {"curves": None}, "safety": {"violations": None},
         "automatic": {"automatic": {"configured": False}},
         "slices": {"slices": pd.DataFrame()},
         "failures": {"failures": {"baseline": "a", "candidate": "b", "by_layer": []}},
         "latency": {"stats": {}}, "no_answer": {"safety": {"top_k": 10, "no_answer": {}}},
         "reliability": {"reliability": RELIABILITY.iloc[:0]},
         "horizons": {"comparison": COMPARISON},
         "family": {"comparison": {**COMPARISON, "family": None}},
         "offpolicy_estimates": {"offpolicy_estimates": None},
         "offpolicy_weights": {"offpolicy_weights": None}}


def test_the_registry_lists_every_plot_in_page_order():
    assert list(PLOTS) == ["power", "per_query_diff", "slices", "family", "curves", "judged",
                           "automatic", "failures", "safety", "latency", "no_answer",
                           "reliability", "horizons",
                           "offpolicy_estimates", "offpolicy_weights"]
    assert all(p.title and p.caption and p.absent for p in PLOTS.values())
    assert {name for name, p in PLOTS.items() if p.modes == ("retrieval",)} == {
        "judged", "automatic", "no_answer"}
    assert {name for name, p in PLOTS.items() if p.modes == ("recommendation",)} == {
        "reliability", "horizons"}
    assert {name for name, p in PLOTS.items() if p.section != "plots"} == {
        "offpolicy_estimates", "offpolicy_weights",  # drawn by the off-policy section
        "family"}  # drawn by the comparison's many-systems part


def test_the_horizon_plot_draws_each_horizon_and_names_the_novelty_effect():
    spec = PLOTS["horizons"].build(rec_inputs()).to_dict()
    assert spec["title"]["subtitle"] == "novelty effect: " + COMPARISON["measures"][0]
    rows = next(iter(spec["datasets"].values()))
    assert [r["days"] for r in rows] == ["7 days", "28 days"]


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_each_plot_draws_from_the_sample_and_is_none_without_its_data(name):
    sample = inputs if "retrieval" in PLOTS[name].modes else rec_inputs
    chart = PLOTS[name].build(sample())
    assert chart is not None
    chart.to_dict()  # validated against Vega-Lite's schema (svg draws without validating)
    out = svg(chart, f"plot-{name}")
    assert out.startswith("<svg") and out.rstrip().endswith("</svg>")
    assert PLOTS[name].build(sample(**NEEDS[name])) is None


def test_the_reliability_diagram_has_both_binnings_the_diagonal_and_drawn_bins_only():
    spec = PLOTS["reliability"].build(rec_inputs()).to_dict()
    assert [c["title"] for c in spec["hconcat"]] == ["equal-width bins", "equal-mass bins"]
    assert spec["title"]["subtitle"] == "1 system(s) with probabilities; none: bm25"
    datasets = list(spec["datasets"].values())
    assert [{"mean_predicted": 0.0, "observed": 0.0},
            {"mean_predicted": 1.0, "observed": 1.0}] in datasets  # the diagonal
    width = next(d for d in datasets if d and d[0].get("binning") == "width")
    assert [r["bin"] for r in width] == [0, 1, 3]  # the empty bin is not drawn
    assert {r["system"] for r in width} == {CAND}
    only_mass = RELIABILITY[RELIABILITY["binning"] == "mass"]
    one = PLOTS["reliability"].build(rec_inputs(reliability=only_mass)).to_dict()
    assert [c["title"] for c in one["hconcat"]] == ["equal-mass bins"]
    empty = RELIABILITY.assign(n=0)
    assert PLOTS["reliability"].build(rec_inputs(reliability=empty)) is None


def test_an_svg_is_the_same_every_time_and_its_ids_are_scoped():
    chart = PLOTS["curves"].build(inputs())
    first = svg(chart, "one")
    assert svg(PLOTS["curves"].build(inputs()), "one") == first
    ids = re.findall(r'\bid="([^"]+)"', first)
    assert all(i.startswith("one-") for i in ids)


def test_the_difference_plot_titles_its_mean_and_interval():
    spec = PLOTS["per_query_diff"].build(inputs()).to_dict()
    assert spec["title"]["subtitle"] == ("mean +0.1123, 95% CI [+0.0100, +0.2000]; "
                                         "3 queries with a defined difference")


def test_rank_bands_start_with_what_users_see():
    names, band = rank_bands(pd.Series([1, 10, 11, 20, 21, 100, 101]), 10)
    assert names == ["1–10", "11–20", "21–50", "51–100", ">100"]
    assert band.tolist() == [0, 0, 1, 1, 2, 3, 4]
    assert rank_bands(pd.Series([5]), 50)[0] == ["1–50", "51–100", ">100"]


def test_a_new_plot_is_one_registered_function():
    @plot("extra_test_plot", "Extra", "A test entry.", "Nothing.")
    def extra(inputs):
        return None

    try:
        assert PLOTS["extra_test_plot"] == Plot("Extra", "A test entry.", "Nothing.", extra)
        assert list(PLOTS)[-1] == "extra_test_plot"
    finally:
        del PLOTS["extra_test_plot"]


def test_the_power_curve_is_the_plans_mde_over_queries_with_this_set_marked():
    spec = PLOTS["power"].build(inputs()).to_dict()
    tables = [pd.DataFrame(v) for v in spec["datasets"].values()]
    curve = next(t for t in tables if len(t) > 5)
    here = next(t for t in tables if "queries" in t and len(t) == 1)
    row = COMPARISON["paired"][0]
    expected = power.mde(row["sd"], curve["queries"].to_numpy(), 0.05, 0.8)
    assert curve["MDE"].to_numpy() == pytest.approx(expected)
    assert here.iloc[0]["queries"] == row["n"] and here.iloc[0]["MDE"] == row["mde"]
    assert len(spec["layer"]) == 3  # the curve, this set, min_effect


def test_a_spec_drawn_before_is_read_from_the_machine_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RELEVAL_CACHE_DIR", str(tmp_path))
    chart = PLOTS["power"].build(inputs())
    first = svg(chart, "a")
    (kept,) = (tmp_path / "files" / "svg").iterdir()
    kept.write_text(kept.read_text().replace("<svg", '<svg data-kept="1"', 1))
    assert svg(chart, "a") == first.replace("<svg", '<svg data-kept="1"', 1)  # read, not drawn
    svg(chart.properties(width=123), "a")  # another spec: drawn and kept beside it
    assert len(list((tmp_path / "files" / "svg").iterdir())) == 2
