"""Paired statistics: a hand-checked example, the exact sign-flip p-value, determinism,
clusters, Holm, verdict rules, the comparison table, and calibration (A/A rejection rate and
bootstrap coverage over 1,000 seeded simulations each)."""

import itertools
import json
import re

import numpy as np
import pandas as pd
import pytest

from releval.decision import stats
from releval.decision.stats import (
    Comparison,
    bootstrap_ci,
    clusters_of,
    compare_table,
    holm,
    holm_verdicts,
    paired,
    verdict,
)
from releval.errors import InputError

# d = candidate − baseline = [0.3, −0.1, 0.2, (excluded), 0.0]
BASE = np.array([0.5, 0.4, 0.2, np.nan, 0.7])
CAND = np.array([0.8, 0.3, 0.4, 0.9, 0.7])


def exact_sign_flip_p(d: np.ndarray) -> float:
    """Two-sided p over all 2^n sign vectors: #{s : |Σ s_j d_j| ≥ |Σ d_j|} / 2^n."""
    observed = abs(d.sum())
    flips = [abs(np.dot(signs, d)) >= observed - 1e-12
             for signs in itertools.product((-1.0, 1.0), repeat=d.size)]
    return sum(flips) / len(flips)


def test_hand_checked_example():
    c = paired(BASE, CAND, resamples=2_000)
    assert (c.n, c.excluded, c.units, c.unit) == (4, 1, 4, "query")
    assert c.mean_baseline == pytest.approx((0.5 + 0.4 + 0.2 + 0.7) / 4)
    assert c.mean_candidate == pytest.approx((0.8 + 0.3 + 0.4 + 0.7) / 4)
    assert c.mean_diff == pytest.approx(0.1)
    assert c.median_diff == pytest.approx(0.1)  # median of [−0.1, 0, 0.2, 0.3]
    assert (c.wins, c.ties, c.losses) == (2, 1, 1)
    assert -0.1 <= c.ci_low < c.mean_diff < c.ci_high <= 0.3
    assert c.verdict == "inconclusive"


def test_p_value_matches_enumeration_of_all_sign_vectors():
    d = (CAND - BASE)[~np.isnan(BASE)]
    # |Σ s d| over s ∈ {±1}^3 (the tie flips to itself): 0.4 (obs), 0.6, 0.2, 0.0, each twice
    assert exact_sign_flip_p(d) == pytest.approx(0.5)
    assert paired(BASE, CAND, resamples=200_000).p_value == pytest.approx(0.5, abs=0.005)
    extreme = np.array([0.3, 0.2, 0.1])  # observed is the most extreme: exact p = 2/8
    assert exact_sign_flip_p(extreme) == 0.25
    p = paired(np.zeros(3), extreme, resamples=200_000).p_value
    assert p == pytest.approx(0.25, abs=0.005)


def test_p_value_formula_counts_the_observed_sign_vector():
    # every sign vector of a zero difference ties with the observed one: p = (1 + B) / (1 + B)
    assert paired(np.ones(5), np.ones(5), resamples=99).p_value == 1.0
    # n = 12 identical wins: only 2 of 4096 sign vectors are as extreme, so of B = 999 random
    # ones about 0.5 are: p = (1 + k) / 1000 with k small
    p = paired(np.zeros(12), np.full(12, 0.1), resamples=999).p_value
    assert p * 1000 == pytest.approx(round(p * 1000)) and round(p * 1000) in (1, 2, 3)


def test_same_seed_is_bit_identical_and_other_seeds_differ():
    rng = np.random.default_rng(7)
    base, cand = rng.random(300), rng.random(300)
    first = paired(base, cand, resamples=2_000, seed=3)
    assert paired(base, cand, resamples=2_000, seed=3) == first
    other = paired(base, cand, resamples=2_000, seed=4)
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)
    assert bootstrap_ci(cand - base, resamples=2_000, seed=3) == (first.ci_low, first.ci_high)
    assert json.loads(json.dumps(first.to_dict()))["verdict"] == first.verdict


