"""R@k, nDCG@k and Judged@k curves: the engine's own values at each k, trec_eval's on a tiny
run, the grid up to the budget."""

import math

import pandas as pd
import pytest
import pytrec_eval

from releval.data import contracts as S
from releval.metrics.curves import CURVE_COLUMNS, curves, cutoffs
from releval.metrics.engine import evaluate

# q1 {d1: 2, d4: 1}, q2 {d2: 1, d5: 3}, q3 no relevant document (d6 judged 0)
QRELS = pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q1", "q2", "q2", "q3"],
                      S.DOC_ID: ["d1", "d4", "d3", "d2", "d5", "d6"],
                      S.GRADE: [2, 1, 0, 1, 3, 0]})


def ranked(*lists):
    """(query_id, [doc_ids]) lists, ranked in order, scores decreasing."""
    rows = [(q, d, r + 1, 10.0 - r) for q, docs in lists for r, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])


RUNS = {"a": ranked(("q1", ["d3", "d1", "d7", "d4"]), ("q2", ["d5", "d8", "d9", "d2"]),
                    ("q3", ["d6", "d1"])),
        "b": ranked(("q1", ["d4", "d1"]), ("q2", ["d9", "d8", "d7", "d6", "d2", "d5"])),
        "empty": ranked()}


@pytest.mark.parametrize("depth, ks", [
    (100, [1, 2, 3, 5, 10, 20, 50, 100]), (30, [1, 2, 3, 5, 10, 20, 30]),
    (1000, [1, 2, 3, 5, 10, 20, 50, 100, 1000]), (1, [1]), (4, [1, 2, 3, 4])])
def test_cutoffs_run_over_the_grid_and_end_at_the_budget(depth, ks):
    assert cutoffs(depth) == ks


def test_curves_are_the_engines_own_means_at_every_k():
    table = curves(RUNS, QRELS, depth=5)
    assert list(table.columns) == list(CURVE_COLUMNS)
    assert table[S.SYSTEM].unique().tolist() == ["a", "b"]  # the empty run is skipped
    assert table["family"].unique().tolist() == ["R", "nDCG", "Judged"]
    assert table["k"].unique().tolist() == [1, 2, 3, 5]
    for system in ("a", "b"):
        names = [f"{f}@{k}" for f in ("R", "nDCG", "Judged") for k in (1, 2, 3, 5)]
        engine = evaluate(RUNS[system], QRELS, names).summary.set_index(S.MEASURE)
        ours = table[table[S.SYSTEM] == system].set_index(S.MEASURE)
        assert ours.index.tolist() == names
        for name in names:
            assert ours.loc[name, S.VALUE] == pytest.approx(engine.loc[name, S.VALUE], abs=1e-6)
            assert ours.loc[name, "n"] == engine.loc[name, "n"]
    a = table[table[S.SYSTEM] == "a"].set_index(S.MEASURE)
    # by hand: R@2 = (1/2 + 1/2) / 2 over q1, q2 (q3 has no relevant document: undefined)
    assert a.loc["R@2", S.VALUE] == pytest.approx(0.5) and a.loc["R@2", "n"] == 2
    # Judged@2 is defined for every query: q1 2/2, q2 1/2, q3 1/2 (d1 is judged for q1 only)
    assert a.loc["Judged@2", S.VALUE] == pytest.approx(2 / 3, abs=1e-6)
    assert a.loc["Judged@2", "n"] == 3


def test_curves_agree_with_trec_eval_recall_and_ndcg_cut():
    ks = cutoffs(5)
    table = curves({"a": RUNS["a"]}, QRELS, depth=5, queries=["q1", "q2"])
    qrel = {q: dict(zip(g[S.DOC_ID], g[S.GRADE].astype(int), strict=True))
            for q, g in QRELS[QRELS[S.QUERY_ID] != "q3"].groupby(S.QUERY_ID)}
    run = RUNS["a"][RUNS["a"][S.QUERY_ID] != "q3"]
    scored = {q: dict(zip(g[S.DOC_ID], g[S.SCORE], strict=True))
              for q, g in run.groupby(S.QUERY_ID)}
    cuts = ",".join(map(str, ks))
    trec = pytrec_eval.RelevanceEvaluator(qrel, {f"recall.{cuts}", f"ndcg_cut.{cuts}"})
    results = trec.evaluate(scored)
    ours = table.set_index(S.MEASURE)[S.VALUE]
    for k in ks:
        for family, name in (("R", "recall"), ("nDCG", "ndcg_cut")):
            expected = sum(r[f"{name}_{k}"] for r in results.values()) / len(results)
            assert ours[f"{family}@{k}"] == pytest.approx(expected, abs=1e-6)


def test_curves_keep_undefined_as_nan_and_name_the_relevance_threshold():
    table = curves({"a": RUNS["a"]}, QRELS, depth=2, rel=3, queries=["q1", "q3"])
    by = table.set_index(S.MEASURE)
    assert by.index.tolist() == ["R(rel=3)@1", "R(rel=3)@2", "nDCG@1", "nDCG@2", "Judged@1",
                                 "Judged@2"]  # nDCG grades by gain, takes no threshold
    assert math.isnan(by.loc["R(rel=3)@2", S.VALUE]) and by.loc["R(rel=3)@2", "n"] == 0
    assert by.loc["Judged@1", S.VALUE] == pytest.approx(1.0)
