import math

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.judging.adjudication import COUNTS, DATASET, adjudicate, with_hard_negatives
from tests.judging.pools import judgments


@pytest.mark.parametrize("values,expected", [
    (pd.Series([True, False]), [True, False]),
    (pd.Series([1, 0, np.nan]), [True, False, False]),
    (pd.Series([" Yes", "no", "TRUE", "false", "1", "0", "", None], dtype=object),
     [True, False, True, False, True, False, False, False]),
])
def test_marks_are_yes_or_no_and_missing_is_no(values, expected):
    assert S.read_marks(values).tolist() == expected


@pytest.mark.parametrize("values", [pd.Series(["maybe"]), pd.Series([2]), pd.Series([0.5])])
def test_anything_else_is_unreadable(values):
    assert S.read_marks(values).isna().all()


def test_a_frame_without_the_column_marks_nothing_and_a_bad_value_names_its_row():
    frame = pd.DataFrame({S.GRADE: [0, 0]}, index=[4, 5])
    assert S.hard_negative_marks(frame, "f").tolist() == [False, False]
    frame.attrs.update(source="qrels.csv", unit="line")
    with pytest.raises(InputError, match="qrels.csv:line 5: hard_negative must be yes or no, "
                                         "got 'x'"):
        S.hard_negative_marks(frame.assign(**{S.HARD_NEGATIVE: ["no", "x"]}), "f")


def test_marked_qrels_carry_the_column_and_refuse_a_relevant_hard_negative():
    qrels = pd.DataFrame({S.QUERY_ID: ["q1", "q1"], S.DOC_ID: ["a", "b"], S.GRADE: [2, 0]})
    assert S.checked_hard_negatives(qrels, "q")[S.HARD_NEGATIVE].tolist() == [False, False]
    assert S.checked_hard_negatives(qrels.assign(**{S.HARD_NEGATIVE: ["", "yes"]}), "q")[
        S.HARD_NEGATIVE].tolist() == [False, True]
    with pytest.raises(InputError, match=r"q:index 0: a hard negative is judged not relevant "
                                         r"\(grade below 1\), got grade 2"):
        S.checked_hard_negatives(qrels.assign(**{S.HARD_NEGATIVE: True}), "q")


def judged_qrels() -> pd.DataFrame:
    """Qrels of two judges over four pairs of q1 and one of q2."""
    rows = [(q, d, judge, grade) for q, d, grades in (
        ("q1", "a", (3, 3)), ("q1", "b", (0, 0)), ("q1", "c", (2, 1)), ("q1", "d", (0, 1)),
        ("q2", "a", (0, 0))) for judge, grade in zip(("ann", "bob"), grades, strict=True)]
    return adjudicate(judgments(rows), pool_id="p1", guideline="g1").qrels


def test_marks_of_the_dataset_and_the_judges_reach_the_qrels_counted():
    dataset = pd.DataFrame({
        S.QUERY_ID: ["q1", "q1", "q1", "q2", "q3", "q3"], S.DOC_ID: ["a", "b", "c", "z", "y", "x"],
        S.GRADE: [3, 0, 0, 0, 0, 2], S.HARD_NEGATIVE: [False, True, True, True, True, False]})
    judged = pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q2"], S.DOC_ID: ["b", "d", "a"],
                           S.HARD_NEGATIVE: [True, True, False]})
    qrels, counts = with_hard_negatives(judged_qrels(), dataset, judged)
    got = qrels.set_index([S.QUERY_ID, S.DOC_ID])
    assert got[S.HARD_NEGATIVE][got[S.HARD_NEGATIVE]].index.tolist() == [
        ("q1", "b"), ("q1", "d"), ("q2", "z"), ("q3", "y")]
    # q1/b: marked by both, judged 0 (kept once); q1/c: judged 1 (lower median): overruled;
    # q1/d: a judge's mark, judged 0; q2/z and q3/y: not pooled, added as the dataset judged
    assert counts == {"marked": 5, "kept": 2, "added": 2, "overruled": 1}
    assert list(counts) == list(COUNTS)
    added = got.loc[[("q2", "z"), ("q3", "y")]]
    assert (added[S.GRADE] == 0).all() and (added[S.N_JUDGES] == 1).all()
    assert (added[S.POOL_ID] == DATASET).all() and (added[S.GUIDELINE] == DATASET).all()
    assert added[S.AGREEMENT].map(math.isnan).all() and not added[S.ADJUDICATED].any()
    assert got.loc[("q1", "a"), S.POOL_ID] == "p1" and len(qrels) == 7  # q3/x: not marked
    assert qrels[[S.QUERY_ID, S.DOC_ID]].apply(tuple, axis=1).is_monotonic_increasing


def test_an_unpooled_mark_on_a_relevant_dataset_grade_is_overruled_not_added():
    dataset = pd.DataFrame({S.QUERY_ID: ["q9"], S.DOC_ID: ["a"], S.GRADE: [2],
                            S.HARD_NEGATIVE: [True]})
    qrels, counts = with_hard_negatives(judged_qrels(), dataset)
    assert counts == {"marked": 1, "kept": 0, "added": 0, "overruled": 1}
    assert len(qrels) == 5 and not qrels[S.HARD_NEGATIVE].any()


def test_without_marks_the_qrels_gain_an_all_false_column():
    dataset = pd.DataFrame({S.QUERY_ID: ["q1"], S.DOC_ID: ["a"], S.GRADE: [3]})
    qrels, counts = with_hard_negatives(judged_qrels(), dataset)
    assert counts == dict.fromkeys(COUNTS, 0)
    assert qrels.drop(columns=S.HARD_NEGATIVE).equals(judged_qrels())
    assert qrels[S.HARD_NEGATIVE].dtype == bool and not qrels[S.HARD_NEGATIVE].any()