def test_chunking_does_not_change_the_bootstrap(monkeypatch):
    d = np.random.default_rng(1).normal(size=500)
    whole = bootstrap_ci(d, resamples=3_000)
    monkeypatch.setattr(stats, "CHUNK_BYTES", 500 * 16 * 7)  # 7 resamples per chunk
    assert bootstrap_ci(d, resamples=3_000) == whole
    assert paired(BASE, CAND, resamples=50_000).p_value == pytest.approx(0.5, abs=0.01)


def test_bootstrap_agrees_with_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    d = np.random.default_rng(2).normal(0.02, 0.3, 500)
    ours = np.array(bootstrap_ci(d, resamples=20_000))
    theirs = scipy_stats.bootstrap((d,), np.mean, n_resamples=20_000, method="percentile",
                                   vectorized=True, random_state=0).confidence_interval
    assert ours == pytest.approx([theirs.low, theirs.high], abs=0.03 * (ours[1] - ours[0]))


def test_clusters_change_the_unit_and_widen_the_ci_for_correlated_queries():
    rng = np.random.default_rng(5)
    users = np.repeat(np.arange(40), 10)
    d = rng.normal(0, 0.2, 40)[users] + rng.normal(0, 0.05, users.size)  # shared user effect
    per_query = paired(np.zeros(users.size), d, resamples=2_000)
    per_user = paired(np.zeros(users.size), d, clusters=users, resamples=2_000)
    assert (per_user.unit, per_user.units, per_user.n) == ("cluster", 40, 400)
    assert per_user.mean_diff == per_query.mean_diff
    assert (per_user.ci_high - per_user.ci_low) > 2 * (per_query.ci_high - per_query.ci_low)
    assert per_user.p_value > per_query.p_value


def test_singleton_clusters_reproduce_the_query_unit_exactly():
    rng = np.random.default_rng(6)
    base, cand = rng.random(50), rng.random(50)
    by_query = paired(base, cand, resamples=1_000)
    by_cluster = paired(base, cand, clusters=np.array([f"u{i}" for i in range(50)]),
                        resamples=1_000)
    assert by_cluster.unit == "cluster"
    assert by_cluster == Comparison(**{**by_query.to_dict(), "unit": "cluster"})


def test_cluster_bootstrap_is_the_query_weighted_mean_of_drawn_clusters():
    # clusters of sizes 1 and 3 with d sums 1 and 0; a draw of two clusters has mean 1 (a, a:
    # p = 1/4), 0 (b, b: 1/4) or (1 + 0) / (1 + 3) = 1/4 (one each: 1/2) — not the 1/2 that
    # averaging cluster means would give
    d, users = np.array([1.0, 0.0, 0.0, 0.0]), np.array(["a", "b", "b", "b"])
    assert bootstrap_ci(d, clusters=users, resamples=4_000, alpha=0.1) == (0.0, 1.0)
    assert bootstrap_ci(d, clusters=users, resamples=4_000, alpha=0.6) == (0.25, 0.25)


def test_holm_against_hand_computed_example():
    # sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → running max
    adjusted = holm([0.01, np.nan, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjusted, [0.03, np.nan, 0.06, 0.06, 0.02])
    assert holm([0.4, 0.5]).tolist() == [0.8, 0.8]
    assert holm([0.6, 0.9]).tolist() == [1.0, 1.0]  # capped at 1
    assert holm([]).size == 0
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        holm([0.2, 1.5])


@pytest.mark.parametrize(("low", "high", "effect", "expected"), [
    (0.02, 0.05, 0.01, "improved"),
    (0.001, 0.05, 0.0, "improved"),
    (-0.05, -0.02, 0.01, "regressed"),
    (-0.005, 0.008, 0.01, "no consequential change"),
    (-0.01, 0.01, 0.01, "no consequential change"),  # the thresholds themselves are inside
    (0.0, 0.0, 0.0, "no consequential change"),
    (-0.001, 0.001, 0.0, "inconclusive"),  # min_effect 0: only [0, 0] is "no change"
    (0.005, 0.03, 0.01, "inconclusive"),  # straddles +min_effect
    (-0.03, -0.005, 0.01, "inconclusive"),  # straddles −min_effect
    (0.01, 0.03, 0.01, "inconclusive"),  # ci_low must exceed +min_effect
])
def test_verdict_rules(low, high, effect, expected):
    assert verdict(low, high, effect) == expected


def test_paired_verdict_uses_min_effect():
    d = np.random.default_rng(8).normal(0.05, 0.01, 200)
    assert paired(np.zeros(200), d, resamples=500).verdict == "improved"
    assert paired(np.zeros(200), d, min_effect=0.1, resamples=500).verdict == (
        "no consequential change")
    assert paired(d, np.zeros(200), resamples=500).verdict == "regressed"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"baseline": np.ones(3), "candidate": np.ones(4)}, "3 values"),
    ({"baseline": np.array([1.0, np.nan]), "candidate": np.ones(2)}, "at least 2"),
    ({"baseline": np.ones(3), "candidate": np.array([1, np.inf, 0])}, "infinite"),
    ({"baseline": np.ones(3), "candidate": np.ones(3), "alpha": 1.0}, "alpha"),
    ({"baseline": np.ones(3), "candidate": np.ones(3), "resamples": 0}, "resamples"),
    ({"baseline": np.ones(3), "candidate": np.ones(3), "min_effect": -0.1}, "min_effect"),
    ({"baseline": np.ones(3), "candidate": np.ones(3), "clusters": np.array([1, 1, 1])},
     "1 cluster"),
    ({"baseline": np.ones(3), "candidate": np.ones(3), "clusters": np.array([1, None, 2])},
     "no cluster label"),
])
def test_paired_rejects_bad_input(kwargs, message):
    with pytest.raises(InputError, match=message):
        paired(**kwargs)


