import math

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.judging.adjudication import QUEUE_COLUMNS, SPREAD, TIE, adjudicate, dataset_qrels
from tests.judging.pools import judgments

SPLITS = [("q1", "d1", (0, 1, 3)),  # spread 3: queued; median 1
          ("q1", "d2", (1, 2)),  # lower median 1; majority tie
          ("q2", "d3", (2, 2, 3)),  # both methods 2
          ("q2", "d4", (3,))]  # one judge


def split_judgments():
    rows = [(q, d, f"j{k}", g) for q, d, grades in SPLITS for k, g in enumerate(grades)]
    return judgments(rows).assign(blind_id=lambda f: "b-" + f[S.DOC_ID])


@pytest.mark.parametrize("method,grades,queued", [
    ("median", [1, 1, 2, 3], {"d1": SPREAD}),
    ("majority", [0, 1, 2, 3], {"d1": f"{TIE}; {SPREAD}", "d2": TIE}),
])
def test_adjudication_methods_and_queue(method, grades, queued):
    result = adjudicate(split_judgments(), method=method, pool_id="p1", guideline="g1")
    assert list(result.qrels.columns) == list(S.JUDGED_QRELS_COLUMNS)
    assert result.qrels[S.GRADE].tolist() == grades
    assert result.qrels["n_judges"].tolist() == [3, 2, 3, 1]
    assert list(result.queue.columns) == list(QUEUE_COLUMNS)
    assert dict(zip(result.queue[S.DOC_ID], result.queue["reason"], strict=True)) == queued
    assert result.queue["needs_adjudication"].all()
    assert result.queue["grades"].iloc[0] == [0, 1, 3]
    assert not result.qrels["adjudicated"].any()


def test_adjudicator_overrides_and_is_flagged():
    adjudicator = pd.DataFrame({"blind_id": ["b-d1", "b-d3"], S.GRADE: [3, 0]})
    result = adjudicate(split_judgments(), adjudicator=adjudicator, pool_id="p1",
                        guideline="g1")
    qrels = result.qrels.set_index(S.DOC_ID)
    assert qrels[S.GRADE].tolist() == [3, 1, 0, 3]
    assert qrels["adjudicated"].tolist() == [True, False, True, False]
    assert qrels["agreement"].tolist() == pytest.approx([1 / 3, 0.5, 0.0, 1.0])
    assert result.queue["needs_adjudication"].tolist() == [False]  # d1 decided
    with pytest.raises(InputError, match="pair not among the judgments"):
        adjudicate(split_judgments(), adjudicator=pd.DataFrame({"blind_id": ["zz"],
                                                                 S.GRADE: [1]}),
                   pool_id="p1", guideline="g1")


def test_unknown_method_is_an_input_error():
    with pytest.raises(InputError, match="unknown adjudication method 'mean'"):
        adjudicate(split_judgments(), method="mean", pool_id="p1", guideline="g1")


def test_a_datasets_qrels_pass_through_with_their_provenance():
    truth = pd.DataFrame({S.QUERY_ID: ["q1", "q2"], S.DOC_ID: ["d1", "d2"], S.GRADE: [3, 0],
                          "extra": ["x", "y"]})
    qrels = dataset_qrels(truth)
    assert list(qrels.columns) == list(S.JUDGED_QRELS_COLUMNS)
    assert qrels[S.GRADE].tolist() == [3, 0] and qrels[S.N_JUDGES].tolist() == [1, 1]
    assert all(math.isnan(a) for a in qrels[S.AGREEMENT]) and not qrels[S.ADJUDICATED].any()
    assert set(qrels[S.POOL_ID]) == set(qrels[S.GUIDELINE]) == {"dataset"}
