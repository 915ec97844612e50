"""The direct method's reward model: its training window (the rows before the cut, by default
the first half by time), its broadcast q̂ equal to scikit-learn's own prediction on the
explicit (rows × actions × positions) design, logistic for 0/1 rewards and ridge otherwise,
deterministic, and a training window with a single reward class refused."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

from releval.data import contracts as S
from releval.errors import InputError
from releval.offpolicy import policy, reward_model
from releval.offpolicy.log import read_log
from tests.offpolicy.logs import BTS, generated, world


def explicit(model: reward_model.RewardModel, log, actions, n_positions, rows):
    """sklearn's prediction for every (row, action, position) of ``rows``, design built
    row by row."""
    context = model.features.matrix(log.iloc[rows])
    n_actions = len(actions)
    a, k = np.meshgrid(np.arange(n_actions), np.arange(n_positions), indexing="ij")
    out = []
    for x in context:
        design = reward_model.design(np.repeat(x[None, :], a.size, axis=0), a.ravel(),
                                     k.ravel(), n_actions, n_positions)
        if isinstance(model.model, LogisticRegression):
            predicted = model.model.predict_proba(design)[:, 1]
        else:
            predicted = model.model.predict(design)
        out.append(predicted.reshape(n_actions, n_positions))
    return np.array(out)


def test_the_open_bandit_model_matches_sklearn_on_the_explicit_design():
    log = read_log(BTS)
    actions = policy.actions_of(log)
    model = reward_model.fit(log, actions, 3)
    assert model.kind == "logistic" and isinstance(model.model, LogisticRegression)
    time = log[S.TIMESTAMP].sort_values(kind="stable")
    assert model.cut == time.iloc[5000]
    assert (~model.evaluation).sum() == 5000 and model.q_hat.shape == (5000, 80, 3)
    assert (log[S.TIMESTAMP][~model.evaluation] < model.cut).all()
    evaluated = np.flatnonzero(model.evaluation)
    picked = [0, 17, 4999]
    np.testing.assert_allclose(model.q_hat[picked],
                               explicit(model, log, actions, 3, evaluated[picked]),
                               rtol=1e-12, atol=1e-15)
    # 84 context features: 80 affinities + the one-hot of 4 hashed user features
    assert len(model.features.numeric) == 80 and len(model.features.categories) == 4
    again = reward_model.fit(log, actions, 3)
    np.testing.assert_array_equal(again.q_hat, model.q_hat)


def test_non_binary_rewards_take_ridge_and_a_given_cut():
    w = world(segments=3, actions=4, positions=2, seed=6)
    log = generated(400, w)
    log[S.REWARD] = log[S.REWARD] * 0.5 + log["noise"]
    cut = log[S.TIMESTAMP].iloc[100]
    model = reward_model.fit(log, w.actions, 2, cut=cut)
    assert model.kind == "ridge" and isinstance(model.model, Ridge)
    assert model.evaluation.sum() == 300 and model.q_hat.shape == (300, 4, 2)
    rows = np.flatnonzero(model.evaluation)[[0, 150, 299]]
    np.testing.assert_allclose(model.q_hat[[0, 150, 299]],
                               explicit(model, log, w.actions, 2, rows), rtol=1e-10)


def test_a_text_value_unseen_in_training_is_all_zeros():
    train = pd.DataFrame({S.REWARD: [0.0], "device": ["ios"], "age": [30.0]})
    features = reward_model.Features.fit(train)
    matrix = features.matrix(pd.DataFrame({"device": ["ios", "tv"], "age": [20.0, np.nan]}))
    np.testing.assert_array_equal(matrix, [[20.0, 1.0], [0.0, 0.0]])


def test_a_training_window_with_one_reward_class_is_refused():
    w = world(segments=2, actions=3, positions=1, seed=1)
    log = generated(50, w)
    log[S.REWARD] = (np.arange(50) >= 30).astype(float)  # every click after the cut
    with pytest.raises(InputError, match=r"^generated: every reward of the training window "
                                         r"\(before .*\) is 0: no reward model can be fitted$"):
        reward_model.fit(log, w.actions, 1)
    with pytest.raises(InputError, match=r"train_share must be in \(0, 1\), got 1"):
        reward_model.fit(log, w.actions, 1, train_share=1)
