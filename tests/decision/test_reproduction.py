"""Reproducibility measures: hand-computed cases, scipy's kendalltau, and repro_eval's own
formulas (github.com/irgroup/repro_eval, ``repro_eval/measure/``) on small examples; and the
lines ``releval reproduce`` prints from the original outputs in the DVC cache."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from flows.reproduce import closeness as reproduce_closeness
from releval.decision.reproduction import (
    closeness,
    effects,
    ktu,
    means,
    order_per_query,
    ranked_lists,
    rbo,
    rmse,
)


def per_query(values: dict[str, float], measure: str = "AP") -> pd.DataFrame:
    return pd.DataFrame({"query_id": list(values), "measure": measure,
                         "value": list(values.values())})


def repro_eval_ktu(orig_docs: list[str], rep_docs: list[str]) -> float:
    """``document_order._KTU`` for one topic, as repro_eval writes it."""
    union = list(sorted(set(orig_docs + rep_docs)))
    orig_idx = [union.index(doc) for doc in orig_docs]
    rep_idx = [union.index(doc) for doc in rep_docs]
    return float(round(kendalltau(orig_idx, rep_idx).correlation, 14))


def repro_eval_rbo(run: list[str], ideal: list[str], p: float, depth: int) -> float:
    """``document_order._rbo`` (Clarke et al.), as repro_eval writes it."""
    run_set, ideal_set = set(), set()
    score = normalizer = 0.0
    weight = 1.0
    for i in range(depth):
        if i < len(run):
            run_set.add(run[i])
        if i < len(ideal):
            ideal_set.add(ideal[i])
        score += weight * len(ideal_set.intersection(run_set)) / (i + 1)
        normalizer += weight
        weight *= p
    return score / normalizer


def docs(*names: str) -> np.ndarray:
    return np.array(names, dtype=str)


def test_hand_computed_order():
    a, b = docs("d1", "d2", "d3"), docs("d3", "d2", "d1")
    assert ktu(a, b) == -1.0  # every pair discordant
    # overlaps at depth 1, 2, 3: 0, {d2}, all three; weights 1, .95, .9025
    assert rbo(a, b) == pytest.approx((0.95 * 1 / 2 + 0.9025 * 3 / 3) / (1 + 0.95 + 0.9025))
    # cut to 2 each: union d4 < d5 < d6, x = (0, 2), y = (0, 1): one concordant pair
    assert ktu(docs("d4", "d6", "d5"), docs("d4", "d5")) == 1.0
    assert math.isnan(ktu(docs("d1"), docs("d1")))


def test_hand_computed_rmse_counts_undefined():
    out = rmse(per_query({"q1": 0.5, "q2": 1.0, "q3": np.nan, "q9": 0.7}),
               per_query({"q1": 0.25, "q2": 1.0, "q3": 0.3}))
    row = out.iloc[0]
    assert (row.measure, row.n, row.undefined) == ("AP", 2, 1)  # q9: not in both, not counted
    assert row.value == pytest.approx(math.sqrt((0.25 ** 2 + 0) / 2))


def test_hand_computed_effects():
    out = effects(per_query({"q1": 0.2, "q2": 0.4}), per_query({"q1": 0.4, "q2": 0.6}),
                  per_query({"q1": 0.2, "q2": 0.4}), per_query({"q1": 0.3, "q2": 0.5}))
    row = out.iloc[0]
    assert row.ER == pytest.approx(0.1 / 0.2)
    assert row.RI == pytest.approx(0.2 / 0.3)
    assert row.RI_reproduced == pytest.approx(0.1 / 0.3)
    assert row.delta_RI == pytest.approx(0.1 / 0.3)
    assert (row.n, row.undefined) == (2, 0)


def test_effects_exclude_a_query_undefined_in_any_side():
    out = effects(per_query({"q1": 0.2, "q2": np.nan}), per_query({"q1": 0.4, "q2": 0.6}),
                  per_query({"q1": 0.2, "q2": 0.4}), per_query({"q1": 0.4, "q2": 0.6}))
    assert out[["ER", "delta_RI", "n", "undefined"]].iloc[0].tolist() == [1.0, 0.0, 1, 1]


def test_effect_ratio_without_an_original_effect_is_undefined():
    same = per_query({"q1": 0.3})
    assert math.isnan(effects(same, same, same, per_query({"q1": 0.4})).ER.iloc[0])


def test_ktu_agrees_with_scipy_and_repro_eval():
    rng = np.random.default_rng(7)
    pool = [f"d{i:04d}" for i in range(1500)]
    for n, times in ((2, 20), (5, 20), (20, 20), (40, 20), (257, 3), (1000, 2)):
        for _ in range(times):
            a = list(rng.choice(pool, n, replace=False))
            b = list(rng.choice(pool, n, replace=False))
            union = sorted(set(a) | set(b))
            x, y = [union.index(d) for d in a], [union.index(d) for d in b]
            ours = ktu(docs(*a), docs(*b))
            assert ours == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
            assert ours == pytest.approx(repro_eval_ktu(a, b), abs=1e-12)


def test_ktu_cuts_unequal_lists_and_depth():
    a, b = docs("d9", "d1", "d5", "d2"), docs("d1", "d9", "d2")
    assert ktu(a, b) == pytest.approx(repro_eval_ktu(["d9", "d1", "d5"], ["d1", "d9", "d2"]))
    assert ktu(a, b, depth=2) == pytest.approx(repro_eval_ktu(["d9", "d1"], ["d1", "d9"]))


def test_rbo_agrees_with_repro_eval_when_a_list_reaches_depth():
    rng = np.random.default_rng(3)
    pool = [f"d{i}" for i in range(80)]
    for p in (0.5, 0.9, 0.95):
        for _ in range(20):
            a = list(rng.choice(pool, 30, replace=False))
            b = list(rng.choice(pool, int(rng.integers(1, 31)), replace=False))
            assert rbo(docs(*a), docs(*b), depth=30, p=p) == pytest.approx(
                repro_eval_rbo(b, a, p, 30), abs=1e-12)
            assert rbo(docs(*a), docs(*b), depth=12, p=p) == pytest.approx(
                repro_eval_rbo(b, a, p, 12), abs=1e-12)


def test_rbo_of_identical_short_lists_is_one():
    a = docs("d1", "d2", "d3")
    assert rbo(a, a) == 1.0
    assert repro_eval_rbo(list(a), list(a), 0.95, 1000) < 0.5  # what the deviation avoids
    assert math.isnan(rbo(docs(), docs()))


def test_ranked_lists_follow_the_rank_column_else_score_then_doc_id_descending():
    run = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["a", "c", "b", "z"],
                        "score": [1.0, 1.0, 2.0, 0.5]})
    assert ranked_lists(run)["q1"].tolist() == ["b", "c", "a", "z"]
    assert ranked_lists(run.assign(rank=[4, 1, 3, 2]))["q1"].tolist() == ["c", "z", "b", "a"]


def test_order_means_over_queries_of_both_runs():
    original = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q3"],
                             "doc_id": ["d1", "d2", "d7", "d8"], "score": [2.0, 1.0, 1.0, 1.0]})
    reproduced = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d2", "d1", "d7"],
                               "score": [2.0, 1.0, 1.0]})
    out = means(order_per_query(original, reproduced)).set_index("measure")
    assert out.loc["KTU"].tolist() == [-1.0, 1, 1]  # q2 has one document: undefined
    # q1: overlap 0 at depth 1, 2 at depth 2; q2: identical
    assert out.loc["RBO", "value"] == pytest.approx((0.95 / 1.95 + 1.0) / 2)
    assert out.loc["RBO", "n"] == 2  # q3: ranked by the original only


def run(lists: dict[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame([(q, d, i + 1, 10.0 - i) for q, docs_ in lists.items()
                         for i, d in enumerate(docs_)],
                        columns=["query_id", "doc_id", "rank", "score"])


ORIGINAL_RUN, REVERSED_RUN = run({"q1": ["d1", "d2", "d3"]}), run({"q1": ["d3", "d2", "d1"]})
REVERSED_RBO = (0.95 * 1 / 2 + 0.9025 * 3 / 3) / (1 + 0.95 + 0.9025)


def test_closeness_per_system():
    out = closeness({"A": (per_query({"q1": 0.5, "q2": 1.0}), per_query({"q1": 0.25, "q2": 1.0})),
                     "B": (per_query({"q1": 0.2}), per_query({"q1": 0.2}))},
                    {"A": (ORIGINAL_RUN, REVERSED_RUN)})
    assert out["rmse"].values.tolist() == [["A", "AP", pytest.approx(0.25 / math.sqrt(2)), 2, 0],
                                           ["B", "AP", 0.0, 1, 0]]
    assert out["order"].values.tolist() == [["A", "KTU", -1.0, 1, 0],
                                            ["A", "RBO", pytest.approx(REVERSED_RBO), 1, 0]]
    assert closeness({}, {})["rmse"].empty


def test_reproduce_reads_the_original_from_the_cache(tmp_path: Path):
    """``releval reproduce``'s lines: the original outputs by the receipt's md5 in the DVC
    cache, the reproduced ones in the worktree; one missing on either side is left out."""
    cache, tree = tmp_path / "cache", tmp_path / "tree"
    outputs = {"data/evaluate/per_query.parquet": "aa11", "data/candidates/A/run.parquet":
               "bb22", "data/fused/F/run.parquet": "cc33"}  # F: not in the cache

    def put(frame: pd.DataFrame, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(path)

    def scored(a: float) -> pd.DataFrame:
        return pd.concat([per_query({"q1": a, "q2": 1.0}).assign(system="A"),
                          per_query({"q1": 0.2}).assign(system="B")], ignore_index=True)

    put(scored(0.5), cache / "files/md5/aa/11")
    put(ORIGINAL_RUN, cache / "files/md5/bb/22")
    put(scored(0.25), tree / "data/evaluate/per_query.parquet")
    put(REVERSED_RUN, tree / "data/candidates/A/run.parquet")
    put(ORIGINAL_RUN, tree / "data/fused/F/run.parquet")
    lines = reproduce_closeness({"receipt": {"outputs": outputs}}, tree, cache)
    assert lines == [f"A: RMSE AP {0.25 / math.sqrt(2):.4f} (2 queries); KTU -1.0000, RBO "
                     f"{REVERSED_RBO:.4f} (1 queries)", "B: RMSE AP 0.0000 (1 queries)"]
    assert reproduce_closeness({"receipt": {"outputs": {}}}, tree, cache) == []
    other = {"query_id": lambda f: "w2-" + f.query_id}  # the reproduction's window changed
    put(REVERSED_RUN.assign(**other), tree / "data/candidates/A/run.parquet")
    put(scored(0.25).assign(**other), tree / "data/evaluate/per_query.parquet")
    assert reproduce_closeness({"receipt": {"outputs": outputs}}, tree, cache) == [
        "A: no query in both the original and the reproduction",
        "B: no query in both the original and the reproduction"]