def metrics_table(values: dict[tuple[str, str], list[float]], ids: list[str]) -> pd.DataFrame:
    """Per-query metrics from ``{(system, measure): values aligned with ids}``."""
    return pd.DataFrame([
        {"system": system, "query_id": q, "measure": measure, "value": v}
        for (system, measure), column in values.items() for q, v in zip(ids, column, strict=True)
    ])


def test_compare_table_pairs_by_query_and_adds_holm():
    rng = np.random.default_rng(9)
    ids = [f"q{i}" for i in range(60)]
    b_ndcg, c_ndcg = rng.random(60), rng.random(60) + 0.2
    b_rr, c_rr = rng.random(60), rng.random(60)
    b_rr[3] = np.nan
    table = metrics_table({("bm25", "nDCG@10"): b_ndcg, ("hybrid", "nDCG@10"): c_ndcg,
                           ("bm25", "RR"): b_rr, ("hybrid", "RR"): c_rr}, ids)
    shuffled = table.sample(frac=1.0, random_state=0)  # pairing is by query_id, not row order
    result = compare_table(shuffled, "bm25", "hybrid", ["nDCG@10", "RR"],
                           min_effect={"nDCG@10": 0.05, "RR": 0.0}, resamples=1_000, seed=2)
    assert result["measure"].tolist() == ["nDCG@10", "RR"]
    order = np.argsort(ids)  # the table pairs queries in query_id order
    expected = paired(b_ndcg[order], c_ndcg[order], min_effect=0.05, resamples=1_000, seed=2)
    assert result.iloc[0].drop(["measure", "p_holm"]).to_dict() == expected.to_dict()
    assert result.loc[1, "excluded"] == 1
    np.testing.assert_array_equal(result["p_holm"], holm(result["p_value"]))


def test_compare_table_with_clusters():
    ids = [f"q{i}" for i in range(8)]
    table = metrics_table({("a", "AP"): [0.1] * 8, ("b", "AP"): [0.2, 0.3] * 4}, ids)
    users = pd.Series([f"u{i // 2}" for i in range(8)], index=ids[::-1])  # any order
    result = compare_table(table, "a", "b", ["AP"], clusters=users, resamples=200)
    assert (result.loc[0, "unit"], result.loc[0, "units"]) == ("cluster", 4)
    with pytest.raises(InputError, match="2 queries have no cluster label, e.g. q0, q1"):
        compare_table(table, "a", "b", ["AP"], clusters=users.iloc[:-2], resamples=200)


def test_compare_table_rejects_queries_of_one_system():
    ids = [f"q{i}" for i in range(10)]
    table = metrics_table({("a", "AP"): [0.1] * 10, ("b", "AP"): [0.2] * 10}, ids)
    table = table.drop(table.index[(table["system"] == "b")
                                   & table["query_id"].isin(["q2", "q7"])])
    extra = pd.DataFrame([{"system": "b", "query_id": "q99", "measure": "AP", "value": 0.5}])
    with pytest.raises(InputError, match=r"3 queries .*only in 'a': q2, q7; only in 'b': q99"):
        compare_table(pd.concat([table, extra]), "a", "b", ["AP"], resamples=100)


