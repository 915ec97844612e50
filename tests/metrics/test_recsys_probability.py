"""AUC, GAUC, LogLoss, Brier and ECE against scikit-learn, on random frames and on a frame
shaped like the real online-retail log; the reliability diagram against calibration_curve."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

from releval.data import contracts as S
from releval.metrics.calibration import reliability
from releval.metrics.catalog import Catalog
from releval.metrics.engine import evaluate
from tests.metrics.recsys import (
    items_table,
    positives,
    random_case,
    ranked,
    retail_log,
    user_queries,
)

MEASURES = ["AUC", "GAUC", "LogLoss", "Brier", "ECE", "ECE(binning='mass')",
            "ECE(bins=4, binning='mass')"]


def per_user_auc(run: pd.DataFrame, qrels: pd.DataFrame, negatives=None) -> pd.Series:
    """The oracle: scikit-learn's roc_auc_score per user over positives and negatives scored
    by position (items outside the window: one score below every window item)."""
    out = {}
    for query, judged in qrels.groupby(S.QUERY_ID):
        pos, window = set(judged[S.DOC_ID]), run[run[S.QUERY_ID] == query]
        score = dict(zip(window[S.DOC_ID], -window[S.RANK].astype(float), strict=True))
        neg = [d for d in window[S.DOC_ID] if d not in pos] if negatives is None else \
            [d for d in negatives.get(query, []) if d not in pos]
        labels = [1] * len(pos) + [0] * len(neg)
        if len(set(labels)) == 2:
            out[query] = roc_auc_score(labels, [score.get(d, -1e9) for d in [*pos, *neg]])
    return pd.Series(out, dtype=float)


def oracle_pairs(run, qrels):
    """(label, probability) of the rows with a probability, of users with a positive."""
    key = set(zip(qrels[S.QUERY_ID], qrels[S.DOC_ID], strict=True))
    users = set(qrels[S.QUERY_ID])
    rows = run[run[S.PROBABILITY].notna() & run[S.QUERY_ID].isin(users)]
    y = np.array([(q, d) in key for q, d in zip(rows[S.QUERY_ID], rows[S.DOC_ID],
                                                 strict=True)], float)
    return y, rows[S.PROBABILITY].to_numpy(float)


def check_against_sklearn(run, qrels, catalog=None):
    result = evaluate(run, qrels, MEASURES, catalog=catalog)
    got = result.per_query[result.per_query[S.MEASURE] == "AUC"].set_index(S.QUERY_ID)[S.VALUE]
    expected = per_user_auc(run, qrels)
    assert got.dropna().sort_index().to_numpy() == pytest.approx(
        expected.sort_index().to_numpy())
    assert set(got.dropna().index) == set(expected.index)
    summary = result.summary.set_index(S.MEASURE)
    n_pos = qrels.groupby(S.QUERY_ID).size().reindex(expected.index)
    assert summary.loc["GAUC", S.VALUE] == pytest.approx((n_pos * expected).sum() / n_pos.sum())
    assert summary.loc["GAUC", "n"] == len(expected)
    y, p = oracle_pairs(run, qrels)
    assert summary.loc["LogLoss", S.VALUE] == pytest.approx(log_loss(y, p, labels=[0, 1]))
    assert summary.loc["Brier", S.VALUE] == pytest.approx(brier_score_loss(y, p))
    for name, bins, strategy in (("ECE", 10, "uniform"), ("ECE(binning='mass')", 10, "quantile"),
                                 ("ECE(bins=4, binning='mass')", 4, "quantile")):
        prob_true, prob_pred = calibration_curve(y, p, n_bins=bins, strategy=strategy)
        edges = np.linspace(0, 1, bins + 1) if strategy == "uniform" else \
            np.percentile(p, np.linspace(0, 100, bins + 1))
        n = np.bincount(np.searchsorted(edges[1:-1], p), minlength=bins)
        ece = (n[n > 0] * np.abs(prob_true - prob_pred)).sum() / len(p)
        assert summary.loc[name, S.VALUE] == pytest.approx(ece)
    return result


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_auc_gauc_logloss_brier_ece_equal_scikit_learn_on_random_frames(seed):
    run, qrels, catalog = random_case(seed)
    result = check_against_sklearn(run, qrels)
    assert result.summary.set_index(S.MEASURE)["level"].to_dict() == {
        "AUC": "query", "GAUC": "system", "LogLoss": "system", "Brier": "system",
        "ECE": "system", "ECE(binning='mass')": "system", "ECE(bins=4, binning='mass')": "system"}
    check_against_sklearn(run, qrels, catalog)  # window negatives: the catalogue changes nothing


@pytest.mark.parametrize("seed", [0, 5])
def test_sampled_auc_equals_scikit_learn_over_the_catalogue_sample(seed):
    run, qrels, window = random_case(seed)
    catalog = replace(window, negatives="sample", n_negatives=7, seed=seed)
    n_items = len(catalog.items)
    drawn = {}
    for key in catalog.sample:
        drawn.setdefault(catalog.query_ids[key // n_items], []).append(
            catalog.items[key % n_items])
    # the sample: min(n, eligible) items visible at the cut that the user never bought
    bought = catalog.bought.toarray() > 0
    for q, items in drawn.items():
        user = catalog.query_user[list(catalog.query_ids).index(q)]
        assert len(items) == min(7, int((~bought[user]).sum()))
        assert not bought[user, [list(catalog.items).index(i) for i in items]].any()
    got = evaluate(run, qrels, ["AUC"], catalog=catalog).per_query.set_index(S.QUERY_ID)
    expected = per_user_auc(run, qrels, negatives=drawn)
    assert got[S.VALUE].dropna().sort_index().to_numpy() == pytest.approx(
        expected.sort_index().to_numpy())


def test_the_negative_sample_is_seeded_and_the_same_whatever_is_evaluated():
    run, qrels, window = random_case(3)
    one, again, other = (replace(window, negatives="sample", n_negatives=5, seed=seed)
                         for seed in (11, 11, 12))
    assert (one.sample == again.sample).all() and len(one.sample) == len(other.sample)
    assert (one.sample != other.sample).any()
    some = qrels[qrels[S.QUERY_ID].isin(["u01@test", "u02@test", "u03@test"])]
    full = evaluate(run, qrels, ["AUC"], catalog=one).per_query.set_index(S.QUERY_ID)
    part = evaluate(run, some, ["AUC"], catalog=again).per_query.set_index(S.QUERY_ID)
    assert part[S.VALUE].equals(full.loc[part.index, S.VALUE])


def test_auc_by_hand_with_ties_outside_the_window():
    # window a (pos), x, b (pos); positive c outside; sampled negatives: x and y (outside)
    run = ranked({"u": ["a", "x", "b"]})
    qrels = positives({"u": ["a", "b", "c"]})
    window = evaluate(run, qrels, ["AUC"]).per_query[S.VALUE].iloc[0]
    assert window == pytest.approx((1 + 0 + 0) / (3 * 1))  # only a is above x
    catalog = Catalog.of(pd.DataFrame(columns=list(S.INTERACTION_COLUMNS)),
                         items_table(["a", "b", "c", "x", "y"]), user_queries(["u"]),
                         negatives="sample", n_negatives=5)
    # every never-bought item is drawn (5 ≥ 5): N = {x, y} after removing the positives
    # a: beats x, y (2); b: beats y (1); c ties y (½), loses to x: (2 + 1 + ½) / (3 · 2)
    sampled = evaluate(run, qrels, ["AUC"], catalog=catalog).per_query[S.VALUE].iloc[0]
    assert sampled == pytest.approx(3.5 / 6)


def test_ece_by_hand_and_the_reliability_diagram():
    run = ranked({"u": ["a", "b", "c", "d"], "v": ["a", "b"]},
                 {"u": [0.95, 0.85, 0.15, 0.05], "v": [0.88, 0.12]})
    qrels = positives({"u": ["a", "c"], "v": ["b"]})
    # width bins: (0.8, 0.9] {0.85: 0, 0.88: 0}, (0.9, 1] {0.95: 1}, (0.1, 0.2] {0.15: 1,
    # 0.12: 1}, [0, 0.1] {0.05: 0}: ECE = (2 · 0.865 + 0.05 + 2 · 0.865 + 0.05) / 6
    ece = evaluate(run, qrels, ["ECE", "ECE(bins=2, binning='mass')"]).summary
    assert ece[S.VALUE].iloc[0] == pytest.approx((4 * 0.865 + 2 * 0.05) / 6)
    # mass bins (2): the median 0.5 splits {0.05, 0.12, 0.15} (2 positives) from the rest (1)
    low, high = abs(2 / 3 - 0.32 / 3), abs(1 / 3 - 2.68 / 3)
    assert ece[S.VALUE].iloc[1] == pytest.approx((3 * low + 3 * high) / 6)
    diagram = reliability({"team": run, "none": run.drop(columns=S.PROBABILITY)}, qrels,
                          bins=2)
    assert list(diagram.columns) == [S.SYSTEM, "binning", "bin", "lo", "hi", "n",
                                     "mean_predicted", "observed"]
    assert diagram[[S.SYSTEM, "binning", "bin", "n"]].values.tolist() == [
        ["team", "width", 0, 3], ["team", "width", 1, 3], ["team", "mass", 0, 3],
        ["team", "mass", 1, 3]]
    mass = diagram[diagram["binning"] == "mass"]
    assert mass["observed"].tolist() == pytest.approx([2 / 3, 1 / 3])
    assert mass["lo"].iloc[0] == 0.05 and mass["hi"].iloc[1] == 0.95


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_bins_are_calibration_curve(strategy):
    run, qrels, _ = random_case(7, n_users=80)
    y, p = oracle_pairs(run, qrels)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy=strategy)
    diagram = reliability({"s": run}, qrels)
    rows = diagram[diagram["binning"] == ("width" if strategy == "uniform" else "mass")]
    assert rows["observed"].to_numpy() == pytest.approx(prob_true)
    assert rows["mean_predicted"].to_numpy() == pytest.approx(prob_pred)
    assert rows["n"].sum() == len(p)


def test_probability_measures_are_not_applicable_without_probabilities():
    run, qrels, _ = random_case(1)
    result = evaluate(run.drop(columns=S.PROBABILITY), qrels, MEASURES)
    summary = result.summary.set_index(S.MEASURE)
    probability = ["LogLoss", "Brier", "ECE", "ECE(binning='mass')"]
    assert not summary.loc[probability, "applicable"].any()
    assert summary.loc[probability, S.VALUE].isna().all()
    assert (summary.loc[probability, "n"] == 0).all()
    assert summary.loc[["AUC", "GAUC"], "applicable"].all()  # ranks, not probabilities
    assert set(result.per_query[S.MEASURE]) == {"AUC"}  # system-level: summary only
    all_nan = run.assign(**{S.PROBABILITY: np.nan})
    assert not evaluate(all_nan, qrels, ["Brier"]).summary["applicable"].iloc[0]


def test_a_probability_outside_zero_one_is_an_input_error():
    run = ranked({"u": ["a"]}, {"u": [1.5]})
    with pytest.raises(Exception, match="probability must be a number in"):
        evaluate(run, positives({"u": ["a"]}), ["Brier"])


def test_against_scikit_learn_on_a_frame_shaped_like_the_real_log():
    """Users of the online-retail log at a cut, positives in the next 30 days, each given
    the 20 items most bought before the cut with a seeded probability."""
    log = retail_log()
    cut = pd.Timestamp("2011-01-15", tz="UTC")
    before = log[(log[S.TIMESTAMP] < cut) & (log[S.LABEL] == 1)]
    horizon = log[(log[S.TIMESTAMP] >= cut) & (log[S.TIMESTAMP] < cut + pd.Timedelta(days=30))
                  & (log[S.LABEL] == 1)]
    users = sorted(set(before[S.USER_ID]) | set(horizon[S.USER_ID]))[:400]
    top = before.groupby(S.ITEM_ID)[S.USER_ID].nunique().sort_values(
        ascending=False, kind="stable").index[:20].tolist()
    rng = np.random.default_rng(0)
    run = ranked({u: top for u in users},
                 {u: list(np.sort(rng.random(20))[::-1].round(3)) for u in users})
    held = horizon[horizon[S.USER_ID].isin(users)][[S.USER_ID, S.ITEM_ID]].drop_duplicates()
    qrels = pd.DataFrame({S.QUERY_ID: held[S.USER_ID] + "@test", S.DOC_ID: held[S.ITEM_ID],
                          S.GRADE: 1})
    result = check_against_sklearn(run, qrels)
    assert result.summary.set_index(S.MEASURE).loc["AUC", "n"] > 100
