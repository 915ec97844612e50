"""The per-measure breakdown of a comparison over strata, on a hand-computed frame."""

import pandas as pd
import pytest

from releval.decision.aggregation import CONTROLLED_NOTE, PAIRED_NOTE
from releval.decision.breakdown import STRATUM, UNLABELLED, breakdown, strata

LABELS = pd.DataFrame({"query_id": ["q1", "q2", "q1"], "dimension": ["kind", "kind", "tenant"],
                       "slice": ["typo", "numeric", "acme"]})
QUERIES = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "weight": [2, 1, 1]})
QRELS = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["d1", "d2", "d1", "d1"],
                      "grade": [1, 2, 0, 1]})  # |R|: q1 2, q2 0, q3 1


def per_query(recall_b, recall_c):
    rows = [("bm25", "R@100", recall_b), ("hybrid", "R@100", recall_c),
            ("bm25", "nDCG@10", [0.5, 0.0, 1.0]), ("hybrid", "nDCG@10", [0.5, 0.0, 0.5])]
    return pd.concat([pd.DataFrame({"system": s, "query_id": ["q1", "q2", "q3"], "measure": m,
                                    "value": v}) for s, m, v in rows], ignore_index=True)


def test_strata_label_each_query_and_carry_its_weight():
    frame = strata(["q1", "q2", "q3"], LABELS, QUERIES, "kind")
    assert frame[STRATUM].tolist() == ["typo", "numeric", UNLABELLED]
    assert frame["weight"].tolist() == [2.0, 1.0, 1.0]


def test_breakdown_aggregates_composition_and_diff_rows():
    frame = strata(["q1", "q2", "q3"], LABELS, QUERIES, "kind")
    parts = breakdown(per_query([0.5, float("nan"), 0.0], [1.0, float("nan"), 1.0]), frame,
                      QRELS, ["R@100", "nDCG@10"], "bm25", "hybrid")
    recall = parts.aggregates["hybrid"]["R@100"]
    assert recall["micro"] == pytest.approx((2 + 1) / 3)  # Σ value·|R| / Σ|R|
    assert parts.aggregates["bm25"]["R@100"]["micro"] == pytest.approx(1 / 3)
    assert parts.aggregates["bm25"]["nDCG@10"]["micro"] is None  # recall only
    assert parts.aggregates["bm25"]["nDCG@10"]["traffic_weighted"] == pytest.approx(2 / 4)
    assert set(parts.composition) == {"R@100", "nDCG@10"}
    assert parts.composition["nDCG@10"]["delta"] == pytest.approx(-0.5 / 4)
    assert list(parts.diff.columns) == ["query_id", "measure", "baseline", "candidate", "diff",
                                        STRATUM, "weight"]
    q3 = parts.diff[(parts.diff["query_id"] == "q3") & (parts.diff["measure"] == "nDCG@10")]
    assert q3[["baseline", "candidate", "diff", STRATUM]].values.tolist() == [
        [1.0, 0.5, -0.5, UNLABELLED]]



def test_the_composition_of_a_paired_comparison_is_controlled():
    frame = strata(["q1", "q2", "q3"], LABELS, QUERIES, "kind")
    paired = breakdown(per_query([0.5, 0.0, 0.0], [1.0, 0.0, 1.0]), frame, QRELS,
                       ["R@100", "nDCG@10"], "bm25", "hybrid")
    for d in paired.composition.values():
        assert d["controlled"] is True and d["note"] == PAIRED_NOTE
        assert d["mix"] == pytest.approx(0.0)  # the same queries and weights on both sides
    fewer = per_query([0.5, 0.0, 0.0], [1.0, 0.0, 1.0])
    fewer = fewer[~((fewer["system"] == "hybrid") & (fewer["query_id"] == "q3"))]
    apart = breakdown(fewer, frame, QRELS, ["R@100"], "bm25", "hybrid")
    assert apart.composition["R@100"]["controlled"] is False
    assert apart.composition["R@100"]["note"] == CONTROLLED_NOTE
