"""Stage offpolicy: the library's estimates on a small generated log, pinned like every input,
with the reference's coverage; the document that says so without a log."""

import numpy as np
import pandas as pd
import pytest

from flows.validation import validate
from releval.documents.offpolicy import OffPolicyDoc
from releval.errors import InputError
from releval.offpolicy import evaluate
from releval.offpolicy.log import read_log
from releval.offpolicy.policy import actions_of, from_ranking, uniform
from releval.params import Params
from releval.project.inputs import in_users_words, pin
from stages.offpolicy import Inputs, run, summary


def logged(path, n=600, seed=1, items=6, positions=2):
    """A log of a logger that favours low item ids, its propensities exact, rewards Bernoulli
    with a per-item rate; users repeat."""
    rng = np.random.default_rng(seed)
    p = np.linspace(2, 1, items) / np.linspace(2, 1, items).sum()
    item = rng.choice(items, size=n, p=p)
    rate = np.linspace(0.1, 0.4, items)
    frame = pd.DataFrame({
        "context_id": [f"c{i}" for i in range(n)], "item_id": item.astype(str),
        "position": rng.integers(1, positions + 1, n), "reward": rng.random(n) < rate[item],
        "propensity": p[item], "user_id": [f"u{k}" for k in rng.integers(0, 40, n)],
        "timestamp": pd.date_range("2025-01-01", periods=n, freq="min", tz="UTC"),
        "segment": rng.choice(["a", "b"], n)})
    frame["reward"] = frame["reward"].astype(int)
    frame.to_csv(path, index=False)
    return path


def params(tmp_path, **offpolicy):
    return Params.model_validate({"base": {"seed": 3}, "offpolicy": {
        "log": "log.csv", "resamples": 200, "min_ess": 50, **offpolicy}})


def test_estimates_equal_the_librarys_and_the_reference_is_ground_truth(tmp_path):
    logged(tmp_path / "log.csv")
    logged(tmp_path / "ref.csv", seed=2)
    p = params(tmp_path, estimators=["ips", "snips"], reference="ref.csv", cluster="user_id")
    pin(p, tmp_path / "input", base=tmp_path)
    out = run(p, Inputs(tmp_path / "input"))
    log = read_log(tmp_path / "log.csv")
    actions = actions_of(log)
    expected = evaluate(log, uniform(log, actions, 2), actions, n_positions=2,
                        estimators=("ips", "snips"), cluster=log["user_id"].to_numpy(),
                        resamples=200, seed=3, min_ess=50)
    got = out.estimates[out.estimates["kind"] == "estimate"].reset_index(drop=True)
    pd.testing.assert_frame_equal(got[list(expected.estimates.columns)],
                                  expected.estimates, check_dtype=False)
    doc = OffPolicyDoc.model_validate(out.report)
    assert doc.on_policy.value == expected.on_policy["value"]
    assert doc.diagnostics.ess == pytest.approx(expected.diagnostics["ess"])
    assert doc.cluster == "user_id" and doc.log.rows == 600 and doc.reward_model is None
    reference = read_log(tmp_path / "ref.csv")["reward"].mean()
    assert doc.reference.value == pytest.approx(reference)
    assert [e.covers for e in doc.estimates] == [
        bool(lo <= reference <= hi) for lo, hi in zip(got["ci_low"], got["ci_high"], strict=True)]
    assert out.weights["rows"].sum() == 600
    assert validate("offpolicy_estimates", out.estimates).success
    assert summary(out.report).startswith("offpolicy: ips ")


def test_dm_and_dr_are_made_after_the_reward_models_window(tmp_path):
    logged(tmp_path / "log.csv")
    p = params(tmp_path, estimators=["ips", "dr"], reward_model={"train_share": 0.5})
    pin(p, tmp_path / "input", base=tmp_path)
    out = run(p, Inputs(tmp_path / "input"))
    rows = out.estimates.set_index(["estimator", "position"])["n"]
    assert rows[("ips", "all")] == 600 and rows[("dr", "all")] == 300
    assert out.report["reward_model"]["train_rows"] == 300
    assert list(out.estimates["estimator"].unique()) == ["ips", "dr", "on_policy"]


