"""judged_only=True: the measures on the condensed list (Sakai 2007), by hand and as a view.

Parity with trec_eval -J (through pytrec_eval) and the definition itself (the measure on a
run without its unjudged rows) are checked on randomized data in test_parity.py.
"""

import copy
import math

import numpy as np
import pytest

from releval.metrics.condensed import condensed
from releval.metrics.engine import evaluate
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure, parse_measures
from releval.metrics.ranking import Ranking
from tests.frames import frames

# u*: unjudged; x: judged with a negative grade (trec_eval: pooled, not judged)
RANKED = {"q": ["u1", "a", "n", "u2", "x", "b"], "e": ["u3"]}
GRADES = {"q": {"a": 1, "b": 2, "c": 1, "n": 0, "x": -1}, "e": {"f": 1}}


def value(measure: str, query: str = "q") -> float:
    run, qrels = frames(RANKED, GRADES)
    pq = evaluate(run, qrels, [measure]).per_query
    return float(pq.loc[pq.query_id == query, "value"].iloc[0])


def test_binary_measures_on_the_condensed_list_by_hand():
    # the condensed list of q is a, n, b (|R| = 3: a, b and the unranked c)
    assert value("P@2") == 0.5 and value("P(judged_only=True)@2") == 0.5
    assert value("P(judged_only=True)@3") == pytest.approx(2 / 3)
    assert value("P@3") == pytest.approx(1 / 3)
    assert value("R(judged_only=True)@3") == pytest.approx(2 / 3) and value("R@3") == 1 / 3
    assert value("R_cap(judged_only=True)@2") == 0.5
    assert value("Hit(judged_only=True)@1") == 1.0 and value("Hit@1") == 0.0
    assert value("RR(judged_only=True)") == 1.0 and value("RR") == 0.5
    assert value("RR(judged_only=True)@1") == 1.0
    assert value("AP(judged_only=True)") == pytest.approx((1 + 2 / 3) / 3)
    assert value("AP") == pytest.approx((1 / 2 + 2 / 6) / 3)
    assert value("Rprec(judged_only=True)") == pytest.approx(2 / 3)
    dcg = 1 + 2 / math.log2(4)  # a at 1, b at 3; the ideal ranking is unchanged: 2, 1, 1
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert value("nDCG(judged_only=True)") == pytest.approx(dcg / idcg)
    assert value("IPrec(judged_only=True)@0.5") == pytest.approx(2 / 3)
    assert value("IPrec@0.5") == pytest.approx(1 / 3)


def test_a_query_left_with_no_judged_document_scores_zero():
    assert value("P(judged_only=True)@5", "e") == 0.0
    assert value("AP(judged_only=True)", "e") == 0.0


def test_the_view_renumbers_positions_and_keeps_the_ranking_api():
    run, qrels = frames(RANKED, GRADES)
    r = Ranking(run, qrels)
    c = condensed(r)
    q = list(r.queries).index("q")
    rows = c.q == q
    assert c.pos[rows].tolist() == [0, 1, 2]
    assert c.grade[rows].tolist() == [1, 0, 2]
    assert c.n_ret.tolist() == [0, 3]  # e, q in sorted order
    assert c.top(2)[rows].tolist() == [True, True, False]
    assert c.running(c.relevant(1))[rows].tolist() == [1, 1, 2]
    assert c.first(c.relevant_rows(2)).tolist() == [np.inf, 2]
    hits = c.relevant_rows(1)
    assert c.ordinal(hits).tolist() == [1, 2] and c.pos[c.relevant_rows(1, 2)].tolist() == [0]
    assert c.sum_rows(c.top_rows(2)).tolist() == [0, 2]
    assert (c.n_rel(1) == r.n_rel(1)).all() and c.nq == r.nq
    assert condensed(r) is c and condensed(c) is c  # one view per ranking


def test_a_copied_ranking_with_other_rows_gets_its_own_view():
    run, qrels = frames(RANKED, GRADES)
    r = Ranking(run, qrels)
    view = condensed(r)
    moved = copy.copy(r)  # as the tie ranges reorder tied documents
    moved.grade = r.grade[::-1].copy()
    assert condensed(moved) is not view
    assert len(condensed(moved).q) == int((moved.grade >= 0).sum())


def test_names_and_trec_names():
    assert parse_measure("P(judged_only=True)@10").name == "P(judged_only=True)@10"
    assert parse_measure("P(judged_only=False)@10").name == "P@10"
    assert parse_measure("AP(rel=2, judged_only=True)").name == "AP(rel=2, judged_only=True)"
    assert len(parse_measures("IPrec(judged_only=True)")) == 11
    for text in ("P(judged_only=True)@10", "nDCG(judged_only=True)@10", "AP(judged_only=True)",
                 "IPrec(judged_only=True)@0.5"):
        m = parse_measure(text)  # trec_eval names it only under -J: releval's name is printed
        assert MEASURES[m.family].trec(m) is None, text
    with pytest.raises(ValueError, match="takes no parameter judged_only"):
        parse_measure("Bpref(judged_only=True)")
    with pytest.raises(ValueError, match="judged_only must be True or False"):
        parse_measure("P(judged_only='yes')@5")
    assert "condensed list" in MEASURES["P"].definition
