"""Systems ranked under human and automatic labels: τ-b against scipy, τ_AP on worked
examples, bootstrap CIs, and the paired comparisons that flip."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from releval.decision.ranking_agreement import kendall_tau_b, ranking_agreement, tau_ap
from releval.errors import InputError


def per_query(means: dict[str, float], queries: int = 30, seed: int = 0) -> pd.DataFrame:
    """A (query × system) frame whose columns average exactly to ``means``."""
    noise = np.random.default_rng(seed).normal(0, 0.05, size=(queries, len(means)))
    noise -= noise.mean(axis=0)
    return pd.DataFrame(np.array(list(means.values())) + noise,
                        index=[f"q{i}" for i in range(queries)], columns=list(means))


@pytest.mark.parametrize("seed", range(4))
def test_tau_b_equals_scipy_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    h = rng.integers(0, 4 if seed % 2 else 100, size=9).astype(float)  # odd seeds: ties
    a = rng.integers(0, 4 if seed % 2 else 100, size=9).astype(float)
    assert kendall_tau_b(h, a) == pytest.approx(kendalltau(h, a).statistic)


def test_tau_ap_worked_examples_weigh_the_top():
    """Human (reference) ranking A > B > C > D. Automatic ranking B, A, C, D: at i = 2 (A) the
    one system above it, B, is not above it for people, C(2) = 0; C(3)/2 = C(4)/3 = 1, so
    τ_AP = 2/3 · (0 + 1 + 1) − 1 = 1/3. Automatic A, B, D, C: C(2)/1 = C(3)/2 = 1 and
    C(4)/3 = 2/3, so τ_AP = 2/3 · 8/3 − 1 = 7/9. Both swaps cost τ the same: 2/3."""
    human = np.array([4.0, 3.0, 2.0, 1.0])  # A, B, C, D
    top_swapped = np.array([3.0, 4.0, 2.0, 1.0])
    bottom_swapped = np.array([4.0, 3.0, 1.0, 2.0])
    assert tau_ap(human, top_swapped) == pytest.approx(1 / 3)
    assert tau_ap(human, bottom_swapped) == pytest.approx(7 / 9)
    assert kendall_tau_b(human, top_swapped) == kendall_tau_b(human, bottom_swapped) == \
        pytest.approx(2 / 3)
    assert tau_ap(human, human[::-1].copy()) == pytest.approx(-1)
    assert tau_ap(top_swapped, human) == pytest.approx(1 / 3)  # one swap: symmetric here
    # ties: a pair tied in both rankings counts 1, tied in one only ½ (C(2) = ½ here)
    assert tau_ap(np.array([2.0, 2.0, 1.0]), np.array([2.0, 2.0, 1.0])) == pytest.approx(1)
    assert tau_ap(np.array([2.0, 3.0, 1.0]), np.array([2.0, 2.0, 1.0])) == pytest.approx(0.5)


def test_a_judge_that_copies_people_ranks_the_same_with_no_flip():
    human = per_query({"bm25": 0.40, "dense": 0.45, "hybrid": 0.50, "bm25-k1": 0.30})
    out = ranking_agreement(human, human.copy(), resamples=300, seed=1)
    assert out["tau"] == {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0, "undefined_resamples": 0}
    assert out["tau_ap"]["value"] == out["tau_ap"]["ci_low"] == 1.0
    assert out["flips"] == []
    ranks = out["rankings"].set_index("system")
    assert ranks["rank_human"].tolist() == [1, 2, 3, 4]
    assert ranks.index.tolist() == ["hybrid", "dense", "bm25", "bm25-k1"]
    assert (ranks["rank_human"] == ranks["rank_automatic"]).all()


def test_a_judge_that_reverses_two_systems_is_measured_with_a_bootstrap_ci():
    human = per_query({"a": 0.6, "b": 0.5, "c": 0.4, "d": 0.3}, queries=60)
    auto = human[["b", "a", "c", "d"]].set_axis(["a", "b", "c", "d"], axis=1)  # a, b swapped
    out = ranking_agreement(human, auto, resamples=400, seed=3)
    assert out["tau"]["value"] == pytest.approx(2 / 3)
    assert out["tau_ap"]["value"] == pytest.approx(1 / 3)
    assert out["tau"]["ci_low"] <= 2 / 3 <= out["tau"]["ci_high"]
    again = ranking_agreement(human, auto, resamples=400, seed=3)
    assert again["tau_ap"] == out["tau_ap"]  # seeded


def test_flips_are_found_on_a_constructed_case():
    """Per query: people see b 0.2 and c 0.1 above a, both clearly; the judge sees b level
    with a (±0.6 per query) and c 0.1 below a."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0.3, 0.6, size=40)
    small = rng.normal(0, 0.01, size=(3, 40))
    swing = np.where(np.arange(40) % 2, 0.6, -0.6)
    human = pd.DataFrame({"a": x, "b": x + 0.2 + small[0], "c": x + 0.1 + small[1]})
    auto = pd.DataFrame({"a": x, "b": x + swing, "c": x - 0.1 + small[2]})
    out = ranking_agreement(human, auto, resamples=1000, seed=0)
    flips = {(f["system_a"], f["system_b"]): f["flip"] for f in out["flips"]}
    assert flips == {("a", "b"): "human only", ("a", "c"): "reversed",
                     ("b", "c"): "human only"}
    row = out["pairs"].set_index(["system_a", "system_b"]).loc[("a", "c")]
    assert row["diff_human"] == pytest.approx(0.1, abs=0.01) and row["ci_low_human"] > 0
    assert row["diff_automatic"] == pytest.approx(-0.1, abs=0.01) and row["ci_high_automatic"] < 0


def test_lower_is_better_and_bad_frames():
    human = per_query({"a": 1.0, "b": 2.0, "c": 3.0})
    out = ranking_agreement(human, human[["a", "c", "b"]].set_axis(["a", "b", "c"], axis=1),
                            resamples=50, higher_is_better=False)
    assert out["rankings"]["system"].tolist() == ["a", "b", "c"]  # lowest first
    assert out["tau_ap"]["value"] == pytest.approx(0.5)  # a, c, b against a, b, c: C(3) = 1
    with pytest.raises(InputError, match="the same systems"):
        ranking_agreement(human, human.rename(columns={"c": "z"}))
    with pytest.raises(InputError, match="query 'q0' appears twice in the automatic values"):
        ranking_agreement(human, pd.concat([human, human.iloc[:1]]))
    with pytest.raises(InputError, match="system 'b' has no defined value under automatic"):
        ranking_agreement(human, human.assign(b=np.nan))
