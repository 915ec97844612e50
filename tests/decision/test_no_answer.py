"""No-answer refusals on tiny inline runs with hand-computed rates."""

import pandas as pd

from releval.data import contracts as S
from releval.decision.no_answer import refusals
from tests.frames import queries, query


def tagged(query_id: str, *tags: str) -> dict:
    return query(query_id) | {S.TAGS: list(tags)}


QS = queries(tagged("n1", "tail", "no_answer"), tagged("n2", "no_answer"),
             tagged("n3", "head", "no_answer"), tagged("a1", "head"), tagged("a2"),
             tagged("a3", "typo"), tagged("a4", "tail"))


def run(*rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])


# n1: nothing returned; n2: only weak candidates; n3: a strong one. a2, a4: nothing.
RUN = run(("n2", "d1", 1, 0.2), ("n2", "d2", 2, 0.1), ("n3", "d1", 1, 0.9),
          ("a1", "d1", 1, 0.8), ("a3", "d3", 1, 0.3))
ALL = ["n1", "n2", "n3", "a1", "a2", "a3", "a4"]


def test_an_empty_window_is_a_refusal_without_a_threshold():
    got = refusals({"bm25": RUN}, QS, ALL)["bm25"]
    assert got == {"no_answer_queries": 3, "correct_refusals": 1,
                   "correct_refusal_rate": round(1 / 3, 6), "answerable_queries": 4,
                   "no_result": 2, "no_result_rate": 0.5, "threshold": None}


def test_a_threshold_turns_weak_windows_into_refusals():
    got = refusals({"dense": RUN, "bm25": RUN}, QS, ALL, thresholds={"dense": 0.5})
    assert got["dense"] == {"no_answer_queries": 3, "correct_refusals": 2,  # n1, n2
                            "correct_refusal_rate": round(2 / 3, 6), "answerable_queries": 4,
                            "no_result": 3, "no_result_rate": 0.75,  # a2, a3 (0.3 < 0.5), a4
                            "threshold": 0.5}
    assert got["bm25"]["correct_refusals"] == 1 and got["bm25"]["threshold"] is None
    at_edge = refusals({"dense": RUN}, QS, ALL, thresholds={"dense": 0.9})["dense"]
    assert at_edge["correct_refusals"] == 2  # n3's 0.9 reaches the threshold: it answers


def test_the_rate_is_undefined_without_no_answer_queries():
    got = refusals({"bm25": RUN}, QS, ["a1", "a2"])["bm25"]
    assert got["no_answer_queries"] == 0 and got["correct_refusals"] == 0
    assert got["correct_refusal_rate"] is None
    assert (got["answerable_queries"], got["no_result"], got["no_result_rate"]) == (2, 1, 0.5)
    nothing = refusals({"bm25": RUN}, QS, [])["bm25"]
    assert nothing["correct_refusal_rate"] is None and nothing["no_result_rate"] is None


def test_only_the_chosen_queries_and_the_chosen_tag_count():
    got = refusals({"bm25": RUN}, QS, ["n1", "n3", "a4"], tag="typo")["bm25"]
    assert got["no_answer_queries"] == 0 and got["answerable_queries"] == 3
    assert got["no_result"] == 2  # n1 and a4 return nothing; n3 answers
    got = refusals({"bm25": RUN}, QS, ["n1", "n3", "a3", "a4"], tag="typo")["bm25"]
    assert (got["no_answer_queries"], got["correct_refusals"]) == (1, 0)  # a3 answers
