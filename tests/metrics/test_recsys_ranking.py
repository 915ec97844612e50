"""The ranking measures under their recommendation names (HR@k, MAP@k, MRR) are the engine's
Hit@k, AP@k and RR; they, nDCG@k, P@k and R@k equal rectools' on random user frames."""

import numpy as np
import pandas as pd
import pytest
import rectools.metrics as rectools_metrics
from rectools import Columns

from releval.data import contracts as S
from releval.metrics.engine import evaluate
from releval.metrics.names import parse_measure
from tests.metrics.recsys import random_case


def test_recommendation_names_are_the_engine_measures():
    assert parse_measure("HR@10") == parse_measure("Hit@10") == parse_measure("success.10")
    assert parse_measure("MAP@10") == parse_measure("AP@10") == parse_measure("map_cut.10")
    assert parse_measure("MRR") == parse_measure("RR") == parse_measure("recip_rank")
    run, qrels, _ = random_case(4)
    ours = evaluate(run, qrels, ["HR@5", "MAP@5", "MRR@5"]).summary[S.VALUE].tolist()
    assert ours == evaluate(run, qrels, ["Hit@5", "AP@5", "RR@5"]).summary[S.VALUE].tolist()


def as_rectools(run: pd.DataFrame, qrels: pd.DataFrame):
    """rectools' frames, ids as integer codes (rectools needs numpy-backed id columns)."""
    users = pd.Index(sorted(set(qrels[S.QUERY_ID]) | set(run[S.QUERY_ID])))
    items = pd.Index(sorted(set(qrels[S.DOC_ID]) | set(run[S.DOC_ID])))
    reco = pd.DataFrame({Columns.User: users.get_indexer(run[S.QUERY_ID]),
                         Columns.Item: items.get_indexer(run[S.DOC_ID]),
                         Columns.Rank: run[S.RANK].to_numpy()})
    interactions = pd.DataFrame({Columns.User: users.get_indexer(qrels[S.QUERY_ID]),
                                 Columns.Item: items.get_indexer(qrels[S.DOC_ID])})
    return reco, interactions, users


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 8])
def test_ranking_measures_equal_rectools(seed, k):
    run, qrels, _ = random_case(seed)
    reco, interactions, users = as_rectools(run, qrels)
    pairs = {f"HR@{k}": rectools_metrics.HitRate(k), f"MAP@{k}": rectools_metrics.MAP(k),
             f"MRR@{k}": rectools_metrics.MRR(k),
             f"nDCG@{k}": rectools_metrics.NDCG(k, divide_by_achievable=True),
             f"P@{k}": rectools_metrics.Precision(k), f"R@{k}": rectools_metrics.Recall(k)}
    ours = evaluate(run, qrels, list(pairs), queries=users).per_query
    ours = ours.assign(**{S.MEASURE: ours[S.MEASURE].replace(
        {f"Hit@{k}": f"HR@{k}", f"AP@{k}": f"MAP@{k}", f"RR@{k}": f"MRR@{k}"})})
    for name, metric in pairs.items():
        theirs = metric.calc_per_user(reco, interactions)
        theirs.index = users[theirs.index]
        mine = ours[ours[S.MEASURE] == name].set_index(S.QUERY_ID)[S.VALUE]
        # rectools scores every user with a positive; ours also (an empty window scores 0)
        assert mine.notna().sum() == len(theirs)
        assert mine.dropna().sort_index().to_numpy() == pytest.approx(
            theirs.sort_index().to_numpy().astype(float)), name
    without = ours[~ours[S.QUERY_ID].isin(qrels[S.QUERY_ID])]
    assert len(without) and np.isnan(without[S.VALUE]).all()  # no positive: undefined
