"""The Open Bandit check: from the bts (Thompson sampling) log, the uniform-random policy's
CTR by IPS, SNIPS and DR with 95% CIs and the diagnostics; the random log, where that policy
ran on the same traffic, gives its on-policy CTR (mean click) as ground truth.

IPS and SNIPS use the whole bts log; DM and DR need q̂, so they use the evaluation window
(the later half by time; the reward model is fitted on the earlier half), and so does the
random log's CTR they are held against. Coverage is asserted where it holds on this sample:
IPS and SNIPS over the whole log cover the random log's CTR. On the evaluation window
neither IPS nor DR does (the bts log's later half has fewer clicks: 17 of its 42); the
test prints those figures (``-s``) and asserts only that the estimates are defined. The
diagnostics: ESS passes, and the support check fails, because the uniform policy puts mass
on an (item, position) pair the bts log never shows."""

import numpy as np
import pytest

from releval.data import contracts as S
from releval.offpolicy import evaluate, policy, reward_model
from releval.offpolicy.log import read_log
from tests.offpolicy.logs import BTS, RANDOM


@pytest.fixture(scope="module")
def logs():
    return read_log(BTS), read_log(RANDOM)


def figures(name, result, truth):
    table = result.estimates[result.estimates["position"] == "all"].set_index("estimator")
    for estimator, row in table.iterrows():
        inside = row["ci_low"] <= truth <= row["ci_high"]
        print(f"{name} {estimator}: {row['value']:.5f} [{row['ci_low']:.5f}, "
              f"{row['ci_high']:.5f}] n={row['n']}; random CTR {truth:.5f} inside: {inside}")
    return table


def test_the_uniform_policy_from_the_bts_log_against_the_random_logs_ctr(logs):
    bts, random = logs
    actions = policy.actions_of(bts, random)
    assert len(actions) == 80
    uniform = policy.uniform(bts, actions, 3)
    assert uniform[0, 0, 0] == 1 / 80  # the random log's propensity per item and position
    assert (random[S.PROPENSITY] == 1 / 80).all()
    truth = random[S.REWARD].mean()

    whole = evaluate(bts, uniform, actions, n_positions=3, estimators=("ips", "snips"),
                     resamples=1000, alpha=0.05, seed=0, min_ess=100)
    table = figures("whole log", whole, truth)
    for estimator in ("ips", "snips"):
        assert table.loc[estimator, "ci_low"] <= truth <= table.loc[estimator, "ci_high"]
    assert whole.on_policy["value"] == bts[S.REWARD].mean()  # the bts policy's own CTR

    d = whole.diagnostics
    print({k: d[k] for k in ("ess", "ess_share", "max_weight", "mean_weight",
                             "unsupported_share", "mass_off_support", "passed")})
    assert d["checks"]["ess"] and d["ess"] >= 100
    shown = bts.groupby([S.ITEM_ID, S.POSITION]).size()
    never = 80 * 3 - len(shown)
    assert never >= 1 and d["mass_off_support"] == pytest.approx(never / 240)
    assert not d["passed"] and d["reasons"][0].startswith(f"{never / 240:.2%} of the candidate")
    np.testing.assert_allclose(d["max_weight"], (1 / 80) / bts[S.PROPENSITY].min())

    model = reward_model.fit(bts, actions, 3)
    window = bts[model.evaluation]
    late = random[random[S.TIMESTAMP] >= model.cut][S.REWARD].mean()
    windowed = evaluate(window, uniform[model.evaluation], actions, n_positions=3,
                        q_hat=model.q_hat, resamples=1000, alpha=0.05, seed=0, min_ess=100)
    table = figures("evaluation window", windowed, late)
    assert table[["value", "ci_low", "ci_high"]].notna().all().all()
    assert (table["ci_low"] <= table["value"]).all() and (table["value"] <= table["ci_high"]).all()
