"""Novelty, ILD, LongTail, Serendipity, Coverage, Gini and Entropy by hand, and against
rectools where the definitions coincide (MeanInvUserFreq, IntraListDiversity,
CatalogCoverage)."""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import rectools
import rectools.metrics as metrics
from rectools.metrics import distances

from releval.data import contracts as S
from releval.metrics.catalog import Catalog
from releval.metrics.engine import evaluate, evaluate_systems
from tests.metrics.recsys import (
    CUT,
    items_table,
    positives,
    purchases,
    random_case,
    ranked,
    user_queries,
)

ITEMS = [f"i{j}" for j in range(6)]
# bought before the cut: |U| = 4; buyers per item: i0 4, i1 2, i2 1, i3 1, i4 0, i5 0
LOG = purchases([("a", "i0"), ("a", "i1"), ("b", "i0"), ("b", "i1"), ("c", "i0"),
                 ("c", "i2"), ("c", "i3"), ("d", "i0")])
RUN = ranked({"a": ["i2", "i3", "i4"], "b": ["i1", "i2", "i5"], "c": ["i1", "i4"]})
QRELS = positives({"a": ["i3"], "b": ["i2", "i5"]})  # c: no positive, undefined
EXPECTED = ranked({"a": ["i3", "i0", "i1"], "b": ["i0", "i1", "i2"]})
VECTORS = np.array([[1, 0], [0, 1], [1, 1], [1, 0], [-1, 0], [0, 0]], float)
CATALOG = Catalog.of(LOG, items_table(ITEMS), user_queries("abc"), embeddings=VECTORS,
                     expected=EXPECTED)


def values(measures, run=RUN, catalog=CATALOG):
    result = evaluate(run, QRELS, measures, catalog=catalog, queries=["a@test", "b@test",
                                                                       "c@test"])
    per = result.per_query.pivot(index=S.QUERY_ID, columns=S.MEASURE, values=S.VALUE)
    return per, result.summary.set_index(S.MEASURE)


def test_novelty_and_long_tail_by_hand():
    per, _ = values(["Novelty@3", "Novelty@1", "LongTail@3", "LongTail(head=0.5)@3"])
    # a: i2, i3 (1 buyer of 4), i4 (none: counted as 1) -> 2 bits each; b: i1 1 bit, i2, i5 2
    assert per.loc["a@test", "Novelty@3"] == pytest.approx(2.0)
    assert per.loc["b@test", "Novelty@3"] == pytest.approx(5 / 3)
    assert per.loc["b@test", "Novelty@1"] == pytest.approx(1.0)
    # head 0.2 of 6 items: round(1.2) = 1 item, {i0}; head 0.5: {i0, i1, i2} (i2 wins the tie
    # with i3 by item_id)
    assert per.loc[["a@test", "b@test"], "LongTail@3"].tolist() == [1.0, 1.0]
    assert per.loc[["a@test", "b@test"], "LongTail(head=0.5)@3"].tolist() == pytest.approx(
        [2 / 3, 1 / 3])
    assert per.loc["c@test"].isna().all()  # no positive: undefined, whatever it was shown


def test_ild_in_both_spaces_by_hand():
    per, _ = values(["ILD@3", "ILD(space='cooccurrence')@3", "ILD@1"])
    half = 1 / math.sqrt(2)
    # a: i2·i3 = 1/√2, i2·i4 = −1/√2, i3·i4 = −1; b: i1·i2 = 1/√2, i5 has no vector (cos 0)
    assert per.loc["a@test", "ILD@3"] == pytest.approx(((1 - half) + (1 + half) + 2) / 3)
    assert per.loc["b@test", "ILD@3"] == pytest.approx(((1 - half) + 1 + 1) / 3)
    # profiles: i2 = i3 = {c}, i4 and i5 nobody; i1 = {a, b}
    assert per.loc["a@test", "ILD(space='cooccurrence')@3"] == pytest.approx(2 / 3)
    assert per.loc["b@test", "ILD(space='cooccurrence')@3"] == pytest.approx(1.0)
    assert per["ILD@1"].isna().all()  # a single item has no pair


