"""Hand-computed values for every measure, and the engine's rules."""

import math

import numpy as np
import pandas as pd
import pytest

from releval.errors import InputError
from releval.metrics.engine import evaluate
from releval.metrics.measures import MEASURES
from tests.frames import frames


def value(ranked, grades, measure, query="q", **kw) -> float:
    run, qrels = frames(ranked, grades)
    pq = evaluate(run, qrels, [measure], **kw).per_query
    return float(pq.loc[pq.query_id == query, "value"].iloc[0])


ONE_POSITIVE = {"q": {"P": 1, "N1": 0, "N2": 0, "N3": 0, "N4": 0}}


def test_recall_worked_examples():
    assert value({"q": ["P", "N1", "N2"]}, ONE_POSITIVE, "R@2") == 1.0
    assert value({"q": ["N3", "N4", "P", "N1", "N2"]}, ONE_POSITIVE, "R@2") == 0.0
    four = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    assert value({"q": ["a", "b", "x", "c"]}, four, "R@2") == 0.5
    assert value({"q": ["a", "b", "x", "c"]}, four, "R_cap@2") == 1.0


def test_query_without_positives_is_undefined_and_counted_not_scored():
    run, qrels = frames({"q": ["a", "b"], "z": ["a"]},
                        {"q": {"a": 1}, "z": {"a": 0, "b": 0}})
    result = evaluate(run, qrels, ["R@2", "nDCG@10", "RR", "AP", "P@5", "Judged@2"])
    pq = result.per_query.set_index(["query_id", "measure"]).value
    for m in ["R@2", "nDCG@10", "RR", "AP", "P@5"]:
        assert math.isnan(pq[("z", m)])
    summary = result.summary.set_index("measure")
    assert summary.loc["R@2", "undefined"] == 1 and summary.loc["R@2", "n"] == 1
    assert summary.loc["R@2", "value"] == 1.0  # the mean of q alone, not (1 + 0) / 2
    assert summary.loc["Judged@2", "n"] == 2 and pq[("z", "Judged@2")] == 0.5


def test_query_missing_from_run_scores_zero_and_counts_empty_unless_common_only():
    run, qrels = frames({"q": ["a"]}, {"q": {"a": 1}, "m": {"b": 2}})
    summary = evaluate(run, qrels, ["AP"]).summary.iloc[0]
    assert (summary["value"], summary["n"], summary["empty"]) == (0.5, 2, 1)
    summary = evaluate(run, qrels, ["AP"], common_only=True).summary.iloc[0]
    assert (summary["value"], summary["n"], summary["empty"]) == (1.0, 1, 0)


def test_run_queries_not_in_qrels_are_ignored_and_counted():
    run, qrels = frames({"q": ["a"], "stray": ["a"]}, {"q": {"a": 1}})
    result = evaluate(run, qrels, ["P@1"])
    assert result.counts["run_queries_not_in_qrels"] == 1
    assert set(result.per_query.query_id) == {"q"}


def test_graded_and_binary_measures_by_hand():
    ranked = {"q": ["x", "b", "a", "y"]}  # x, y unjudged
    grades = {"q": {"a": 3, "b": 1, "c": 2, "n": 0}}
    assert value(ranked, grades, "P@2") == 0.5
    assert value(ranked, grades, "P(rel=2)@4") == 0.25
    assert value(ranked, grades, "Hit@1") == 0.0 and value(ranked, grades, "Hit@2") == 1.0
    assert value(ranked, grades, "RR") == 0.5
    assert value(ranked, grades, "RR@1") == 0.0
    assert value(ranked, grades, "AP") == pytest.approx((1 / 2 + 2 / 3) / 3)
    assert value(ranked, grades, "AP@2") == pytest.approx((1 / 2) / 3)
    assert value(ranked, grades, "Rprec") == pytest.approx(2 / 3)
    assert value(ranked, grades, "Judged@4") == 0.5
    assert value(ranked, grades, "NumRelRet") == 2 and value(ranked, grades, "NumRel") == 3
    assert value(ranked, grades, "NumRet") == 4
    dcg = 1 / math.log2(3) + 3 / math.log2(4)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert value(ranked, grades, "nDCG") == pytest.approx(dcg / idcg)
    exp_dcg = 1 / math.log2(3) + 7 / math.log2(4)
    exp_idcg = 7 + 3 / math.log2(3) + 1 / math.log2(4)
    assert value(ranked, grades, "nDCG(dcg='exp-log2')") == pytest.approx(exp_dcg / exp_idcg)
    custom = value(ranked, grades, "nDCG(gains={1: 10, 3: 1})@10")  # 2 keeps gain 2
    assert custom == pytest.approx((10 / math.log2(3) + 1 / math.log2(4))
                                   / (10 + 2 / math.log2(3) + 1 / math.log2(4)))