def test_without_a_log_the_document_says_so_and_the_tables_are_empty(tmp_path):
    out = run(Params(), Inputs(tmp_path / "input"))
    assert out.report == {"applicable": False,
                          "reason": "offpolicy.log is not set: no off-policy evaluation"}
    assert out.estimates.empty and out.weights.empty
    assert summary(out.report) == "offpolicy: offpolicy.log is not set: no off-policy evaluation"
    assert validate("offpolicy_estimates", out.estimates).success


def test_a_cluster_column_the_log_lacks_is_refused(tmp_path):
    logged(tmp_path / "log.csv")
    p = params(tmp_path, estimators=["ips"], cluster="shopper")
    pin(p, tmp_path / "input", base=tmp_path)
    with pytest.raises(InputError, match="offpolicy.cluster 'shopper' is not a column"):
        run(p, Inputs(tmp_path / "input"))


def test_the_log_and_the_policy_table_are_pinned_and_errors_name_the_users_path(tmp_path):
    logged(tmp_path / "log.csv")
    log = pd.read_csv(tmp_path / "log.csv")
    table = pd.DataFrame([(c, str(i), k, 1 / 6) for c in log["context_id"] for i in range(6)
                          for k in (1, 2)],
                         columns=["context_id", "item_id", "position", "probability"])
    table.to_csv(tmp_path / "policy.csv", index=False)
    p = params(tmp_path, estimators=["ips"], policy="policy.csv")
    pinned = pin(p, tmp_path / "input", base=tmp_path)
    assert [(r["key"], r["slot"]) for r in pinned] == [("offpolicy.log", "logged"),
                                                       ("offpolicy.policy", "policy")]
    out = run(p, Inputs(tmp_path / "input"))
    assert out.report["policy"] == {"kind": "table", "description": "the table policy.csv",
                                    "path": "policy.csv"}
    same = run(params(tmp_path, estimators=["ips"]), Inputs(tmp_path / "input")).estimates
    pd.testing.assert_frame_equal(out.estimates, same)  # 1/6 everywhere is the uniform policy
    log.loc[3, "propensity"] = 1.5
    log.to_csv(tmp_path / "log.csv", index=False)
    pin(p, tmp_path / "input", base=tmp_path)
    with pytest.raises(InputError) as caught:
        run(p, Inputs(tmp_path / "input"))
    said = in_users_words(caught.value, p, tmp_path / "input")
    assert str(said) == ("log.csv:line 5: propensity must be in (0, 1], got '1.5' "
                         "(params offpolicy.log)")



def test_a_systems_ranking_is_the_policy_by_its_rule(tmp_path):
    logged(tmp_path / "log.csv")
    log = read_log(tmp_path / "log.csv")
    order = [str(i) for i in (5, 4, 3, 2, 1, 0)]
    ranked = pd.DataFrame([(c, d, r) for c in log["context_id"] for r, d in enumerate(order, 1)],
                          columns=["query_id", "doc_id", "rank"])
    ranked.to_parquet(tmp_path / "run.parquet")
    p = params(tmp_path, estimators=["ips", "snips"], policy={"system": "bm25", "epsilon": 0.2})
    pin(p, tmp_path / "input", base=tmp_path)
    out = run(p, Inputs(tmp_path / "input", {"bm25": tmp_path / "run.parquet"}))
    actions = actions_of(log)
    dist = from_ranking(ranked, log, actions, 2, epsilon=0.2)
    expected = evaluate(log, dist, actions, n_positions=2, estimators=("ips", "snips"),
                        resamples=200, seed=3, min_ess=50)
    got = out.estimates[out.estimates["kind"] == "estimate"].reset_index(drop=True)
    pd.testing.assert_frame_equal(got[list(expected.estimates.columns)], expected.estimates,
                                  check_dtype=False)
    assert out.report["policy"] == {"kind": "ranking", "system": "bm25", "rule": "rank",
                                    "epsilon": 0.2,
                                    "description": "bm25's ranking, rule rank (epsilon 0.2)"}
