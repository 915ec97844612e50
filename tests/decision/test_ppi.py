"""Prediction-powered means against ppi-python, and their coverage with a biased judge."""

import numpy as np
import pandas as pd
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from releval.decision.ppi import classical_mean, difference, intervals, ppi_mean, tuned_lambda
from releval.errors import InputError


def biased(rng, shape, bias=0.1):
    """Y ~ Beta(2, 5) per query (mean 2/7) and a judge's Ŷ = Y/2 + 1/7 + bias + noise: shrunk
    towards the mean, noisy, E[Ŷ − Y] = bias."""
    y = rng.beta(2, 5, size=shape)
    return y, 0.5 * y + 1 / 7 + bias + rng.normal(0, 0.15, size=shape)


@pytest.mark.parametrize("lam", [1.0, None, 0.3])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_estimate_and_interval_equal_ppi_python(lam, alpha):
    rng = np.random.default_rng(7)
    y, yhat = biased(rng, 60)
    _, yhat_u = biased(rng, 500)
    estimate, low, high = ppi_mean(y, yhat, yhat_u, alpha=alpha, lam=lam)
    expected_low, expected_high = ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
    assert estimate == pytest.approx(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)[0],
                                     abs=1e-12)
    assert (low, high) == pytest.approx((expected_low[0], expected_high[0]), abs=1e-12)


def test_tuned_lambda_is_clipped_and_rows_are_independent_problems():
    rng = np.random.default_rng(3)
    y, yhat = biased(rng, (4, 50))
    _, yhat_u = biased(rng, (4, 300))
    yhat[0] = -yhat[0]  # anti-correlated: λ̂ clipped to 0, the human-only mean
    lam = tuned_lambda(y, yhat, yhat_u)
    assert lam[0] == 0 and np.all((lam[1:] > 0) & (lam[1:] <= 1))
    rows = np.array([ppi_mean(y[i], yhat[i], yhat_u[i], lam=None) for i in range(4)])
    assert np.allclose(np.stack(ppi_mean(y, yhat, yhat_u, lam=None), axis=1), rows)
    assert rows[0][0] == pytest.approx(y[0].mean())


def test_a_biased_judge_ppi_covers_the_true_mean_and_the_naive_interval_does_not():
    """1,000 simulated evaluations at once: Y ~ Beta(2, 5) (true mean 2/7) on 1,000 queries,
    100 of them judged by people; the judge's labels are biased by +0.1 on average."""
    rng = np.random.default_rng(2023)
    draws, n, total = 1000, 100, 1000
    y, yhat = biased(rng, (draws, total))
    truth = 2 / 7
    assert (yhat - y).mean() == pytest.approx(0.1, abs=0.005)
    _, low, high = ppi_mean(y[:, :n], yhat[:, :n], yhat[:, n:], alpha=0.05, lam=1.0)
    covered = ((low <= truth) & (truth <= high)).mean()
    _, low_t, high_t = ppi_mean(y[:, :n], yhat[:, :n], yhat[:, n:], alpha=0.05, lam=None)
    covered_tuned = ((low_t <= truth) & (truth <= high_t)).mean()
    _, naive_low, naive_high = classical_mean(yhat, alpha=0.05)
    naive = ((naive_low <= truth) & (truth <= naive_high)).mean()
    assert 0.93 <= covered <= 0.97
    assert 0.93 <= covered_tuned <= 0.97
    assert naive < 0.05
    _, human_low, human_high = classical_mean(y[:, :n], alpha=0.05)
    width = np.median(high_t - low_t)  # tuning pays: narrower than λ = 1 and than people alone
    assert width < np.median(high - low) and width < np.median(human_high - human_low)


def test_intervals_from_per_query_values_leave_undefined_queries_out():
    rng = np.random.default_rng(5)
    ids = [f"q{i}" for i in range(40)]
    y, yhat = biased(rng, 40)
    human = pd.Series(y, index=ids)
    auto = pd.Series(yhat, index=ids)
    labelled = ids[:15]
    human.iloc[0] = np.nan  # undefined under human labels: out of the labelled set
    auto.iloc[30] = np.nan  # undefined under automatic labels: out of the unlabelled set
    out = intervals(human, auto, labelled, alpha=0.1)
    assert (out["n_labelled"], out["excluded_labelled"]) == (14, 1)
    assert (out["n_unlabelled"], out["excluded_unlabelled"]) == (24, 1)
    kept_u = np.delete(yhat[15:], 15)
    assert (out["ppi"]["estimate"], out["ppi"]["ci_low"], out["ppi"]["ci_high"]) == \
        pytest.approx(ppi_mean(y[1:15], yhat[1:15], kept_u, alpha=0.1))
    assert out["human_only"]["estimate"] == pytest.approx(y[1:15].mean())
    assert out["automatic_only"]["estimate"] == pytest.approx(
        np.concatenate([yhat[1:15], kept_u]).mean())
    assert out["ppi_tuned"]["lambda"] == pytest.approx(tuned_lambda(y[1:15], yhat[1:15], kept_u))
    pair = difference(human, human + 0.1, auto, auto + 0.02, labelled, alpha=0.1)
    assert pair["ppi"]["estimate"] == pytest.approx(0.1)  # the judge's 0.02 is corrected
    assert pair["automatic_only"]["estimate"] == pytest.approx(0.02)
    with pytest.raises(InputError, match="labelled queries have no automatic value"):
        intervals(human, auto.iloc[5:], labelled)
    with pytest.raises(InputError, match="NaN"):
        ppi_mean([1.0, np.nan], [1.0, 2.0], [1.0, 2.0, 3.0])
