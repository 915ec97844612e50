"""Interpolated precision at recall levels (trec_eval's iprec_at_recall): by hand and names.

Parity with trec_eval (through pytrec_eval) on randomized data is in test_parity.py.
"""

import math

import pandas as pd
import pytest

from releval.metrics.engine import evaluate
from releval.metrics.measures import MEASURES, RECALL_LEVELS
from releval.metrics.names import parse_measure, parse_measures


def curve(ranked: list[str], grades: dict[str, int], **kw) -> list[float]:
    run = pd.DataFrame({"query_id": "q", "doc_id": ranked, "rank": range(1, len(ranked) + 1)})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": list(grades), "grade": list(grades.values())})
    pq = evaluate(run, qrels, ["iprec_at_recall"], **kw).per_query
    return pq.value.tolist()


def test_eleven_point_curve_by_hand():
    # relevant at ranks 1, 3 and 6 (precision 1, 2/3, 1/2); a fourth relevant one unranked
    ranked = ["a", "n1", "b", "n2", "n3", "c", "n4"]
    grades = {"a": 1, "b": 1, "c": 1, "d": 1, "n1": 0, "n2": 0}
    # recall 0.1 … 0.25 needs 1 relevant, 0.3 … 0.5 needs 2, 0.6 … 0.75 needs 3, above: 4
    expected = [1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 1 / 2, 1 / 2, 0, 0, 0]
    assert curve(ranked, grades) == pytest.approx(expected, abs=1e-15)


def test_interpolation_takes_the_best_precision_at_or_after_the_level():
    # precision 1/2 at the first hit, 2/3 at the second: the curve never rises with recall
    ranked = ["n", "a", "b"]
    grades = {"a": 1, "b": 1, "n": 0}
    assert curve(ranked, grades) == pytest.approx([2 / 3] * 11, abs=1e-15)


def test_undefined_without_relevant_documents_and_zero_without_a_ranking():
    run = pd.DataFrame({"query_id": ["z"], "doc_id": ["a"], "rank": [1]})
    qrels = pd.DataFrame({"query_id": ["z", "m"], "doc_id": ["a", "b"], "grade": [0, 1]})
    pq = evaluate(run, qrels, ["IPrec@0.5"]).per_query.set_index("query_id").value
    assert math.isnan(pq["z"]) and pq["m"] == 0.0


def test_rel_threshold():
    ranked = ["a", "b"]
    grades = {"a": 1, "b": 2}
    assert curve(ranked, grades, rel=2) == pytest.approx([1 / 2] * 11, abs=1e-15)


@pytest.mark.parametrize("text,names", [
    ("IPrec@0.5", ["IPrec(recall=0.5)"]), ("IPrec(recall=0.5)", ["IPrec(recall=0.5)"]),
    ("IPrec@1", ["IPrec(recall=1.0)"]), ("IPrec(rel=2)@.25", ["IPrec(rel=2, recall=0.25)"]),
    ("iprec_at_recall_0.50", ["IPrec(recall=0.5)"]),
    ("iprec_at_recall.0,.5,1", ["IPrec(recall=0.0)", "IPrec(recall=0.5)", "IPrec(recall=1.0)"]),
])
def test_names(text, names):
    assert [m.name for m in parse_measures(text)] == names


def test_bare_names_expand_to_trec_evals_eleven_levels():
    for text in ("IPrec", "iprec_at_recall"):
        ms = parse_measures(text)
        assert [dict(m.options)["recall"] for m in ms] == list(RECALL_LEVELS)
        assert [MEASURES["IPrec"].trec(m) for m in ms][:2] == ["iprec_at_recall_0.00",
                                                               "iprec_at_recall_0.10"]


@pytest.mark.parametrize("text,rule", [
    ("IPrec@10", "recall must be a number in"), ("IPrec@0.5@1", "unknown measure"),
    ("IPrec(recall=0.5)@0.5", "twice"), ("P@0.5", "cutoff must be an integer"),
    ("IPrec(recall='half')", "recall must be a number in"),
])
def test_bad_names_say_why(text, rule):
    with pytest.raises(ValueError, match=rule):
        parse_measure(text)