def test_serendipity_by_hand():
    per, _ = values(["Serendipity@3", "Serendipity@2", "Serendipity@1"])
    # a: its positive i3 is in the expected top 3; b: i2 is expected at 3, i5 is not
    assert per.loc[["a@test", "b@test"], "Serendipity@3"].tolist() == pytest.approx([0, 1 / 3])
    assert per.loc["b@test", "Serendipity@2"] == pytest.approx(1 / 2)  # i2 ∉ E_2(b)
    assert per.loc[["a@test", "b@test"], "Serendipity@1"].tolist() == [0, 0]


def test_coverage_gini_entropy_by_hand():
    _, summary = values(["Coverage@2", "Coverage@3", "Gini@2", "Entropy@2"])
    # users with a positive: a {i2, i3}, b {i1, i2}; counts over the 6 items: 0 1 2 1 0 0
    assert summary.loc["Coverage@2", S.VALUE] == pytest.approx(3 / 6)
    assert summary.loc["Coverage@3", S.VALUE] == pytest.approx(5 / 6)
    c = np.array([0, 1, 2, 1, 0, 0], float)
    mean_abs = np.abs(c[:, None] - c[None, :]).sum() / (2 * len(c) * c.sum())
    assert summary.loc["Gini@2", S.VALUE] == pytest.approx(14 / 24) == pytest.approx(mean_abs)
    assert summary.loc["Entropy@2", S.VALUE] == pytest.approx(1.5)
    assert (summary.loc[["Coverage@2", "Gini@2"], "n"] == 2).all()
    assert (summary.loc[["Coverage@2", "Gini@2"], "undefined"] == 1).all()  # c
    assert set(summary["level"]) == {"system"}


def test_extremes_of_gini_and_entropy():
    _, summary = values(["Gini@1", "Entropy@1"], run=ranked({"a": ["i0"], "b": ["i0"]}))
    assert summary.loc["Gini@1", S.VALUE] == pytest.approx(5 / 6)  # one item: (n − 1) / n
    assert summary.loc["Entropy@1", S.VALUE] == 0
    # a and b have positives but empty windows: nothing shown, Gini and Entropy undefined
    _, summary = values(["Gini@1", "Entropy@1", "Coverage@1"], run=ranked({"c": ["i0"]}))
    assert summary[S.VALUE].iloc[:2].isna().all() and summary[S.VALUE].iloc[2] == 0
    assert (summary["empty"] == 2).all()


def test_beyond_accuracy_is_not_applicable_without_what_it_needs():
    names = ["Novelty@3", "ILD@3", "ILD(space='cooccurrence')@3", "LongTail@3",
             "Serendipity@3", "Coverage@3", "Gini@3", "Entropy@3"]
    _, bare = values(names, catalog=None)
    assert not bare["applicable"].any() and bare[S.VALUE].isna().all()
    assert (bare["n"] == 0).all() and (bare["undefined"] == 3).all()
    plain = Catalog.of(LOG, items_table(ITEMS), user_queries("abc"))  # no vectors, no expected
    _, summary = values(names, catalog=plain)
    assert summary.loc[["ILD@3", "Serendipity@3"], "applicable"].tolist() == [False, False]
    assert summary.drop(["ILD@3", "Serendipity@3"])["applicable"].all()


def test_systems_summary_carries_level_and_applicability():
    scored = evaluate_systems({"x": RUN, "empty": RUN.iloc[:0]}, QRELS,
                              ["Coverage@3", "Brier", "Novelty@3", "HR@3"], catalog=CATALOG,
                              queries=["a@test", "b@test", "c@test"])
    entry = scored.summary["x"]
    assert entry["Coverage@3"] == {"value": round(5 / 6, 6), "n": 2, "undefined": 1,
                                   "empty": 0, "applicable": True, "level": "system"}
    assert entry["Brier"]["applicable"] is False and scored.means["x"]["Brier"] is None
    assert entry["Hit@3"]["level"] == "query"
    assert set(scored.per_query[S.MEASURE]) == {"Novelty@3", "Hit@3"}
    assert scored.skipped == ["empty"]


