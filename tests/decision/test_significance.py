"""The test family (``releval.decision.significance``) against scipy to 1e-9, the Monte
Carlo tests against plain loops with the same streams, and the named test in the paired
rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sp

from releval.decision import significance as sig
from releval.decision.stats import DRAW_BLOCK, paired
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
