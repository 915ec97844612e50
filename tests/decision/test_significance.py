"""The test family (``releval.decision.significance``) against scipy to 1e-9, the Monte
Carlo tests against plain loops with the same streams, and the named test in the paired
rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from releval.decision import significance as sig
from releval.decision.stats import DRAW_BLOCK, compare_table, paired
from releval.errors import InputError


def _pair(n: int, seed: int, shift: float = 0.03, rounding: int | None = None):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, n)
    cand = np.clip(base + rng.normal(shift, 0.2, n), 0, 1)
    if rounding is not None:
        base, cand = np.round(base, rounding), np.round(cand, rounding)
    return base, cand


def _p(test: str, base, cand, **options) -> float:
    return paired(base, cand, test=test, resamples=500, **options).p_value


@pytest.mark.parametrize("n,seed", [(8, 1), (30, 2), (200, 3), (2000, 4)])
def test_t_equals_scipys_paired_t(n, seed):
    base, cand = _pair(n, seed)
    assert _p("t", base, cand) == pytest.approx(sp.ttest_rel(cand, base).pvalue, abs=1e-9)


@pytest.mark.parametrize("n,seed", [(5, 1), (12, 2), (30, 3), (49, 4)])
def test_wilcoxon_below_50_without_ties_is_exact(n, seed):
    base, cand = _pair(n, seed)
    expected = sp.wilcoxon(cand - base, method="exact").pvalue
    assert _p("wilcoxon", base, cand) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("n,seed,rounding", [(50, 1, None), (300, 2, None), (40, 3, 1),
                                             (400, 4, 2)])
def test_wilcoxon_at_50_or_with_ties_is_the_corrected_normal_approximation(n, seed, rounding):
    base, cand = _pair(n, seed, rounding=rounding)
    d = cand - base
    expected = sp.wilcoxon(d, method="approx", correction=True, zero_method="wilcox").pvalue
    assert _p("wilcoxon", base, cand) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("n,seed,band", [(20, 1, 0.0), (101, 2, 0.0), (500, 3, 0.05),
                                         (40, 4, 0.1)])
def test_sign_is_the_binomial_test_with_its_tie_band(n, seed, band):
    base, cand = _pair(n, seed, rounding=2)
    d = cand - base
    kept = d[np.abs(d) > band]
    expected = sp.binomtest(int((kept > 0).sum()), kept.size, 0.5).pvalue
    assert _p("sign", base, cand, tie_band=band) == pytest.approx(expected, abs=1e-9)


def test_the_randomization_test_is_a_plain_loop_of_sign_flips():
    base, cand = _pair(37, 5)
    d = cand - base
    rng = np.random.default_rng(sig.streams(11)[1])
    packed = rng.integers(0, 256, size=(400, (d.size + 7) // 8), dtype=np.uint8)
    total, extreme = d.sum(), 0
    for row in packed:  # one resample at a time: its bits flip the signs
        flipped = d[np.unpackbits(row, count=d.size).astype(bool)].sum()
        extreme += abs(total - 2 * flipped) >= abs(total) - 1e-9 * np.abs(d).sum()
    got = paired(base, cand, test="randomization", resamples=400, seed=11).p_value
    assert got == pytest.approx((1 + extreme) / 401, abs=1e-12)


@pytest.mark.parametrize("clustered", [False, True])
def test_the_randomization_test_draws_its_documented_chunks(monkeypatch, clustered):
    """Chunks of ⌊CHUNK_BYTES / (10 G)⌋ resamples, each drawing its ⌈G/8⌉ bytes per resample
    in one call; with clusters the signs flip the cluster sums S_g."""
    base, cand = _pair(60, 8)
    labels = np.arange(60) % 21 if clustered else None  # G = 21 or 60: 3 or 8 bytes a row
    sums = np.bincount(labels, weights=cand - base) if clustered else cand - base
    g, rows = sums.size, 7
    monkeypatch.setattr(sig, "CHUNK_BYTES", 10 * g * rows)
    rng = np.random.default_rng(sig.streams(4)[1])
    total, extreme = sums.sum(), 0
    for start in range(0, 300, rows):
        packed = rng.integers(0, 256, size=(min(rows, 300 - start), (g + 7) // 8),
                              dtype=np.uint8)
        for row in packed:
            flipped = sums[np.unpackbits(row, count=g).astype(bool)].sum()
            extreme += abs(total - 2 * flipped) >= abs(total) - 1e-9 * np.abs(sums).sum()
    got = paired(base, cand, clusters=labels, resamples=300, seed=4)
    assert got.p_value == pytest.approx((1 + extreme) / 301, abs=1e-12)
    assert got.unit == ("cluster" if clustered else "query")


@pytest.mark.parametrize("case,expected", [
    ((7, 300, False, 2_000, 3), (0.5067466266866567, -0.02990419280250529,
                                 0.06235024959550196)),
    ((8, 1201, False, 10_000, 5), (0.0028997100289971, 0.012781793683983638,
                                   0.05693193085980416)),  # the sign flips in two chunks
    ((9, 500, True, 3_000, 1), (0.5924691769410196, -0.026635415035165238,
                                0.04885219855098886)),
])
def test_the_default_p_and_ci_are_those_before_the_test_family(case, expected):
    """Pinned from stats.paired as it was before ``test`` existed (its own sign-flip p)."""
    data_seed, n, clustered, resamples, seed = case
    rng = np.random.default_rng(data_seed)
    base, cand = rng.random(n), rng.random(n) + 0.01
    clusters = rng.integers(0, n // 3, n) if clustered else None
    row = paired(base, cand, clusters=clusters, resamples=resamples, seed=seed)
    assert (row.p_value, row.ci_low, row.ci_high) == expected


def test_the_shifted_bootstrap_test_is_a_plain_loop_over_the_cis_resamples():
    base, cand = _pair(40, 6, shift=0.05)
    d = cand - base
    means = []
    for k, stream in enumerate(sig.streams(3)[0].spawn(-(-2500 // DRAW_BLOCK))):
        rng = np.random.default_rng(stream)
        for _ in range(min(DRAW_BLOCK, 2500 - k * DRAW_BLOCK)):
            means.append(d[rng.integers(0, d.size, size=(1, d.size))[0]].mean())
    means = np.array(means)
    extreme = np.count_nonzero(np.abs(means - d.mean()) >= abs(d.mean()) - 1e-9 *
                               np.abs(d).sum())
    row = paired(base, cand, test="bootstrap", resamples=2500, seed=3)
    assert row.p_value == pytest.approx((1 + extreme) / 2501, abs=1e-12)
    assert row.test == "bootstrap"


def test_the_shifted_bootstrap_test_resamples_clusters_as_the_ci_does():
    base, cand = _pair(90, 9, shift=0.04)
    labels = np.arange(90) // 3  # 30 clusters of 3 queries
    sums, sizes = np.bincount(labels, weights=cand - base), np.bincount(labels).astype(float)
    rng = np.random.default_rng(sig.streams(2)[0].spawn(1)[0])
    means = []
    for _ in range(600):  # one block (600 < DRAW_BLOCK): its draws in order
        drawn = rng.integers(0, sums.size, size=(1, sums.size))[0]
        means.append(sums[drawn].sum() / sizes[drawn].sum())
    mean = sums.sum() / sizes.sum()
    extreme = np.count_nonzero(np.abs(np.array(means) - mean) >= abs(mean) - 1e-9 *
                               np.abs(sums).sum())
    row = paired(base, cand, clusters=labels, test="bootstrap", resamples=600, seed=2)
    assert row.p_value == pytest.approx((1 + extreme) / 601, abs=1e-12)
    assert (row.unit, row.units) == ("cluster", 30)


def test_t_without_variance_is_one_at_zero_and_zero_otherwise():
    assert _p("t", np.zeros(6), np.zeros(6)) == 1.0
    assert _p("t", np.zeros(6), np.full(6, 0.1)) == 0.0  # np.std leaves ~1e-17 here
    assert paired(np.zeros(6), np.full(6, 0.1), resamples=50).effect_size is None


def test_wilcoxon_below_50_with_a_zero_difference_is_the_approximation_without_it():
    base, cand = _pair(20, 10)
    cand[[3, 11]] = base[[3, 11]]  # two zero differences: dropped, and no longer exact
    d = cand - base
    expected = sp.wilcoxon(d, method="approx", correction=True, zero_method="wilcox").pvalue
    assert _p("wilcoxon", base, cand) == pytest.approx(expected, abs=1e-9)
    assert expected != pytest.approx(sp.wilcoxon(d[d != 0], method="exact").pvalue, abs=1e-6)


def test_compare_table_passes_the_test_and_its_tie_band():
    base, cand = _pair(80, 11, rounding=2)
    frame = pd.concat([pd.DataFrame({"system": s, "query_id": range(80), "measure": "m",
                                     "value": v}) for s, v in (("b", base), ("c", cand))])
    row = compare_table(frame, "b", "c", ["m"], test="sign", tie_band=0.05,
                        resamples=200).iloc[0]
    assert row["test"] == "sign"
    assert row["p_value"] == paired(base, cand, test="sign", tie_band=0.05,
                                    resamples=200).p_value
    assert row["p_value"] != paired(base, cand, test="sign", resamples=200).p_value
    with pytest.raises(InputError, match="unknown test 'anova'"):
        compare_table(frame, "b", "c", ["m"], test="anova")


def test_effect_sizes_and_the_default_are_stated():
    base, cand = _pair(60, 7)
    d = cand - base
    row = paired(base, cand, resamples=200)
    assert row.test == "randomization"
    assert row.effect_size == pytest.approx(d.mean() / d.std(ddof=1), abs=1e-12)
    assert row.share_improved == pytest.approx((d > 0).mean())
    flat = paired(np.zeros(5), np.zeros(5), resamples=100)
    assert flat.effect_size is None and flat.share_improved == 0.0


def test_an_unknown_test_is_refused_naming_the_known_ones():
    with pytest.raises(InputError, match="known: randomization, t, wilcoxon, sign, bootstrap"):
        paired(np.zeros(3), np.ones(3), test="anova")


def test_a_published_table_p_value_is_reproduced():
    """Student's sleep data (Cushny & Peebles, the paired t-test's first example; R's
    ``t.test(extra ~ group, paired = TRUE)`` prints t = -4.0621, df = 9, p-value = 0.002833)."""
    drug1 = np.array([0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0])
    drug2 = np.array([1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4])
    assert round(_p("t", drug2, drug1), 6) == 0.002833
