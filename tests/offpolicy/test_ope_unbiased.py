"""IPS is unbiased: over 500 simulated logs of a known world, the mean IPS estimate of a
candidate's value lies within 2 standard errors of its true value; clipping the weights
(a biased estimator) moves the mean away from it."""

import numpy as np

from releval.offpolicy import evaluate, policy
from tests.offpolicy.logs import candidate_table, draw, frame, world

LOGS, ROWS = 500, 400


def ips_estimates(clip=None):
    w = world(segments=3, actions=4, positions=2, seed=11)
    drawn = draw(w, (LOGS, ROWS), np.random.default_rng(12))
    estimates = []
    for i in range(LOGS):
        log = frame(w, {key: value[i] for key, value in drawn.items()})
        table = log["segment"].str[1:].astype(int).to_numpy()
        action_dist = w.candidate[table]  # π_e of each row's segment
        result = evaluate(log, action_dist, w.actions, n_positions=2, estimators=("ips",),
                          clip=clip, resamples=1)
        estimates.append(result.estimates.set_index("position").loc["all", "value"])
    return np.array(estimates), w.value


def test_ips_is_unbiased_over_500_simulated_logs():
    estimates, truth = ips_estimates()
    standard_error = estimates.std(ddof=1) / np.sqrt(LOGS)
    assert abs(estimates.mean() - truth) <= 2 * standard_error


def test_clipped_ips_is_biased_on_the_same_logs():
    estimates, truth = ips_estimates(clip=1.0)
    assert abs(estimates.mean() - truth) > 4 * estimates.std(ddof=1) / np.sqrt(LOGS)


def test_the_candidate_table_gives_the_same_action_dist_as_the_world():
    w = world(segments=3, actions=4, positions=2, seed=11)
    log = frame(w, {k: v[0] for k, v in draw(w, (1, 50), np.random.default_rng(1)).items()})
    expected = w.candidate[log["segment"].str[1:].astype(int).to_numpy()]
    np.testing.assert_allclose(policy.from_table(candidate_table(w, log), log, w.actions, 2),
                               expected)
