"""evaluate's result (its columns, positions, the clip recorded where it applies, the logged
policy's own value) and its refusals, each one line."""

import numpy as np
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.offpolicy import ESTIMATE_COLUMNS, evaluate
from tests.offpolicy.logs import generated, world

W = world(segments=2, actions=3, positions=2, seed=8)
LOG = generated(200, W)
DIST = W.candidate[LOG["segment"].str[1:].astype(int).to_numpy()]
Q_HAT = np.full(DIST.shape, 0.3)


def test_the_result_holds_every_estimator_per_position_and_the_logged_value():
    result = evaluate(LOG, DIST, W.actions, n_positions=2, q_hat=Q_HAT, clip=3.0, resamples=50)
    e = result.estimates
    assert tuple(e.columns) == ESTIMATE_COLUMNS
    assert e[["estimator", "position"]].values.tolist() == [
        [name, p] for name in ("ips", "snips", "dm", "dr") for p in ("all", "1", "2")]
    assert e.groupby("estimator")["clip"].first().to_dict() == pytest.approx(
        {"ips": 3.0, "dr": 3.0, "snips": np.nan, "dm": np.nan}, nan_ok=True)
    at = e.set_index(["estimator", "position"])["n"]
    assert at["ips", "all"] == 200 == at["ips", "1"] + at["ips", "2"]
    assert (e["ci_low"] <= e["value"] + 1e-12).all() and (e["value"] <= e["ci_high"] + 1e-12).all()
    assert e.loc[e["estimator"] == "dm", "value"].tolist() == pytest.approx([0.3] * 3)  # q̂ = 0.3
    assert result.on_policy["value"] == LOG[S.REWARD].mean() and result.on_policy["n"] == 200
    assert result.on_policy["ci_low"] < result.on_policy["value"] < result.on_policy["ci_high"]
    assert result.weights.shape == (200,)
    assert result.bootstrap["cluster"] == "row"


def test_a_position_without_rows_is_undefined_not_zero():
    result = evaluate(LOG, np.concatenate([DIST, np.full((200, 3, 1), 1 / 3)], axis=2),
                      W.actions, n_positions=3, estimators=("ips",), resamples=20)
    row = result.estimates.set_index("position").loc["3"]
    assert row["n"] == 0 and np.isnan(row["value"]) and np.isnan(row["ci_low"])


REFUSALS = [
    ({"estimators": ("ips", "dr")}, "params: dr need(s) the reward model's q_hat; none given"),
    ({"estimators": ("ips", "switch")}, "params: unknown estimator(s) switch; known: ips, "
                                         "snips, dm, dr"),
    ({"estimators": ("ips",), "clip": 0}, "params: clip must be > 0, got 0"),
    ({"estimators": ("ips",), "alpha": 1.5}, "params: alpha must be in (0, 1), got 1.5"),
    ({"q_hat": np.zeros((200, 3, 1))}, "offpolicy: q_hat has shape (200, 3, 1), expected "
                                        "(rows, actions, positions) = (200, 3, 2)"),
    ({"estimators": ("ips",), "cluster": np.zeros(3)},
     "offpolicy: cluster has 3 labels for 200 rows"),
]


@pytest.mark.parametrize("options, line", REFUSALS)
def test_each_refusal_is_one_line(options, line):
    with pytest.raises(InputError) as caught:
        evaluate(LOG, DIST, W.actions, n_positions=2, resamples=5, **options)
    assert str(caught.value) == line


def test_rows_the_candidate_or_the_actions_cannot_score_are_named():
    broken = DIST.copy()
    broken[4, :, 1] = 0.2  # sums to 0.6 at position 2
    with pytest.raises(InputError) as caught:
        evaluate(LOG, broken, W.actions, n_positions=2, estimators=("ips",), resamples=5)
    assert str(caught.value) == ("generated:row 5: the candidate's probabilities for this row "
                                 "are not a distribution over the actions at each position")
    first = int(np.argmax(LOG[S.ITEM_ID] == "item2")) + 1
    with pytest.raises(InputError, match=rf"^generated:row {first}: item_id 'item2' is not "
                                         r"among the actions$"):
        evaluate(LOG, DIST[:, :2], W.actions[:2], n_positions=2, estimators=("ips",),
                 resamples=5)
    with pytest.raises(InputError, match=r"position must be in 1\.\.1, got 2$"):
        evaluate(LOG, DIST[:, :, :1] * 0 + 1 / 3, W.actions, n_positions=1,
                 estimators=("ips",), resamples=5)
