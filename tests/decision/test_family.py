"""Many systems in one decision (``releval.decision.family``): Holm and BH against
statsmodels, Tukey's HSD by randomization against a plain loop, and the letter groups on a
constructed case whose groups are known."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from releval.decision.family import (
    FamilyResult,
    bh,
    compare_family,
    groups_text,
    letters,
    tukey_hsd,
)
from releval.decision.stats import holm
from releval.errors import InputError


def _per_query(means: dict[str, float], n: int = 60, seed: int = 0,
               noise: float = 0.05) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    topic = rng.uniform(0.2, 0.6, n)  # a query's difficulty, shared by every system
    rows = [pd.DataFrame({"system": s, "query_id": [f"q{i}" for i in range(n)],
                          "measure": "nDCG@10",
                          "value": np.clip(topic + m + rng.normal(0, noise, n), 0, 1)})
            for s, m in means.items()]
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("seed", range(4))
def test_holm_and_bh_equal_statsmodels(seed):
    p = np.random.default_rng(seed).uniform(0, 0.2, 9)
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-12)
    assert bh(p) == pytest.approx(multipletests(p, method="fdr_bh")[1], abs=1e-12)


def test_tukey_hsd_is_a_plain_loop_of_permuted_queries():
    matrix = np.random.default_rng(3).uniform(0, 1, (25, 4))
    diffs = np.array([0.01, 0.05, 0.2])
    rng = np.random.default_rng(9)
    ranges = []
    for _ in range(300):
        keys = rng.random(matrix.shape)
        means = np.take_along_axis(matrix, np.argsort(keys, axis=1), axis=1).mean(axis=0)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    expected = [(1 + np.sum(ranges >= d - 1e-9)) / 301 for d in diffs]
    assert tukey_hsd(matrix, diffs, resamples=300, seed=9) == pytest.approx(expected)


def test_the_letters_of_a_known_structure():
    # a > b, a > c; b, c alike: a holds "a", b and c share "b"
    assert letters(["x", "y", "z"], {frozenset("xy"), frozenset("xz")}) == \
        {"x": "a", "y": "b", "z": "b"}
    # a chain: x ~ y ~ z but x > z: x "a", y "ab", z "b"
    assert letters(["x", "y", "z"], {frozenset("xz")}) == {"x": "a", "y": "ab", "z": "b"}
    assert letters(["x", "y"], set()) == {"x": "a", "y": "a"}


@pytest.mark.parametrize("correction", ["holm", "bh", "tukey"])
def test_two_clearly_better_systems_form_their_own_group(correction):
    table = _per_query({"s1": 0.0, "s2": 0.0, "s3": 0.0, "good1": 0.2, "good2": 0.2})
    result = compare_family(table, ["s1", "s2", "s3", "good1", "good2"], "nDCG@10",
                            family="all_pairs", correction=correction, resamples=400)
    groups = {r["system"]: r["group"] for r in result.leaderboard}
    assert groups["good1"] == groups["good2"] == "a"
    assert groups["s1"] == groups["s2"] == groups["s3"] == "b"
    assert [r["system"] for r in result.leaderboard][:2] in (["good1", "good2"],
                                                            ["good2", "good1"])
    assert len(result.pairs) == 10 and result.n == 60
    assert groups_text(result).startswith("a: good")


def test_the_baseline_family_and_its_left_out_queries():
    table = _per_query({"base": 0.0, "better": 0.15, "same": 0.0}, seed=2)
    table.loc[(table.system == "same") & (table.query_id == "q0"), "value"] = np.nan
    result = compare_family(table, ["base", "better", "same"], "nDCG@10", family="baseline",
                            baseline="base", resamples=400, test="t")
    assert [(r["baseline"], r["candidate"]) for r in result.pairs] == \
        [("base", "better"), ("base", "same")]
    assert result.n == 59 and result.left_out == 1
    better = result.pairs[0]
    assert better["verdict"] == "improved" and better["differ"]
    assert better["p_adjusted"] == pytest.approx(min(1, 2 * better["p_value"]))
    with pytest.raises(InputError, match="for the family all_pairs"):
        compare_family(table, ["base", "better"], "nDCG@10", baseline="base",
                       correction="tukey")


@pytest.mark.parametrize("seed", range(30))
def test_the_letters_share_a_letter_exactly_when_a_pair_does_not_differ(seed):
    rng = np.random.default_rng(seed)
    systems = [f"s{i}" for i in range(rng.integers(2, 8))]
    differ = {frozenset(p) for p in combinations(systems, 2) if rng.random() < 0.4}
    groups = letters(systems, differ)
    for a, b in combinations(systems, 2):
        assert bool(set(groups[a]) & set(groups[b])) == (frozenset((a, b)) not in differ)
    assert groups[systems[0]].startswith("a")


def test_a_lower_is_better_measure_ranks_and_judges_in_its_direction():
    table = _per_query({"base": 0.2, "lower": 0.0}, seed=4)
    result = compare_family(table, ["base", "lower"], "nDCG@10", family="baseline",
                            baseline="base", higher_is_better=False, resamples=300)
    assert [r["system"] for r in result.leaderboard] == ["lower", "base"]
    pair = result.pairs[0]
    assert pair["mean_diff"] < 0 and pair["ci_high"] < 0
    assert pair["verdict"] == "improved" and pair["share_improved"] > 0.9


def test_the_result_is_plain_json_and_reads_back():
    table = _per_query({"a": 0.0, "b": 0.01, "c": 0.0}, seed=5, n=30)
    table.loc[table.system == "c", "value"] = table.loc[table.system == "a", "value"].to_numpy()
    result = compare_family(table, ["a", "b", "c"], "nDCG@10", family="all_pairs",
                            correction="bh", resamples=200)
    doc = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert FamilyResult(**doc) == result
    same = next(r for r in doc["pairs"] if {r["baseline"], r["candidate"]} == {"a", "c"})
    assert same["effect_size"] is None and same["p_value"] == 1.0  # d = 0 on every query


def test_duplicate_and_non_numeric_rows_are_refused():
    table = _per_query({"a": 0.0, "b": 0.1}, n=10)
    with pytest.raises(InputError, match=r"1 duplicate \(system, query_id\) rows of nDCG@10"):
        compare_family(pd.concat([table, table.iloc[[3]]]), ["a", "b"], "nDCG@10",
                       baseline="a", resamples=50)
    bad = table.astype({"value": object})
    bad.loc[0, "value"] = "n/a"
    with pytest.raises(InputError, match="non-numeric value"):
        compare_family(bad, ["a", "b"], "nDCG@10", baseline="a", resamples=50)


def test_bh_keeps_nan_and_refuses_what_is_not_a_p_value():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    assert np.isnan(bh(p)[1])
    assert bh(p)[[0, 2, 3]] == pytest.approx(multipletests(p[[0, 2, 3]], method="fdr_bh")[1])
    with pytest.raises(InputError, match=r"must lie in \[0, 1\]"):
        bh([0.2, 1.5])
