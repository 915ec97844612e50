"""Tie diagnostics: hand-computed ranges, the example of docs/cli.md, and a brute-force oracle that
evaluates every order of the tied documents of small random runs."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from releval.errors import InputError
from releval.metrics.engine import evaluate
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure, parse_measures
from releval.metrics.ties import KEYS, ties


def scored(rows: dict[str, list[tuple[str, float]]]) -> pd.DataFrame:
    return pd.DataFrame([(q, d, s) for q, docs in rows.items() for d, s in docs],
                        columns=["query_id", "doc_id", "score"])


def judged(grades: dict[str, dict[str, int]]) -> pd.DataFrame:
    return pd.DataFrame([(q, d, g) for q, gs in grades.items() for d, g in gs.items()],
                        columns=["query_id", "doc_id", "grade"])


def docs_example():
    """Nine documents above a tie at rank 10: the relevant d10 ties with the non-relevant d11."""
    run = scored({"q1": [(f"a{i}", 20.0 - i) for i in range(1, 10)]
                  + [("d10", 1.5), ("d11", 1.5)]})
    return run, judged({"q1": {"d10": 1}})


def row(result, measure, query=None):
    frame = result.summary if query is None else result.per_query[
        result.per_query["query_id"] == query]
    return frame.set_index("measure").loc[measure]


def test_docs_example_recall_at_10_ranges_over_0_to_1_and_trec_eval_picks_0():
    run, qrels = docs_example()
    result = ties(run, qrels, ["R@10", "P@10", "RR", "nDCG@10", "R@100"])
    r10 = row(result, "R@10", "q1")
    # trec_eval: ties by doc_id descending, so d11 takes rank 10 and d10 falls to 11
    assert (r10["value"], r10["worst"], r10["best"]) == (0.0, 0.0, 1.0)
    assert r10["tied"] and r10["changed"]
    assert row(result, "R@10")[["ties", "changed", "n"]].tolist() == [1, 1, 1]
    assert row(result, "P@10", "q1")[["worst", "best"]].tolist() == [0.0, 0.1]
    rr = row(result, "RR", "q1")
    assert rr["value"] == rr["worst"] == pytest.approx(1 / 11) and rr["best"] == 0.1
    assert row(result, "nDCG@10", "q1")["best"] == pytest.approx(1 / math.log2(11))
    r100 = row(result, "R@100", "q1")  # the whole tie is inside the cutoff: no tie to report
    assert (r100["worst"], r100["best"], r100["tied"], r100["changed"]) == (1, 1, False, False)
    assert result.counts == {"queries_evaluated": 1, "queries_with_ties": 1, "tie_groups": 1,
                             "tied_documents": 2}
    assert not result.by_rank


def test_trec_eval_order_is_the_engine_value_and_picks_one_end():
    run, qrels = docs_example()
    engine = evaluate(run, qrels, ["R@10"]).summary.set_index("measure").loc["R@10", "value"]
    assert engine == row(ties(run, qrels, ["R@10"]), "R@10")["value"] == 0.0
    # named the other way round, the relevant document wins the tie: the other end
    swapped = run.replace({"doc_id": {"d10": "d12"}})
    qrels = judged({"q1": {"d12": 1}})
    assert row(ties(swapped, qrels, ["R@10"]), "R@10", "q1")[["value", "worst", "best"]
                                                               ].tolist() == [1.0, 0.0, 1.0]


def test_a_tie_inside_the_cutoff_changes_position_measures_but_does_not_straddle():
    run = scored({"q": [("a", 3.0), ("b", 3.0), ("c", 1.0)]})
    qrels = judged({"q": {"a": 1}})  # trec_eval puts b first: a at rank 2
    result = ties(run, qrels, ["P@2", "RR@2", "AP", "nDCG@2", "Judged@1", "NumRet"])
    p2 = row(result, "P@2", "q")
    assert (p2["worst"], p2["best"], p2["tied"], p2["changed"]) == (0.5, 0.5, False, False)
    rr = row(result, "RR@2", "q")
    assert (rr["value"], rr["worst"], rr["best"]) == (0.5, 0.5, 1.0)
    assert not rr["tied"] and rr["changed"]  # within the cutoff: no straddle, but it moves
    ap = row(result, "AP", "q")  # no cutoff: tied means the tie changes the value
    assert (ap["worst"], ap["best"], ap["tied"]) == (0.5, 1.0, True)
    assert row(result, "nDCG@2", "q")[["worst", "best"]].tolist() == [
        pytest.approx(1 / math.log2(3)), 1.0]
    judged1 = row(result, "Judged@1", "q")  # b is unjudged: a judged document could lead
    assert (judged1["worst"], judged1["best"], judged1["tied"]) == (0.0, 1.0, True)
    assert row(result, "NumRet", "q")[["worst", "best", "changed"]].tolist() == [3, 3, False]


def test_graded_gains_are_sorted_and_bpref_counts_only_judged_non_relevant():
    run = scored({"q": [("a", 1.0), ("b", 1.0), ("c", 1.0)]})
    qrels = judged({"q": {"a": 1, "b": 0, "c": 3, "x": 2}})
    result = ties(run, qrels, ["nDCG", "Bpref", "Rprec"])
    ideal = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    ndcg = row(result, "nDCG", "q")  # worst: gains 0, 1, 3; best: 3, 1, 0
    assert ndcg["worst"] == pytest.approx((1 / math.log2(3) + 3 / math.log2(4)) / ideal)
    assert ndcg["best"] == pytest.approx((3 + 1 / math.log2(3)) / ideal)
    bpref = row(result, "Bpref", "q")  # R = {a, c, x}, N = {b}: b above a and c (their terms
    assert (bpref["worst"], bpref["best"]) == (0.0, pytest.approx(2 / 3))  # 1 − 1/1), or below
    rprec = row(result, "Rprec", "q")  # |R| = 3: the tie fills ranks 1-3, nothing straddles
    assert (rprec["worst"], rprec["best"], rprec["tied"]) == (2 / 3, 2 / 3, False)


def test_undefined_queries_report_no_tie_and_counts_skip_them():
    run = scored({"q": [("a", 1.0), ("b", 1.0)], "z": [("a", 1.0), ("b", 1.0)]})
    qrels = judged({"q": {"b": 1}, "z": {"a": 0}})
    result = ties(run, qrels, ["P@1"])
    z = row(result, "P@1", "z")
    assert math.isnan(z["value"]) and math.isnan(z["worst"]) and not z["tied"]
    assert row(result, "P@1")[["n", "ties", "worst", "best"]].tolist() == [1, 1, 0.0, 1.0]


def test_a_rank_column_decides_unless_told_to_look_at_the_scores():
    run = scored({"q": [("a", 1.0), ("b", 1.0), ("c", 0.5)]}).assign(rank=[2, 1, 3])
    qrels = judged({"q": {"a": 1}})
    decided = ties(run, qrels, ["P@1"])
    assert decided.by_rank and decided.counts["tie_groups"] == 0
    assert row(decided, "P@1", "q")[["value", "worst", "best", "tied"]].tolist() == [
        0.0, 0.0, 0.0, False]
    looked = ties(run, qrels, ["P@1"], rank_decides=False)
    assert not looked.by_rank
    assert row(looked, "P@1", "q")[["value", "worst", "best", "tied"]].tolist() == [
        0.0, 0.0, 1.0, True]
    # ranks alone, no score: nothing can tie
    alone = ties(run.drop(columns="score"), qrels, ["P@1"], rank_decides=False)
    assert alone.counts["tie_groups"] == 0


def test_families_without_an_exact_key_are_not_computed():
    run = scored({"q": [("a", 1.0), ("b", 1.0)]})
    qrels = judged({"q": {"a": 1}})
    fake = dict(KEYS)
    del fake["AP"], fake["P"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("releval.metrics.ties.KEYS", fake)
        result = ties(run, qrels, ["AP", "P@1"])
    ap, p1 = row(result, "AP"), row(result, "P@1")
    assert not ap["exact"] and math.isnan(ap["worst"]) and pd.isna(ap["ties"])
    assert pd.isna(ap["changed"]) and pd.isna(row(result, "AP", "q")["tied"])
    assert p1["ties"] == 1 and pd.isna(p1["changed"])  # a straddle does not need the measure


# --- the oracle: every order of every tie group -------------------------------------------

EXTRA = ["P(rel=2)@3", "nDCG(dcg='exp-log2')@4", "nDCG(gains={1: 5, 2: 0, 3: 1})@3",
         "AP(rel=2)", "Bpref(rel=2)", "AP(judged_only=True)", "nDCG(judged_only=True)@3",
         "P(judged_only=True)@2", "RR(judged_only=True)", "Rprec(judged_only=True)",
         "IPrec(recall=0.0)", "IPrec(recall=0.5)", "IPrec(recall=1.0)", "RBP(p=0.5)",
         "RBP(graded=True)@3", "RBP_resid(p=0.5)@3", "ERR@2"]


def computable(name: str) -> bool:
    """Whether ``name`` is a measure the registry has now and computes without more options."""
    tiny = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    try:
        evaluate(tiny, judged({"q": {"a": 1}}), [name])
    except InputError:
        return False
    return True


def oracle_measures() -> list[str]:
    """Every registered per-query family with an exact key, with and without a cutoff where
    it may have one, and a few parameters."""
    names = []
    for family, f in MEASURES.items():
        if family not in KEYS or f.level != "query":
            continue
        if f.cutoff in ("required", "optional"):
            names += [f"{family}@1", f"{family}@3"]
        if f.cutoff in ("none", "optional"):
            names.append(family)
    return [n for n in dict.fromkeys(names + EXTRA) if computable(n)]


def test_the_oracle_covers_every_keyed_family():
    covered = {m.family for n in oracle_measures() for m in parse_measures(n)}
    assert covered == {f for f in KEYS if f in MEASURES and MEASURES[f].level == "query"}


def random_query(rng) -> tuple[list[str], np.ndarray, dict[str, int]]:
    n = int(rng.integers(1, 8))
    docs = [f"d{i}" for i in rng.permutation(n)]
    scores = rng.integers(0, 3, n).astype(float)
    grades = {d: int(g) for d, g in zip(docs, rng.integers(-1, 4, n), strict=True)
              if rng.random() < 0.7}
    grades |= {f"x{i}": int(rng.integers(0, 4)) for i in range(int(rng.integers(0, 3)))}
    return docs, scores, grades


def every_order(docs, scores) -> list[list[str]]:
    """Each ranked list the query's tie groups allow: groups by score descending, every
    permutation within each."""
    groups = [[d for d, s in zip(docs, scores, strict=True) if s == v]
              for v in sorted(set(scores), reverse=True)]
    return [sum(p, []) for p in itertools.product(
        *(list(map(list, itertools.permutations(g))) for g in groups))]


@pytest.mark.parametrize("seed", range(12))
def test_worst_and_best_are_the_min_and_max_over_every_order(seed):
    rng = np.random.default_rng(seed)
    measures = oracle_measures()
    runs, qrels, perms = [], [], []
    for b in range(8):
        docs, scores, grades = random_query(rng)
        runs += [(f"b{b}", d, s) for d, s in zip(docs, scores, strict=True)]
        qrels += [(f"b{b}", d, g) for d, g in grades.items()]
        for p, order in enumerate(every_order(docs, scores)):
            perms += [(f"b{b}", f"b{b}/p{p}", d, i + 1) for i, d in enumerate(order)]
            qrels += [(f"b{b}/p{p}", d, g) for d, g in grades.items()]
    run = pd.DataFrame(runs, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"])
    if not (qrels.grade >= 1).any():
        qrels.loc[0, "grade"] = 1
    qrels["hard_negative"] = qrels.grade == 0  # the same marks in every order's copy
    result = ties(run, qrels, measures, common_only=True)
    engine = evaluate(run, qrels, measures, common_only=True).per_query
    ours = result.per_query.set_index(["query_id", "measure"])
    base = engine.set_index(["query_id", "measure"]).value
    np.testing.assert_array_equal(ours["value"].to_numpy(), base.loc[ours.index].to_numpy())
    frame = pd.DataFrame(perms, columns=["base", "query_id", "doc_id", "rank"])
    every = evaluate(frame[["query_id", "doc_id", "rank"]], qrels, measures,
                     common_only=True).per_query
    every["base"] = every["query_id"].str.split("/").str[0]
    span = every.groupby(["base", "measure"]).value.agg(["min", "max"])
    span.index.names = ["query_id", "measure"]
    got = ours.loc[span.index]
    lower = np.array([MEASURES[parse_measure(m).family].better == "lower"
                      for m in span.index.get_level_values("measure")])
    worst, best = np.where(lower, span["max"], span["min"]), np.where(lower, span["min"],
                                                                       span["max"])
    np.testing.assert_allclose(got["worst"].to_numpy(float), worst, atol=1e-12)
    np.testing.assert_allclose(got["best"].to_numpy(float), best, atol=1e-12)
    moved = (span["max"] - span["min"]).to_numpy() > 1e-12
    np.testing.assert_array_equal(got["changed"].to_numpy(bool), moved)
    for (q, m), tied in got["tied"].items():
        measure = parse_measure(m)
        if measure.cutoff is None and measure.family != "Rprec":
            assert tied == moved[span.index.get_loc((q, m))], (q, m)
        elif not tied and measure.family in ("P", "R", "R_cap", "Hit", "Judged", "NumRelRet"):
            w, b = got.loc[(q, m), ["worst", "best"]]
            assert w == b or (math.isnan(w) and math.isnan(b)), (q, m)


@pytest.mark.parametrize("seed", range(4))
def test_ranks_with_tied_scores_are_ranged_like_scores(seed):
    """rank_decides=False: a candidate window's ranks break its score ties one way; the range
    is the one the scores alone give."""
    rng = np.random.default_rng(100 + seed)
    rows, qrels = [], []
    for b in range(10):
        docs, scores, grades = random_query(rng)
        rows += [(f"b{b}", d, s) for d, s in zip(docs, scores, strict=True)]
        qrels += [(f"b{b}", d, g) for d, g in grades.items()]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "grade"])
    ranked = run.sample(frac=1.0, random_state=seed).sort_values(
        ["query_id", "score"], ascending=[True, False], kind="stable")
    ranked = ranked.assign(rank=ranked.groupby("query_id").cumcount() + 1)
    measures = oracle_measures()
    a = ties(run, qrels, measures).per_query
    b = ties(ranked, qrels, measures, rank_decides=False).per_query
    for col in ("worst", "best"):
        np.testing.assert_allclose(a[col].to_numpy(float), b[col].to_numpy(float), atol=1e-12)
    assert a["tied"].equals(b["tied"])
