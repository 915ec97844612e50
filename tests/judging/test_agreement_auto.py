"""An automatic judge's agreement with people against scikit-learn and krippendorff."""

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from releval.errors import InputError
from releval.judging.agreement_auto import agreement

GRADES = [0, 1, 2, 3]


def judged(seed: int = 0, n: int = 240, queries: int = 12):
    """People's grades and a judge's: off by one on about half the pairs, biased upwards."""
    rng = np.random.default_rng(seed)
    human = pd.DataFrame({"query_id": [f"q{i % queries}" for i in range(n)],
                          "doc_id": [f"d{i}" for i in range(n)],
                          "grade": rng.integers(0, 4, size=n)})
    step = rng.choice([-1, 0, 0, 1, 1], size=n)
    return human, human.assign(grade=np.clip(human["grade"] + step, 0, 3))


def oracles(h: np.ndarray, a: np.ndarray) -> dict:
    both = np.vstack([h, a]).astype(float)
    return {"kappa_linear": cohen_kappa_score(h, a, weights="linear", labels=GRADES),
            "kappa_quadratic": cohen_kappa_score(h, a, weights="quadratic", labels=GRADES),
            "alpha_ordinal": krippendorff.alpha(reliability_data=both,
                                                level_of_measurement="ordinal"),
            "alpha_interval": krippendorff.alpha(reliability_data=both,
                                                 level_of_measurement="interval")}


def test_kappa_and_alpha_equal_the_oracles_overall_and_per_query():
    human, auto = judged()
    out = agreement(human, auto.iloc[::-1], max_grade=3, resamples=200)
    expected = oracles(human["grade"].to_numpy(), auto["grade"].to_numpy())
    for name, value in expected.items():
        family, kind = name.split("_")
        figure = out[family][kind]
        assert figure["value"] == pytest.approx(value, abs=1e-12)
        assert figure["ci_low"] < value < figure["ci_high"]
    per_query = out["per_query"].set_index("query_id")
    for query, rows in human.groupby("query_id"):
        mine = per_query.loc[query]
        theirs = oracles(rows["grade"].to_numpy(), auto.loc[rows.index, "grade"].to_numpy())
        assert mine[list(theirs)].to_numpy(float) == pytest.approx(list(theirs.values()))
        assert mine["pairs"] == len(rows)
    counts = np.array(out["confusion"]["counts"])
    assert counts.sum() == out["pairs"] == 240
    assert counts.sum(axis=1).tolist() == np.bincount(human["grade"], minlength=4).tolist()
    assert out["mean_difference"] == pytest.approx((auto["grade"] - human["grade"]).mean())
    json.dumps({k: v for k, v in out.items() if k != "per_query"})


def test_a_judge_that_copies_people_agrees_fully_and_only_shared_pairs_count():
    human, _ = judged(seed=1)
    auto = pd.concat([human, pd.DataFrame({"query_id": ["q0"], "doc_id": ["new"],
                                           "grade": [3]})])
    out = agreement(human.iloc[5:], auto, max_grade=3, resamples=100)
    for figure in (*out["kappa"].values(), *out["alpha"].values()):
        assert figure["value"] == figure["ci_low"] == figure["ci_high"] == pytest.approx(1.0)
    assert (out["pairs"], out["human_only_pairs"], out["automatic_only_pairs"]) == (235, 0, 6)
    assert out["exact"] == 1.0 and np.trace(out["confusion"]["counts"]) == 235


def test_undefined_is_not_zero_and_resamples_are_seeded():
    human = pd.DataFrame({"query_id": ["a", "a", "b", "b"], "doc_id": ["1", "2", "1", "2"],
                          "grade": [1, 1, 0, 2]})
    auto = human.assign(grade=[1, 1, 0, 1])
    out = agreement(human, auto, max_grade=2, resamples=200, seed=4)
    per_query = out["per_query"].set_index("query_id")
    assert np.isnan(per_query.loc["a", "kappa_quadratic"])  # one grade on both sides
    assert per_query.loc["b", "kappa_quadratic"] == pytest.approx(
        cohen_kappa_score([0, 2], [0, 1], weights="quadratic", labels=[0, 1, 2]))
    assert out["kappa"]["quadratic"]["undefined_resamples"] > 0  # the draws of "a" alone
    assert agreement(human, auto, max_grade=2, resamples=200, seed=4)["kappa"] == out["kappa"]


@pytest.mark.parametrize(("auto", "message"), [
    ({"grade": [1, 4]}, "automatic:index 1: grade must be an integer in 0..3, got 4"),
    ({"doc_id": ["1", "1"]}, "automatic:index 1: pair ('a', '1') is graded twice"),
    ({"query_id": [None, "a"]}, "automatic:index 0: query_id is missing"),
    ({"query_id": ["x", "x"]}, "no (query_id, doc_id) pair is judged by both"),
])
def test_bad_labels_are_refused_in_one_line(auto, message):
    human = pd.DataFrame({"query_id": ["a", "a"], "doc_id": ["1", "2"], "grade": [1, 2]})
    with pytest.raises(InputError) as error:
        agreement(human, human.assign(**auto), max_grade=3)
    assert message in str(error.value) and "\n" not in str(error.value)