def test_catalogue_at_each_cut():
    early, late = pd.Timestamp("2024-03-01", tz="UTC"), CUT
    items = items_table(["old", "new", "gone"], published=[
        "2024-01-01", "2024-04-01", "2024-01-01"]).assign(
        **{S.DELETED_AT: pd.to_datetime([None, None, "2024-05-01"], utc=True),
           S.STATUS: ["published", "published", "deleted"]})
    queries = pd.concat([user_queries(["a"], early).assign(**{S.QUERY_ID: "a@validation"}),
                         user_queries(["a", "b"], late)])
    log = pd.concat([purchases([("a", "old")], "2024-02-01"),
                     purchases([("b", "old"), ("b", "new")], "2024-04-15")])
    catalog = Catalog.of(log, items, queries)
    assert catalog.items.tolist() == ["gone", "new", "old"]
    assert catalog.visible.tolist() == [[True, False, True], [False, True, True]]
    assert catalog.popularity.tolist() == [[0, 0, 1], [0, 1, 2]]
    assert catalog.buyers.tolist() == [1, 2]
    assert catalog.query_ids.tolist() == ["a@test", "a@validation", "b@test"]
    assert catalog.query_cut.tolist() == [1, 0, 1]
    with pytest.raises(Exception, match="not among the catalogue's queries"):
        catalog.locate(["z@test"])
    with pytest.raises(Exception, match="one row per document"):
        Catalog.of(log, items, queries, embeddings=np.zeros((2, 4)))


def rectools_frames(run, catalog, k):
    """rectools' inputs, ids as integer codes: the full top k of each user, and the
    label-1 log before the cut."""
    items = pd.Index(catalog.items)
    top = run[run[S.RANK] <= k]
    reco = pd.DataFrame({rectools.Columns.User: pd.Index(catalog.query_ids).get_indexer(
        top[S.QUERY_ID]), rectools.Columns.Item: items.get_indexer(top[S.DOC_ID]),
        rectools.Columns.Rank: top[S.RANK].to_numpy()})
    users, items_of = catalog.incidence[0].T.nonzero()
    prev = pd.DataFrame({rectools.Columns.User: users, rectools.Columns.Item: items_of})
    return reco, prev


@pytest.mark.parametrize("seed", [0, 1])
def test_novelty_ild_coverage_equal_rectools_on_full_lists(seed):
    run, qrels, catalog = random_case(seed, n_users=60)
    vectors = np.random.default_rng(seed).normal(size=(len(catalog.items), 5))
    catalog = replace(catalog, embeddings=vectors)
    k = 3
    full = run.groupby(S.QUERY_ID)[S.RANK].transform("size") >= k  # rectools divides by k
    run = run[full]
    reco, prev = rectools_frames(run, catalog, k)
    result = evaluate(run, qrels, [f"Novelty@{k}", f"ILD@{k}", "Coverage@1"], catalog=catalog)
    per = result.per_query.pivot(index=S.QUERY_ID, columns=S.MEASURE, values=S.VALUE)
    per = per[per.notna().all(axis=1)]
    codes = pd.Index(catalog.query_ids).get_indexer(per.index)

    miuf = metrics.MeanInvUserFreq(k).calc_per_user(reco, prev)
    assert per[f"Novelty@{k}"].to_numpy() == pytest.approx(miuf.loc[codes].to_numpy())

    class Cosine(distances.PairwiseDistanceCalculator):
        def _get_distances_for_item_pairs(self, a, b):
            u, v = vectors[np.asarray(a)], vectors[np.asarray(b)]
            return 1 - (u * v).sum(1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)

    ild = metrics.IntraListDiversity(k, Cosine()).calc_per_user(reco)
    assert per[f"ILD@{k}"].to_numpy() == pytest.approx(ild.loc[codes].to_numpy())
    shown = reco[reco[rectools.Columns.User].isin(
        pd.Index(catalog.query_ids).get_indexer(qrels[S.QUERY_ID].unique()))]
    coverage = metrics.CatalogCoverage(1, normalize=True).calc(shown, list(range(len(
        catalog.items))))
    assert 0 < coverage < 1
    assert result.summary.set_index(S.MEASURE).loc["Coverage@1", S.VALUE] == \
        pytest.approx(coverage)


def test_each_family_says_its_level_and_which_way_is_better():
    from releval.metrics.measures import MEASURES

    lower = {name for name, f in MEASURES.items() if f.better == "lower"}
    system = {name for name, f in MEASURES.items() if f.level == "system"}
    assert lower == {"LogLoss", "Brier", "ECE", "Gini", "RBP_resid", "HardNeg"}
    assert system == {"GAUC", "LogLoss", "Brier", "ECE", "Coverage", "Gini", "Entropy", "PSP",
                      "PSnDCG"}
    assert {"P", "nDCG", "AUC", "Novelty", "ILD", "LongTail", "Serendipity"} <= set(MEASURES)