@pytest.mark.parametrize(("mutate", "kwargs", "message"), [
    (lambda t: t.drop(columns="value"), {}, "missing columns"),
    (lambda t: pd.concat([t, t.iloc[:1]]), {}, "1 duplicate"),
    (lambda t: t.assign(value="x"), {}, "non-numeric"),
    (lambda t: t, {"measures": ["AP", "RR"]}, r"measures \['RR'\] have no rows"),
    (lambda t: t, {"candidate": "c"}, "system 'c' has no rows"),
    (lambda t: t, {"min_effect": {"RR": 0.1}}, r"no min_effect declared for measures \['AP'\]"),
])
def test_compare_table_rejects_bad_tables(mutate, kwargs, message):
    ids = [f"q{i}" for i in range(5)]
    table = metrics_table({("a", "AP"): [0.1] * 5, ("b", "AP"): [0.2] * 5}, ids)
    args = {"baseline": "a", "candidate": "b", "measures": ["AP"], "resamples": 100} | kwargs
    with pytest.raises(InputError, match=message):
        compare_table(mutate(table), **args)


def test_aa_rejection_rate_is_calibrated():
    """A/A: both systems draw per-query values from the same distribution (shared query
    difficulty, independent noise, values rounded to 0.1 so ties occur)."""
    rng = np.random.default_rng(0)
    rejected = 0
    for sim in range(1_000):
        difficulty = rng.beta(2, 2, 200)
        base, cand = (np.clip(difficulty + rng.normal(0, 0.15, (2, 200)), 0, 1).round(1))
        rejected += paired(base, cand, resamples=500, seed=sim).p_value <= 0.05
    assert 0.03 <= rejected / 1_000 <= 0.07


def test_bootstrap_ci_covers_the_true_difference():
    """Coverage: skewed per-query noise with a known mean difference of 0.03."""
    rng = np.random.default_rng(2025)
    covered = 0
    for sim in range(1_000):
        difficulty = rng.beta(2, 5, 250)
        base = difficulty + rng.exponential(0.1, 250)
        cand = difficulty + 0.03 + rng.exponential(0.1, 250)
        low, high = bootstrap_ci(cand - base, resamples=1_000, seed=sim)
        covered += low <= 0.03 <= high
    assert 0.93 <= covered / 1_000 <= 0.97


def test_holm_verdicts_keep_a_change_only_when_it_survives_the_correction():
    verdicts = ["improved", "regressed", "improved", "inconclusive", "no consequential change"]
    p_holm = [0.01, 0.2, 0.05, 0.001, np.nan]
    assert list(holm_verdicts(verdicts, p_holm, 0.05)) == [
        "improved", "inconclusive", "improved", "inconclusive", "no consequential change"]


def test_clusters_of_is_the_query_column_or_none():
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "user_id": ["u1", "u1"]})
    assert clusters_of(queries, None) is None
    assert clusters_of(queries, "user_id").to_dict() == {"q1": "u1", "q2": "u1"}
    for bad in (None, queries[["query_id"]]):
        with pytest.raises(InputError, match="compare.cluster 'user_id' needs queries with "
                                             "query_id and user_id"):
            clusters_of(bad, "user_id")


@pytest.mark.parametrize(("base", "clusters", "says"), [
    ([np.nan, np.nan, 0.5], None, "1 query with values in both systems"),
    ([np.nan, np.nan, np.nan], ["a", "b", "c"], "0 clusters (holding 0 queries) with values"),
    ([0.1, 0.2, np.nan], ["a", "a", "b"], "1 cluster (holding 2 queries) with values"),
])
def test_too_few_units_say_how_many_queries_were_left(base, clusters, says):
    with pytest.raises(InputError, match=r"^<input>: " + re.escape(says)) as refused:
        stats.paired(np.array(base), np.array([0.3, 0.4, 0.6]), clusters=clusters,
                     resamples=10)
    assert str(refused.value).endswith("the evaluated set is (nearly) empty where both "
                                       "systems are defined")
