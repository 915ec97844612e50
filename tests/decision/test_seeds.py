"""Training variation over seeds beside the paired bootstrap CI, and the gate's seeds rule."""

import math

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.decision.gate import decide
from releval.decision.seeds import training_variance
from releval.params.rules import SeedsRule
from tests import documents

BASE = [0.5, 0.4, 0.6, 0.3, np.nan]  # the last query is undefined: left out


def frames(offsets: dict[int, float], noise: float = 0.0):
    ids = [f"q{i}" for i in range(len(BASE))]
    baseline = pd.DataFrame({S.QUERY_ID: ids, S.MEASURE: "nDCG@10", S.VALUE: BASE})
    rng = np.random.default_rng(0)
    seeds = pd.concat([pd.DataFrame({
        S.SEED: k, S.QUERY_ID: ids, S.MEASURE: "nDCG@10",
        S.VALUE: np.asarray(BASE) + off + noise * rng.normal(size=len(BASE))})
        for k, off in offsets.items()], ignore_index=True)
    return baseline, seeds


def test_constant_shifts_give_exact_intervals_and_the_t_interval_over_seeds():
    baseline, seeds = frames({1: 0.1, 2: 0.2, 3: 0.0})
    [row] = training_variance(baseline, seeds, ["nDCG@10"], resamples=200, seed=1)
    assert row["n_seeds"] == 3 and row["n"] == 4  # the undefined query is left out
    assert [s["mean_diff"] for s in row["seeds"]] == pytest.approx([0.1, 0.2, 0.0])
    for s in row["seeds"]:  # every query moved alike: the bootstrap CI is the point
        assert s["ci_low"] == pytest.approx(s["mean_diff"])
        assert s["ci_high"] == pytest.approx(s["mean_diff"])
    assert row["mean_diff"] == pytest.approx(0.1)
    assert row["ci_low"] == pytest.approx(0.1) and row["ci_high"] == pytest.approx(0.1)
    assert row["training_sd"] == pytest.approx(0.1)
    half = 4.302652729911275 * 0.1 / math.sqrt(3)  # t(0.975, 2) · sd / √n
    assert row["training_low"] == pytest.approx(0.1 - half)
    assert row["training_high"] == pytest.approx(0.1 + half)
    assert (row["seed_min"], row["seed_max"]) == pytest.approx((0.0, 0.2))


def test_one_seed_has_no_training_interval():
    baseline, seeds = frames({1: 0.1})
    [row] = training_variance(baseline, seeds, ["nDCG@10"], resamples=200)
    assert math.isnan(row["training_sd"]) and math.isnan(row["training_low"])


def decision(offsets: dict[int, float], rule: SeedsRule, noise: float = 0.0) -> dict:
    baseline, seeds = frames(offsets, noise)
    training = training_variance(baseline, seeds, ["nDCG@10"], resamples=500, seed=3)
    comparison = documents.comparison(baseline="v2", candidate="hybrid", also=[
        documents.comparison(baseline="v2", candidate="v3", training=training)])
    ev = documents.evidence(baseline="v2", candidate="hybrid", comparison=comparison,
                            better={"nDCG@10": "higher"})
    return decide([rule], ev)["rules"][0]


def test_every_seed_must_improve():
    rule = SeedsRule(measure="nDCG@10", require="every", candidate="v3")
    assert decision({1: 0.1, 2: 0.15, 3: 0.12}, rule)["passed"]
    out = decision({1: 0.1, 2: 0.2, 3: 0.0}, rule)  # seed 3 changed nothing
    assert not out["passed"] and "weakest: seed 3" in out["reason"]
    assert "training interval" in out["reason"] and "bootstrap CI" in out["reason"]


def test_the_seeds_mean_needs_both_intervals_above_the_bound():
    rule = SeedsRule(measure="nDCG@10", require="mean", candidate="v3")
    ok = decision({1: 0.1, 2: 0.11, 3: 0.12}, rule)
    assert ok["passed"] and ok["value"] > 0
    spread = decision({1: 0.1, 2: 0.2, 3: 0.0}, rule)  # CI is [0.1, 0.1]; training is wide
    assert not spread["passed"] and spread["value"] < 0


def test_missing_evidence_fails_and_says_what_is_missing():
    no_seeds = decide([SeedsRule(measure="nDCG@10")], documents.evidence(
        baseline="v2", candidate="hybrid",
        comparison=documents.comparison(baseline="v2", candidate="hybrid")))
    assert not no_seeds["passed"]
    assert "not trained with several seeds" in no_seeds["rules"][0]["reason"]
    other = decision({1: 0.1, 2: 0.1}, SeedsRule(measure="nDCG@10", candidate="v9"))
    assert not other["passed"] and "no comparison has v9" in other["reason"]
    measure = decision({1: 0.1, 2: 0.1}, SeedsRule(measure="AP", candidate="v3"))
    assert not measure["passed"] and "AP is not among" in measure["reason"]
