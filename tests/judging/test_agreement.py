import json
from itertools import combinations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from releval.demo.judges import simulate
from releval.errors import InputError
from releval.judging.agreement import agreement
from releval.judging.ingest import ingest
from tests.judging.pools import N_PAIRS, judgments

A = [0, 1, 2, 3, 2, 1]
B = [0, 2, 2, 3, 1, 1]


def test_kappa_per_pair_equals_sklearn_and_is_undefined_without_overlap():
    rows = ([("q", f"d{i}", "a", g) for i, g in enumerate(A)]
            + [("q", f"d{i}", "b", g) for i, g in enumerate(B)]
            + [("q", "other", "c", 2), ("q", "d0", "c", 0)])
    report = agreement(judgments(rows))
    pairs = {(p["annotator_a"], p["annotator_b"]): p for p in report["pairs"]}
    expected = cohen_kappa_score(A, B, weights="quadratic", labels=range(4))
    assert pairs[("a", "b")] == {"annotator_a": "a", "annotator_b": "b", "n": 6,
                                 "kappa": pytest.approx(expected)}
    assert pairs[("a", "c")]["n"] == 1 and pairs[("a", "c")]["kappa"] is None
    assert report["mean_pairwise_kappa_weighted"] == pytest.approx(expected)
    assert report["low_agreement"] == []
    json.dumps(report)


def test_kappa_undefined_when_no_variance_and_weighted_mean():
    rows = ([("q", f"d{i}", j, 2) for i in range(3) for j in "ab"]  # a, b: all 2s
            + [("q", f"d{i}", "c", g) for i, g in enumerate([0, 3, 3])])
    report = agreement(judgments(rows), low=0.5)
    kappas = {(p["annotator_a"], p["annotator_b"]): p["kappa"] for p in report["pairs"]}
    assert kappas[("a", "b")] is None
    assert kappas[("a", "c")] == 0.0  # a constant judge: defined, 1 - O/E with O = E
    assert report["mean_pairwise_kappa_weighted"] == 0.0
    assert [p["annotator_b"] for p in report["low_agreement"]] == ["c", "c"]


def test_krippendorff_alpha_hand_computed():
    # items (0, 0), (1, 1), (0, 1): o_00 = o_11 = 2, o_01 = o_10 = 1; n_0 = n_1 = 3, n = 6
    # D_o = 2 / 6, D_e = 2 * 3 * 3 / (6 * 5) = 3 / 5, alpha = 1 - (1/3) / (3/5) = 4 / 9
    rows = [("q", d, j, g) for d, grades in (("x", (0, 0)), ("y", (1, 1)), ("z", (0, 1)))
            for j, g in zip("ab", grades, strict=True)]
    assert agreement(judgments(rows))["krippendorff_alpha_interval"] == pytest.approx(4 / 9)


def test_krippendorff_alpha_matches_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers,
    # 12 units, values 1-5, missing data; interval alpha = 0.849
    table = {"A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
             "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
             "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
             "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]}
    rows = [("q", f"u{u:02d}", j, g) for j, grades in table.items()
            for u, g in enumerate(grades) if g is not None]
    alpha = agreement(judgments(rows), max_grade=5)["krippendorff_alpha_interval"]
    assert round(alpha, 3) == 0.849


def test_confusion_table_symmetric_with_one_count_per_ordered_judge_pair():
    rows = [("q", "d0", "a", 0), ("q", "d0", "b", 1), ("q", "d0", "c", 1),
            ("q", "d1", "a", 3), ("q", "d1", "b", 3), ("q", "d2", "a", 2)]
    counts = np.array(agreement(judgments(rows))["confusion"]["counts"])
    assert (counts == counts.T).all()
    assert counts.sum() == 2 * (3 + 1)  # d0: 3 judge pairs, d1: 1, d2: none
    assert counts[0, 1] == 2 and counts[1, 1] == 2 and counts[3, 3] == 2


def test_grades_outside_the_scale_are_rejected():
    with pytest.raises(InputError, match="grade must be an integer in 0..3"):
        agreement(judgments([("q", "d", "a", 4)]))


def test_all_pairs_of_judges_in_confusion_counts(pool, truth):
    rows = simulate(pool, truth, judges=3)
    report = agreement(ingest(rows, pool, pool_id="p1", guideline="g").accepted)
    assert np.array(report["confusion"]["counts"]).sum() == 2 * N_PAIRS * len(
        list(combinations(range(3), 2)))