def test_bpref_counts_judged_nonrelevant_above_each_relevant():
    ranked = {"q": ["n1", "a", "u", "n2", "b"]}
    grades = {"q": {"a": 1, "b": 1, "c": 1, "n1": 0, "n2": 0}}
    # a: 1 nonrel above -> 1 - 1/2; b: 2 above -> 0; c not retrieved -> 0
    assert value(ranked, grades, "Bpref") == pytest.approx(0.5 / 3)


def test_cutoff_beyond_the_list_keeps_k_in_the_denominator():
    assert value({"q": ["P"]}, ONE_POSITIVE, "P@10") == 0.1
    assert value({"q": ["P"]}, ONE_POSITIVE, "nDCG@1000") == 1.0


def test_rel_threshold_applies_to_binary_measures_only():
    grades = {"q": {"a": 1, "b": 2}}
    assert value({"q": ["a", "b"]}, grades, "RR", rel=2) == 0.5
    assert value({"q": ["a", "b"]}, grades, "nDCG", rel=2) == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))


def test_rank_column_orders_and_score_orders_as_trec_eval_without_it():
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "grade": [1]})
    ranked = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"], "rank": [2, 1],
                           "score": [5.0, 1.0]})
    assert evaluate(ranked, qrels, ["RR"]).summary.value[0] == 0.5
    tied = ranked.drop(columns="rank").assign(score=1.0)  # tie: doc_id descending puts b first
    assert evaluate(tied, qrels, ["RR"]).summary.value[0] == 1.0


def test_repeated_highly_graded_doc_is_rejected_naming_query_and_doc():
    run, qrels = frames({"q": ["a", "a", "b"]}, {"q": {"a": 3}})
    with pytest.raises(InputError, match="duplicate doc_id 'a'.*query 'q'") as exc:
        evaluate(run, qrels, ["nDCG@10"])
    assert "index 1" in str(exc.value)  # the repeat, 0-based frame index


@pytest.mark.parametrize("grades,rule", [
    ([1.5], "must be an integer"), ([4], "above the declared scale"), ([np.nan], "integer")])
def test_bad_grades_are_rejected(grades, rule):
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "grade": grades})
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "rank": [1]})
    with pytest.raises(InputError, match=rule):
        evaluate(run, qrels, ["P@1"])


def test_declared_scale_admits_higher_grades_and_negative_means_nonrelevant():
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "grade": [4, -1]})
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"], "rank": [1, 2]})
    assert evaluate(run, qrels, ["RR"], max_grade=4).summary.value[0] == 0.5
    assert evaluate(run, qrels, ["Judged@2"], max_grade=4).summary.value[0] == 1.0


def test_nan_score_duplicate_rank_and_duplicate_judgment_are_errors():
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "grade": [1]})
    nan = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [np.nan]})
    with pytest.raises(InputError, match="NaN"):
        evaluate(nan, qrels)
    ranks = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": [1, 1]})
    with pytest.raises(InputError, match="rank 1 repeated in query 'q'"):
        evaluate(ranks, qrels)
    twice = pd.concat([qrels, qrels.assign(grade=0)], ignore_index=True)
    with pytest.raises(InputError, match="duplicate judgment for query 'q' doc 'a'"):
        evaluate(ranks.iloc[:1], twice)


def test_every_registered_measure_documents_its_formula():
    for name, family in MEASURES.items():
        assert "=" in family.definition, name


def test_a_fixed_query_set_makes_unjudged_queries_undefined_and_drops_others():
    run, qrels = frames({"q": ["a"], "nj": ["a"], "other": ["a"]},
                        {"q": {"a": 1}, "other": {"a": 1}})
    result = evaluate(run, qrels, ["RR"], queries=["q", "nj"])
    row = result.summary.iloc[0]
    assert (row["value"], row["n"], row["undefined"]) == (1.0, 1, 1)
    assert set(result.per_query.query_id) == {"q", "nj"}
    assert result.counts["run_queries_not_in_qrels"] == 1  # "other" is outside the set
