"""The bootstrap: seeded (the same seed, the same CIs; another seed, others); each resample
recomputes whole estimates (SNIPS's ratio, DR, per position) exactly as a plain loop over the
resampled rows does; clustering by user gives a wider CI than by row when rewards are
correlated within users, and about the same when they are not."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.offpolicy import bootstrap, evaluate
from tests.offpolicy.logs import frame, generated, world

W = world(segments=3, actions=4, positions=2, seed=5)


def candidate(log):
    return W.candidate[log["segment"].str[1:].astype(int).to_numpy()]


def test_the_same_seed_gives_the_same_cis_and_another_seed_others():
    log = generated(600, W)
    q_hat = np.random.default_rng(0).uniform(size=(600, 4, 2))
    runs = [evaluate(log, candidate(log), W.actions, n_positions=2, q_hat=q_hat, resamples=200,
                     seed=seed).estimates for seed in (7, 7, 8)]
    pd.testing.assert_frame_equal(runs[0], runs[1])
    assert not np.allclose(runs[0]["ci_low"], runs[2]["ci_low"])
    pd.testing.assert_series_equal(runs[0]["value"], runs[2]["value"])


def test_each_resample_recomputes_the_whole_estimate():
    log = generated(300, W)
    users = np.random.default_rng(3).integers(0, 40, size=300)
    q_hat = np.random.default_rng(0).uniform(size=(300, 4, 2))
    action_dist = candidate(log)
    result = evaluate(log, action_dist, W.actions, n_positions=2, q_hat=q_hat, cluster=users,
                      resamples=60, seed=4, alpha=0.1)
    # a plain loop: each resample's rows are its drawn users' rows, every estimate recomputed
    rows_of = pd.Series(np.arange(300)).groupby(pd.factorize(users)[0]).apply(np.array)
    action = log[S.ITEM_ID].str[4:].astype(int).to_numpy()
    position = log[S.POSITION].to_numpy() - 1
    i = np.arange(300)
    w = action_dist[i, action, position] / log[S.PROPENSITY].to_numpy()
    r = log[S.REWARD].to_numpy()
    direct = (action_dist[i, :, position] * q_hat[i, :, position]).sum(axis=1)
    dr = direct + w * (r - q_hat[i, action, position])
    snips, dr_at_2 = [], []
    for drawn in np.vstack(list(bootstrap.draws(len(rows_of), 60, 4))):
        rows = np.concatenate(rows_of.to_numpy()[drawn])
        snips.append((w[rows] * r[rows]).sum() / w[rows].sum())
        at_2 = rows[position[rows] == 1]
        dr_at_2.append(dr[at_2].mean())
    table = result.estimates.set_index(["estimator", "position"])
    expected = {("snips", "all"): snips, ("dr", "2"): dr_at_2}
    for key, values in expected.items():
        low, high = np.quantile(values, [0.05, 0.95])
        assert table.loc[key, ["ci_low", "ci_high"]].tolist() == pytest.approx([low, high],
                                                                                abs=1e-12)
    assert result.bootstrap == {"resamples": 60, "alpha": 0.1, "seed": 4, "cluster": "given",
                                "n_clusters": 40}


def users_log(correlated: bool, n_users: int = 150, per_user: int = 20):
    """Impressions of n_users users; each user's rewards share the user's own mean when
    ``correlated``, else every reward has the same mean."""
    rng = np.random.default_rng(9)
    shape = (n_users, per_user)
    user = np.repeat(np.arange(n_users), per_user)
    drawn = {"segment": rng.integers(0, 3, size=shape).ravel(),
             "position": rng.integers(0, 2, size=shape).ravel(),
             "action": rng.integers(0, 4, size=shape).ravel()}
    drawn["propensity"] = np.full(user.size, 0.25)
    p = rng.beta(0.3, 0.9, size=n_users)[user] if correlated else np.full(user.size, 0.25)
    drawn["reward"] = (rng.random(user.size) < p).astype(float)
    return frame(W, drawn, users=user)


def widths(log, cluster):
    result = evaluate(log, candidate(log), W.actions, n_positions=2, estimators=("ips",),
                      cluster=cluster, resamples=400, seed=1)
    ips = result.estimates.set_index("position").loc["all"]
    return (ips["ci_high"] - ips["ci_low"],
            result.on_policy["ci_high"] - result.on_policy["ci_low"], result.bootstrap)


def test_clustering_by_user_widens_the_ci_when_rewards_are_correlated_within_users():
    log = users_log(correlated=True)
    by_user = widths(log, None)  # the log's user_id: the default clusters
    by_row = widths(log, np.arange(len(log)))
    assert by_user[2]["cluster"] == "user_id" and by_user[2]["n_clusters"] == 150
    assert by_row[2]["cluster"] == "given" and by_row[2]["n_clusters"] == len(log)
    assert by_user[0] > 1.5 * by_row[0] and by_user[1] > 1.5 * by_row[1]


def test_clustering_by_user_changes_little_when_rewards_are_independent():
    log = users_log(correlated=False)
    by_user, by_row = widths(log, None), widths(log, np.arange(len(log)))
    assert 0.8 < by_user[0] / by_row[0] < 1.25 and 0.8 < by_user[1] / by_row[1] < 1.25
