"""PSP@k and PSnDCG@k (propensity-scored, Jain et al. 2016) by hand, and against a naive
re-implementation of pyxclib's compute_inv_propesity, psprecision and psndcg."""

import math

import numpy as np
import pytest

from releval.data import contracts as S
from releval.metrics.catalog import Catalog
from releval.metrics.engine import evaluate
from tests.metrics.recsys import (
    items_table,
    positives,
    purchases,
    random_case,
    ranked,
    user_queries,
)

ITEMS = [f"i{j}" for j in range(6)]
# bought before the cut: N = 4 users; N_l: i0 4, i1 2, i2 1, i3 1, i4 0, i5 0
LOG = purchases([("a", "i0"), ("a", "i1"), ("b", "i0"), ("b", "i1"), ("c", "i0"),
                 ("c", "i2"), ("c", "i3"), ("d", "i0")])
RUN = ranked({"a": ["i2", "i3", "i4"], "b": ["i1", "i2", "i5"], "c": ["i1", "i4"]})
QRELS = positives({"a": ["i3"], "b": ["i2", "i5"]})  # c: no positive, not counted
CATALOG = Catalog.of(LOG, items_table(ITEMS), user_queries("abc"))


def summary(measures, run=RUN, qrels=QRELS, catalog=CATALOG, users="abc"):
    result = evaluate(run, qrels, measures, catalog=catalog,
                      queries=[f"{u}@test" for u in users])
    return result.summary.set_index(S.MEASURE)


def test_psp_and_psndcg_by_hand():
    rows = summary(["PSP(A=1, B=1)@2", "PSnDCG(A=1, B=1)@2", "PSP@2"])
    # A = B = 1: C = (ln 4 − 1) · 2, 1/p = 1 + C / (N_l + 1): i2, i3 1 + C/2, i5 1 + C
    c = (math.log(4) - 1) * 2
    rare, unseen, d2 = 1 + c / 2, 1 + c, 1 / math.log2(3)
    # a: i3 at position 2, best {i3}; b: i2 at position 2, best i5 then i2
    assert rows.loc["PSP(A=1, B=1)@2", S.VALUE] == pytest.approx(2 * rare / (rare + unseen
                                                                             + rare))
    z_b = 1 + d2
    got = rare * d2 + rare * d2 / z_b
    best = rare + (unseen + rare * d2) / z_b
    assert rows.loc["PSnDCG(A=1, B=1)@2", S.VALUE] == pytest.approx(got / best)
    assert rows.loc["PSP@2", "n"] == 2 and rows.loc["PSP@2", "level"] == "system"
    # the defaults A = 0.55, B = 1.5 weigh the same hits otherwise
    c = (math.log(4) - 1) * 2.5 ** 0.55
    rare, unseen = 1 + c * 2.5 ** -0.55, 1 + c * 1.5 ** -0.55
    assert rows.loc["PSP@2", S.VALUE] == pytest.approx(2 * rare / (2 * rare + unseen))


def test_a_perfect_ranking_scores_one_and_a_best_seller_counts_less():
    best = ranked({"a": ["i3", "i0"], "b": ["i5", "i2"]})
    assert summary(["PSP@2", "PSnDCG@2"], run=best)[S.VALUE].tolist() == pytest.approx([1, 1])
    # the same hit count, on the best seller i0 instead of the rare i3
    rare = summary(["PSP@1"], run=ranked({"a": ["i3"]}), qrels=positives({"a": ["i3", "i0"]}),
                   users="a")
    popular = summary(["PSP@1"], run=ranked({"a": ["i0"]}), qrels=positives({"a": ["i3",
                                                                               "i0"]}),
                      users="a")
    assert rare.loc["PSP@1", S.VALUE] == 1 > popular.loc["PSP@1", S.VALUE]


def test_not_applicable_without_the_catalogue_and_undefined_with_too_few_buyers():
    rows = summary(["PSP@2"], catalog=None)
    assert not rows.loc["PSP@2", "applicable"]
    few = Catalog.of(purchases([("a", "i0"), ("b", "i1")]), items_table(ITEMS),
                     user_queries("abc"))  # N = 2: ln N − 1 < 0
    rows = summary(["PSP@2", "PSnDCG@2"], catalog=few)
    assert rows[S.VALUE].isna().all() and (rows["n"] == 0).all()


# --- pyxclib's formulas (xclib.evaluation.xc_metrics), written naively over dense matrices --


def inv_propensity(train: np.ndarray, a: float, b: float) -> np.ndarray:
    n = train.shape[0]
    c = (np.log(n) - 1) * (b + 1) ** a
    return 1.0 + c * (train.sum(axis=0) + b) ** -a


def eval_flags(indices: np.ndarray, truth: np.ndarray, inv: np.ndarray) -> np.ndarray:
    padded_truth = np.hstack([truth, np.zeros((len(truth), 1))])  # index -1: the pad
    padded_inv = np.append(inv, 0.0)
    return np.take_along_axis(padded_truth, indices, axis=1) * padded_inv[indices]


def precision_at(flags: np.ndarray, k: int) -> float:
    return float(np.mean(np.cumsum(flags, axis=1)[:, k - 1] / k))


def ndcg_at(flags: np.ndarray, truth: np.ndarray, k: int) -> float:
    total = truth.sum(axis=1).astype(int)
    cum = np.cumsum(1 / np.log2(np.arange(1, max(total.max(), k) + 1) + 1))
    n = cum[total - 1]
    dcg = np.cumsum(flags / np.log2(np.arange(k) + 2), axis=1)[:, k - 1]
    return float(np.mean(dcg / np.minimum(n, cum[k - 1])))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_psp_and_psndcg_equal_pyxclib_on_random_cases(seed):
    run, qrels, catalog = random_case(seed, n_users=50, n_items=25, depth=9)
    k, a, b = 5, 0.6, 2.6
    users, items = list(catalog.users), list(catalog.items)
    log_users = [u for u in users if catalog.incidence[0][:, users.index(u)].nnz]
    train = catalog.incidence[0].T.toarray()[[users.index(u) for u in log_users]]
    inv = inv_propensity(train, a, b)  # the training matrix: users who bought anything
    truth = np.zeros((len(users), len(items)))
    for q, d in zip(qrels[S.QUERY_ID], qrels[S.DOC_ID], strict=True):
        truth[users.index(q.split("@")[0]), items.index(d)] = 1
    indices = np.full((len(users), k), -1)  # the run's top k, padded
    for q, group in run.sort_values(S.RANK).groupby(S.QUERY_ID):
        top = [items.index(d) for d in group[S.DOC_ID]][:k]
        indices[users.index(q.split("@")[0]), :len(top)] = top
    best = np.argsort(-(truth * inv), axis=1, kind="stable")[:, :k]
    best = np.where(np.take_along_axis(truth, best, axis=1) > 0, best, -1)
    flags, best_flags = eval_flags(indices, truth, inv), eval_flags(best, truth, inv)
    expected_psp = precision_at(flags, k) / precision_at(best_flags, k)
    expected_psndcg = ndcg_at(flags, truth, k) / ndcg_at(best_flags, truth, k)
    rows = summary([f"PSP(A={a}, B={b})@{k}", f"PSnDCG(A={a}, B={b})@{k}"], run=run,
                   qrels=qrels, catalog=catalog, users=users)
    assert rows[S.VALUE].tolist() == pytest.approx([expected_psp, expected_psndcg], abs=1e-12)
    assert rows["n"].tolist() == [int((truth.sum(axis=1) > 0).sum())] * 2
