"""Each estimator equals Open Bandit Pipeline's (obp 0.4.1) on the same inputs to 1e-9, over
all rows and per position, with and without clipping: on the real Open Bandit log (bts) with
the uniform candidate and q̂ from the library's reward model, and on a generated log with a
non-uniform candidate given as a table.

obp 0.4.1 predates the ``lambda_`` clip of later versions (w = min(π_e/π_b, λ)); the clipped
weight is handed to obp through the propensity, pscore' = max(π_b, π_e/λ), so that obp's own
π_e/pscore' is the clipped weight and obp computes everything else."""

import numpy as np
import pytest
from obp.ope import (
    DirectMethod,
    DoublyRobust,
    InverseProbabilityWeighting,
    SelfNormalizedInverseProbabilityWeighting,
)

from releval.data import contracts as S
from releval.offpolicy import evaluate, policy, reward_model
from releval.offpolicy.log import read_log, slate_size
from tests.offpolicy.logs import BTS, candidate_table, generated, world

OBP = {"ips": InverseProbabilityWeighting(), "snips": SelfNormalizedInverseProbabilityWeighting(),
       "dm": DirectMethod(), "dr": DoublyRobust()}
CLIPS = {"ips": True, "snips": False, "dm": False, "dr": True}


def obp_value(name, log, action_dist, actions, q_hat, clip, rows):
    action = policy.action_index(log, actions)[rows]
    position = log[S.POSITION].to_numpy()[rows] - 1
    pscore = log[S.PROPENSITY].to_numpy()[rows]
    dist = action_dist[rows]
    if clip is not None and CLIPS[name]:
        pscore = np.maximum(pscore, dist[np.arange(len(action)), action, position] / clip)
    args = {"reward": log[S.REWARD].to_numpy()[rows], "action": action, "position": position,
            "pscore": pscore, "action_dist": dist, "estimated_rewards_by_reg_model": q_hat[rows]}
    if name == "dm":
        args = {k: args[k] for k in ("action_dist", "estimated_rewards_by_reg_model", "position")}
    elif name != "dr":
        args.pop("estimated_rewards_by_reg_model")
    return OBP[name].estimate_policy_value(**args)


def assert_equals_obp(log, action_dist, actions, q_hat, clip):
    k = slate_size(log)
    result = evaluate(log, action_dist, actions, n_positions=k, q_hat=q_hat, clip=clip,
                      resamples=10)
    table = result.estimates.set_index(["estimator", "position"])
    position = log[S.POSITION].to_numpy()
    compared = 0
    for name in OBP:
        for label in ["all", *map(str, range(1, k + 1))]:
            rows = np.flatnonzero(np.ones(len(log), bool) if label == "all"
                                  else position == int(label))
            expected = obp_value(name, log, action_dist, actions, q_hat, clip, rows)
            assert table.loc[(name, label), "value"] == pytest.approx(expected, abs=1e-9,
                                                                      rel=1e-9)
            assert table.loc[(name, label), "n"] == len(rows)
            compared += 1
    assert compared == 4 * (k + 1)
    assert (table["clip"].notna() == [bool(clip) and CLIPS[e] for e, _ in table.index]).all()


@pytest.fixture(scope="module")
def bts():
    log = read_log(BTS)
    actions = policy.actions_of(log)
    model = reward_model.fit(log, actions, slate_size(log))
    window = log[model.evaluation]
    return window, policy.uniform(window, actions, slate_size(log)), actions, model.q_hat


@pytest.mark.parametrize("clip", [None, 20.0])
def test_the_estimators_equal_obp_on_the_open_bandit_log(bts, clip):
    log, action_dist, actions, q_hat = bts
    if clip is not None:  # the clip binds on some rows, so clipping is exercised
        assert (action_dist[0, 0, 0] / log[S.PROPENSITY] > clip).any()
    assert_equals_obp(log, action_dist, actions, q_hat, clip)


@pytest.mark.parametrize("clip", [None, 2.0])
def test_the_estimators_equal_obp_on_a_generated_log_with_a_non_uniform_candidate(clip):
    w = world(segments=3, actions=5, positions=3, seed=4)
    log = generated(900, w)
    actions = w.actions
    action_dist = policy.from_table(candidate_table(w, log), log, actions, 3)
    assert not np.allclose(action_dist, 1 / len(actions))
    q_hat = np.random.default_rng(2).uniform(0, 1, size=action_dist.shape)
    weight = action_dist[np.arange(len(log)), policy.action_index(log, actions),
                         log[S.POSITION] - 1] / log[S.PROPENSITY]
    if clip is not None:
        assert (weight > clip).any() and (weight < clip).any()
    assert_equals_obp(log, action_dist, actions, q_hat, clip)
