"""ERR, RBP and RBP's residual: worked examples from their papers' definitions, a reference
implementation of gdeval's ERR loop, and the rules they share with every measure."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from releval.metrics.engine import evaluate
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure
from releval.metrics.ranking import Ranking
from tests.frames import frames


def values(ranked, grades, measures, **kw) -> dict[tuple[str, str], float]:
    run, qrels = frames(ranked, grades)
    pq = evaluate(run, qrels, measures, **kw).per_query
    return {(q, m): v for q, m, v in pq.itertuples(index=False)}


def value(ranked, grades, measure, **kw) -> float:
    return values(ranked, grades, [measure], **kw)[("q", parse_measure(measure).name)]


def records_scale() -> bool:
    run, qrels = frames({"q": ["a"]}, {"q": {"a": 1}})
    return hasattr(Ranking(run, qrels, max_grade=4), "max_grade")


# ---- ERR (Chapelle, Metzler, Zhang, Grinspan 2009) ----

def test_err_worked_example_from_the_cascade_model():
    # grades 2, 0 (judged), unjudged, 4, 1 on a 0..4 scale: R_i = (2^g − 1) / 2^4
    ranked = {"q": ["a", "b", "u", "c", "d"]}
    grades = {"q": {"a": 2, "b": 0, "c": 4, "d": 1}}
    r = [3 / 16, 0, 0, 15 / 16, 1 / 16]
    expected, reach = 0.0, 1.0
    for i, ri in enumerate(r, start=1):  # Σ (1/i) R_i Π_{j<i} (1 − R_j)
        expected, reach = expected + ri * reach / i, reach * (1 - ri)
    # by hand: 3/16 + (1/4)(15/16)(13/16) + (1/5)(1/16)(13/16)(1/16)
    assert expected == pytest.approx(3 / 16 + 195 / 1024 + 13 / 20480, abs=1e-15)
    assert value(ranked, grades, "ERR", max_grade=4) == pytest.approx(expected, abs=1e-15)
    grades_to_3 = {"q": {"a": 2, "b": 0, "c": 3, "d": 1}}  # the default 0..3 scale
    r3 = [3 / 8, 0, 0, 7 / 8, 1 / 8]
    at_2 = r3[0]  # ERR@2: the second document has R = 0
    assert value(ranked, grades_to_3, "ERR@2") == pytest.approx(at_2, abs=1e-15)
    full = r3[0] + (1 - r3[0]) * r3[3] / 4 + (1 - r3[0]) * (1 - r3[3]) * r3[4] / 5
    assert value(ranked, grades_to_3, "ERR") == pytest.approx(full, abs=1e-15)


@pytest.mark.skipif(not records_scale(), reason="Ranking does not record its max_grade yet")
def test_err_divides_by_the_declared_scale_not_the_grades_seen():
    ranked, grades = {"q": ["a"]}, {"q": {"a": 2}}
    assert value(ranked, grades, "ERR", max_grade=3) == pytest.approx(3 / 8)
    assert value(ranked, grades, "ERR", max_grade=4) == pytest.approx(3 / 16)


def gdeval_err(gains: list[int], k: int, max_judgment: int) -> float:
    """gdeval.pl's err(): the loop behind ir_measures' ERR, transcribed."""
    score, decay = 0.0, 1.0
    for i, g in enumerate(gains[:k]):
        r = (2 ** g - 1) / 2 ** max_judgment
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


DOCS = [f"d{i}" for i in range(10)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(DOCS), unique=True, max_size=10),
       st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), max_size=10),
       st.sampled_from([None, 1, 3, 20]))
def test_err_equals_gdevals_loop(ranked, grades, k):
    judged = {"q": {**grades, "never_ranked": 0}, "other": {"x": 1}}
    got = value({"q": ranked}, judged, "ERR" + (f"@{k}" if k else ""))
    if not any(g >= 1 for g in grades.values()):
        assert math.isnan(got)  # gdeval leaves such a query out
        return
    gains = [max(grades.get(d, 0), 0) for d in ranked]
    assert got == pytest.approx(gdeval_err(gains, k or len(gains), 3), abs=1e-12)


# ---- RBP and its residual (Moffat & Zobel 2008) ----

def test_rbp_worked_example():
    # relevant at ranks 1, 3 and 4 of five, all judged, p = 0.8:
    # RBP = 0.2 · (1 + 0.8² + 0.8³) = 0.2 + 0.128 + 0.1024 = 0.4304, residual = 0.8⁵
    ranked = {"q": ["a", "b", "c", "d", "e"]}
    grades = {"q": {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0}}
    assert value(ranked, grades, "RBP(p=0.8)") == pytest.approx(0.4304, abs=1e-15)
    assert value(ranked, grades, "RBP_resid(p=0.8)") == pytest.approx(0.32768, abs=1e-15)
    # b unjudged: RBP stays, the residual gains its weight 0.2 · 0.8
    grades["q"].pop("b")
    assert value(ranked, grades, "RBP") == pytest.approx(0.4304, abs=1e-15)
    assert value(ranked, grades, "RBP_resid") == pytest.approx(0.16 + 0.32768, abs=1e-15)
    # p = 0.5: 0.5 · (1 + 0.25 + 0.125); residual 0.5 · 0.5 + 0.5⁵
    assert value(ranked, grades, "RBP(p=0.5)") == pytest.approx(0.6875, abs=1e-15)
    assert value(ranked, grades, "RBP_resid(p=0.5)") == pytest.approx(0.28125, abs=1e-15)


def test_rbp_and_residual_bound_every_completion_of_the_judgments():
    ranked = {"q": ["a", "u1", "b", "u2"]}
    grades = {"q": {"a": 1, "b": 0}}
    low = value(ranked, grades, "RBP(p=0.9)")
    high = low + value(ranked, grades, "RBP_resid(p=0.9)")
    # u1, u2 relevant and every document past the end relevant: the whole remaining mass
    best = 0.1 * (1 + 0.9 + 0.9 ** 3) + 0.9 ** 4
    assert high == pytest.approx(best, abs=1e-15)
    for u1 in (0, 1):
        for u2 in (0, 1):
            filled = {"q": {"a": 1, "b": 0, "u1": u1, "u2": u2}}
            assert low - 1e-15 <= value(ranked, filled, "RBP(p=0.9)") <= high + 1e-15


def test_rbp_cutoff_binary_threshold_and_graded_gain():
    ranked = {"q": ["a", "b", "c"]}
    grades = {"q": {"a": 1, "b": 3, "c": 2}}
    assert value(ranked, grades, "RBP@1") == pytest.approx(0.2)
    assert value(ranked, grades, "RBP(rel=2)") == pytest.approx(0.2 * (0.8 + 0.64))
    graded = 0.2 * (1 / 3 + 0.8 * 3 / 3 + 0.64 * 2 / 3)  # u_i = g_i / g_max, g_max = 3
    assert value(ranked, grades, "RBP(graded=True)") == pytest.approx(graded)
    assert value(ranked, grades, "RBP_resid@2") == pytest.approx(0.64)  # p^min(k, n)


def test_negative_grades_count_as_unjudged_for_the_residual_as_trec_eval():
    ranked = {"q": ["a", "n"]}
    grades = {"q": {"a": 1, "n": -1}}
    assert value(ranked, grades, "RBP_resid") == pytest.approx(0.2 * 0.8 + 0.64)


def test_undefined_and_empty_queries():
    ranked = {"q": ["a"], "z": ["a"]}
    grades = {"q": {"a": 1}, "z": {"a": 0}, "missing": {"b": 2}}
    got = values(ranked, grades, ["ERR", "RBP", "RBP_resid", "RBP(graded=True)"])
    for m in ("ERR", "RBP", "RBP_resid", "RBP(graded=True)"):
        assert math.isnan(got[("z", m)]), m  # no relevant document: undefined
    # relevant documents and no ranking: nothing gained, everything still unknown
    assert got[("missing", "ERR")] == 0 and got[("missing", "RBP")] == 0
    assert got[("missing", "RBP_resid")] == 1.0


def test_names_options_and_directions():
    assert parse_measure("RBP(p=0.8)").name == "RBP"  # the default is left out
    assert parse_measure("RBP(p=0.95, graded=True)@20").name == "RBP(p=0.95, graded=True)@20"
    assert parse_measure("RBP_resid(p=0.5)").name == "RBP_resid(p=0.5)"
    assert parse_measure("ERR@20").name == "ERR@20"
    assert MEASURES["RBP_resid"].better == "lower" and MEASURES["RBP"].better == "higher"
    for bad in ("RBP(p=1)", "RBP(p=0)", "ERR(rel=2)@5", "RBP(graded=1)"):
        with pytest.raises(ValueError):
            parse_measure(bad)
    for family in ("ERR", "RBP", "RBP_resid"):
        assert MEASURES[family].trec(parse_measure(family)) is None


def test_err_matches_a_whole_ranking_across_many_queries():
    rng = np.random.default_rng(3)
    ranked = {f"q{i}": [f"d{j}" for j in rng.permutation(12)[: rng.integers(1, 12)]]
              for i in range(40)}
    grades = {q: {f"d{j}": int(rng.integers(0, 4)) for j in range(12)} for q in ranked}
    got = values(ranked, grades, ["ERR@5"])
    for q, docs in ranked.items():
        gains = [grades[q][d] for d in docs]
        expected = gdeval_err(gains, 5, 3) if any(g >= 1 for g in grades[q].values()) \
            else math.nan
        assert got[(q, "ERR@5")] == pytest.approx(expected, abs=1e-12, nan_ok=True), q
