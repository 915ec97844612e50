"""What a controlled comparison holds fixed: each side's conditions, and their differences."""

import re

import pandas as pd
import pytest

from releval.decision.compare import Uncontrolled
from releval.decision.conditions import (
    ENFORCED,
    condition_differences,
    conditions,
    controlled,
    enforced,
    qrels_revision,
)
from releval.errors import InputError
from releval.retrieval.routes import FUSED, ROUTES

STATS = {"bm25": {"route": "bm25", "depth": 100}, "dense": {"route": "dense", "depth": 100},
         "prod_v2": {"route": "external", "depth": 100, "visibility": {"forbidden": 7}},
         "hybrid": {"route": FUSED, "depth": 100, "sources": ["bm25", "dense"]},
         "mixed": {"route": FUSED, "depth": 100, "sources": ["bm25", "prod_v2"]}}


def test_enforced_is_the_route_trait_and_a_fused_window_needs_both_sources():
    for name in ("bm25", "dense", "prod_v2"):
        assert enforced(name, STATS) is ROUTES[STATS[name]["route"]].enforces_visibility
    assert (enforced("bm25", STATS), enforced("prod_v2", STATS)) == (True, False)
    assert enforced("hybrid", STATS) is True
    assert enforced("mixed", STATS) is False
    with pytest.raises(InputError, match="unknown route 'teleport'"):
        enforced("x", {"x": {"route": "teleport", "depth": 1}})


def test_conditions_are_plain_comparable_values():
    t0 = pd.Timestamp("2025-03-01 08:30", tz="UTC")
    queries = pd.DataFrame({"query_id": ["q1", "q2", "q3"],
                            "issued_at": [t0, t0 + pd.Timedelta(days=2), t0]})
    per_query = pd.DataFrame({"system": ["bm25", "bm25", "prod_v2"],
                              "query_id": ["q2", "q1", "q3"], "measure": "nDCG@10",
                              "value": [0.1, 0.2, 0.3]})
    bm25 = conditions("bm25", per_query, queries, "rev1", "corpus1", STATS)
    assert re.fullmatch(r"2 queries \([0-9a-f]{12}\)", bm25["queries"])
    assert (bm25["qrels"], bm25["budget"]) == ("rev1", 100)
    assert bm25["time_window"] == "2025-03-01 08:30 … 2025-03-03 08:30; corpus corpus1"
    assert bm25["visibility"] == ENFORCED == "enforced by the route"
    prod = conditions("prod_v2", per_query, queries, "rev1", "corpus1", STATS)
    assert prod["visibility"] == "not enforced (flagged, not dropped)"  # not the count
    assert prod["queries"] != bm25["queries"]
    swapped = per_query.assign(query_id=["q1", "q2", "q3"])
    assert conditions("bm25", swapped, queries, "rev1", "corpus1", STATS) == bm25
    # a BEIR collection's queries: issued_at is a stand-in (the latest publication)
    untimed = conditions("bm25", per_query, queries, "rev1", "corpus1", STATS,
                         query_times=False)
    assert untimed["time_window"] == ("no query times: no time window held fixed; "
                                      "corpus corpus1")


def test_qrels_revision_is_content_not_row_order():
    qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d2", "d1", "d1"],
                          "grade": [1, 2, 3], "annotator": ["a", "b", "c"]})
    assert qrels_revision(qrels) == qrels_revision(qrels.iloc[::-1])
    assert qrels_revision(qrels) == qrels_revision(qrels.drop(columns="annotator"))
    assert qrels_revision(qrels) != qrels_revision(qrels.assign(grade=[1, 2, 2]))


def test_condition_differences_lists_each_differing_condition_once():
    a = {"queries": "4", "qrels": "r1", "budget": 100, "time_window": "w", "visibility": "v"}
    assert condition_differences(a, dict(a)) == []
    b = dict(a, qrels="r2", time_window="w2")
    assert condition_differences(a, b) == ["qrels: baseline 'r1' ≠ candidate 'r2'",
                                           "time_window: baseline 'w' ≠ candidate 'w2'"]
    assert condition_differences(a, {k: v for k, v in a.items() if k != "budget"}) == [
        "budget: baseline 100 ≠ candidate None"]


def test_controlled_refuses_differences_unless_allowed():
    a = {"queries": "4", "qrels": "r1", "budget": 100, "time_window": "w", "visibility": "v"}
    held = {"bm25": a, "hybrid": dict(a, budget=50)}
    assert controlled({"bm25": a, "hybrid": dict(a)}, "bm25", "hybrid", False) == []
    with pytest.raises(Uncontrolled, match=r"hybrid vs bm25 is not a controlled comparison, "
                                           r"refused: budget: baseline 100 ≠ candidate 50\."):
        controlled(held, "bm25", "hybrid", False)
    assert controlled(held, "bm25", "hybrid", True) == ["budget: baseline 100 ≠ candidate 50"]
