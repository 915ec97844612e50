"""The diagnostics: ESS and the weights by hand on a tiny log; a candidate that takes actions
the logger never took is flagged (mass off support, with its reason), one within the log's
support passes; a low ESS fails with its reason."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.offpolicy import evaluate, policy
from releval.offpolicy.diagnostics import ess
from tests.offpolicy.logs import generated, world


def tiny():
    """Three impressions at one position over actions a, b, c; the candidate takes a with
    0.5, b with 0.5, never c."""
    log = pd.DataFrame({S.CONTEXT_ID: ["1", "2", "3"], S.ITEM_ID: ["a", "b", "c"],
                        S.POSITION: [1, 1, 1], S.REWARD: [1.0, 0.0, 1.0],
                        S.PROPENSITY: [0.25, 0.5, 0.25]}, index=[1, 2, 3])
    action_dist = np.tile(np.array([0.5, 0.5, 0.0])[None, :, None], (3, 1, 1))
    return log, action_dist, np.array(["a", "b", "c"])


def test_ess_and_the_weights_by_hand():
    log, action_dist, actions = tiny()
    result = evaluate(log, action_dist, actions, n_positions=1, estimators=("ips",),
                      resamples=5, min_ess=1.5)
    np.testing.assert_allclose(result.weights, [2.0, 1.0, 0.0])  # 0.5/0.25, 0.5/0.5, 0/0.25
    d = result.diagnostics
    assert d["ess"] == pytest.approx((2 + 1 + 0) ** 2 / (4 + 1 + 0))  # 9/5
    assert d["ess_share"] == pytest.approx(1.8 / 3)
    assert (d["max_weight"], d["mean_weight"]) == (2.0, 1.0)
    assert d["unsupported_share"] == pytest.approx(1 / 3)  # row 3: the candidate never takes c
    assert d["mass_off_support"] == 0.0  # a, b and c are all shown at position 1
    assert d["passed"] and d["reasons"] == []
    assert ess(np.zeros(4)) == 0.0


def test_a_low_ess_fails_with_its_reason():
    log, action_dist, actions = tiny()
    d = evaluate(log, action_dist, actions, n_positions=1, estimators=("ips",), resamples=5,
                 min_ess=2.0).diagnostics
    assert d["checks"] == {"ess": False, "support": True} and not d["passed"]
    assert d["reasons"] == ["effective sample size 1.8 is below the minimum 2 (3 rows; max "
                            "importance weight 2)"]


def test_a_candidate_taking_actions_the_logger_never_took_is_flagged():
    w = world(segments=2, actions=5, positions=2, seed=3, never_logged=(4,))
    log = generated(2000, w)
    assert "item4" not in set(log[S.ITEM_ID])
    run = pd.DataFrame({S.CONTEXT_ID: np.repeat(log[S.CONTEXT_ID].to_numpy(), 2),
                        S.ITEM_ID: np.tile(["item4", "item0"], len(log)),
                        S.RANK: np.tile([1, 2], len(log))})
    action_dist = policy.from_ranking(run, log, w.actions, 2, epsilon=0.1)
    d = evaluate(log, action_dist, w.actions, n_positions=2, estimators=("ips",),
                 resamples=5, min_ess=10).diagnostics
    # position 1 puts 0.9 + 0.1/5 on item4, position 2 puts 0.1/5: (0.92 + 0.02) / 2
    assert d["mass_off_support"] == pytest.approx(0.47)
    assert d["checks"]["support"] is False and not d["passed"]
    assert len(d["reasons"]) == 1 and "47.00% of the candidate's probability mass" in \
        d["reasons"][0]
    loose = evaluate(log, action_dist, w.actions, n_positions=2, estimators=("ips",),
                     resamples=5, min_ess=10, support_tolerance=0.5).diagnostics
    assert loose["checks"]["support"] is True


def test_a_candidate_within_the_logs_support_passes():
    w = world(segments=2, actions=5, positions=2, seed=3, never_logged=(4,))
    log = generated(2000, w)
    within = np.zeros((len(log), 5, 2))
    within[:, :4, :] = 0.25  # uniform over the four logged items
    d = evaluate(log, within, w.actions, n_positions=2, estimators=("ips",), resamples=5,
                 min_ess=10).diagnostics
    assert d["mass_off_support"] == 0.0 and d["passed"] and d["reasons"] == []
    assert 10 <= d["ess"] <= 2000
