"""Reuse accounting (releval.decision.looks) and the gate rule holdout."""

import pandas as pd
import pytest

from releval.cli.history import tables
from releval.data import contracts as S
from releval.decision import looks
from releval.decision.gate import RULES, decide
from releval.decision.gate.holdout import check
from releval.documents.decision import Decision
from releval.params import Params
from releval.params.rules import HoldoutRule
from releval.project import history
from releval.project.receipt import digest, write
from tests import documents
from tests.frames import QRELS, SPLIT

P = Params()  # compare.candidate hybrid (fused), evaluate.splits [test]
DAY1, DAY2, DAY3 = "2026-01-01", "2026-02-01", "2026-03-01"


def runs(tmp_path, **rows) -> dict:
    """system -> a run file holding ``rows`` (doc ids of q3), one per system."""
    out = {}
    for system, docs in rows.items():
        path = tmp_path / f"{system}.parquet"
        pd.DataFrame({S.QUERY_ID: ["q3"] * len(docs), S.DOC_ID: docs}).to_parquet(path)
        out[system] = path
    return out


def test_the_set_digest_is_of_the_content_in_canonical_order():
    test = looks.set_digest(SPLIT, QRELS, ["test"])
    assert looks.set_digest(SPLIT.sample(frac=1, random_state=3),
                            QRELS.sample(frac=1, random_state=4), ["test"]) == test
    assert looks.set_digest(SPLIT, QRELS, ["validation"]) != test
    regraded = QRELS.assign(**{S.GRADE: [1, 2, 1, 1]})  # a new judging round of q3
    assert looks.set_digest(SPLIT, regraded, ["test"]) != test
    assert looks.set_digest(SPLIT, regraded, ["validation"]) == looks.set_digest(
        SPLIT, QRELS, ["validation"])  # q2's rows did not change
    grown = pd.concat([SPLIT, pd.DataFrame({S.QUERY_ID: ["q5"], S.SPLIT: ["test"]})])
    assert looks.set_digest(grown, QRELS, ["test"]) != test  # a new query from the log


def test_a_rerun_of_the_same_candidate_counts_once_and_a_new_one_is_a_new_look(tmp_path):
    first = looks.evaluated(P, SPLIT, QRELS, runs(tmp_path, hybrid=["d1", "d2"]))
    doc = looks.record({}, [first], DAY1)
    rerun = looks.evaluated(P, SPLIT, QRELS, runs(tmp_path, hybrid=["d1", "d2"]))
    assert rerun == first
    assert looks.record(doc, [rerun], DAY2) == doc  # nothing new: the file stays as it was
    assert looks.count(doc, rerun, DAY2) | {"candidate": None} == {
        "split": "test", "digest": first["set"], "candidate": None, "count": 1,
        "since": DAY1, "unrecorded": 0}
    new = looks.evaluated(P, SPLIT, QRELS, runs(tmp_path, hybrid=["d2", "d1"]))
    assert new["set"] == first["set"] and new["candidate"] != first["candidate"]
    assert looks.count(doc, new, DAY2)["count"] == 2  # counted before it is recorded
    doc = looks.record(doc, [new], DAY2)
    assert [(r["first_seen"], r["candidate"]) for r in doc["looks"]] == [
        (DAY1, first["candidate"]), (DAY2, new["candidate"])]
    for look in (first, new):  # recorded: each counts once, since the set's first look
        assert (looks.count(doc, look, DAY3)["count"], looks.count(doc, look, DAY3)["since"]) \
            == (2, DAY1)
    other = P.model_copy(update={"compare": P.compare.model_copy(update={"candidate": "dense"})})
    dense = looks.evaluated(other, SPLIT, QRELS, runs(tmp_path, dense=["d2", "d1"]))
    assert looks.count(doc, dense, DAY3)["count"] == 3  # the same ranking, another system


def test_fusion_tuning_counts_against_the_validation_set_not_the_test_set(tmp_path):
    taken = looks.taken(P, SPLIT, QRELS, runs(tmp_path, hybrid=["d1"]))
    assert [(t["split"], t["system"]) for t in taken] == [("test", "hybrid"),
                                                          ("validation", "hybrid")]
    evaluated, tuned = taken
    assert tuned["set"] == looks.set_digest(SPLIT, QRELS, ["validation"]) != evaluated["set"]
    doc = looks.record({}, taken, DAY1)
    retuned = looks.taken(P, SPLIT, QRELS, runs(tmp_path, hybrid=["d2"]))
    doc = looks.record(doc, retuned[1:], DAY2)  # tuned again on validation only
    assert looks.count(doc, evaluated, DAY2)["count"] == 1
    assert looks.count(doc, retuned[1], DAY2) | {"candidate": None} == {
        "split": "validation", "digest": tuned["set"], "candidate": None, "count": 2,
        "since": DAY1, "unrecorded": 0}
    alone = Params.model_validate({"compare": {"candidate": "dense"}, "fusion": {"systems": {}}})
    assert len(looks.taken(alone, SPLIT, QRELS, runs(tmp_path, dense=["d1"]))) == 1


def test_receipts_without_looks_are_counted_as_unrecorded_and_said(tmp_path):
    look = looks.evaluated(P, SPLIT, QRELS, runs(tmp_path, hybrid=["d1"]))
    ledger = tmp_path / "runs"
    for name, r, finished in (
            ("20251201T100000Z-a", {"schema": "releval.project.receipt/1"}, "2025-12-01"),
            ("20260105T100000Z-b", {"looks": [look]}, "2026-01-05"),
            ("20260106T100000Z-c", {"looks": [look]}, "2026-01-06")):
        r |= {"code": {"commit": "abc", "dirty": False}, "work": {"queries_evaluated": 1},
              "inputs": {}}
        write(ledger / f"{name}.json", {"receipt": r, "sha256": digest(r),
                                         "run": {"finished_at": f"{finished}T10:00:00+00:00"}})
    (ledger / "20260107T100000Z-d.json").write_text("{")  # unreadable
    rows = history.entries(ledger)
    doc = looks.from_ledger(history.taken(rows))
    assert doc == {"looks": [{**look, "first_seen": "2026-01-05"}], "unrecorded": 2}
    counted = looks.count(doc, look, DAY3)
    assert (counted["count"], counted["since"], counted["unrecorded"]) == (1, "2026-01-05", 2)
    said = (f"this test set ({look['set'][:12]}) has informed 1 decision since 2026-01-05 (2 "
            "earlier run(s) in the ledger recorded no looks and are not counted)")
    assert looks.sentence(counted) == said
    assert history.reuse(rows) == said
    assert f"reuse: {said}" in tables(rows, ledger)  # `releval history`'s line
    assert history.reuse(rows[:1]) is None  # no run recorded looks: nothing to say


def counted(n: int) -> dict:
    return {"split": "test", "digest": "ab" * 32, "candidate": "cd" * 32, "count": n,
            "since": DAY1, "unrecorded": 0}


def evidence(n: int | None, max_looks: int | None):
    return documents.evidence(baseline="bm25", candidate="hybrid",
                              looks={} if n is None else counted(n), max_looks=max_looks)


@pytest.mark.parametrize(("n", "passed"), [(2, True), (3, True), (4, False)])
def test_holdout_passes_at_max_looks_and_fails_above(n, passed):
    (outcome,) = check(HoldoutRule(), evidence(n, 3))
    assert (outcome.passed, outcome.applicable, outcome.value, outcome.threshold) == (
        passed, True, n, 3)
    if not passed:
        assert outcome.reason == (
            f"this test set (abababababab) has informed 4 decisions since {DAY1}, more than 3: "
            "it is no longer held out; draw a fresh split, sample new queries from the log, "
            "or run a new judging round (each makes a new set)")


def test_holdout_is_not_applicable_without_max_looks_and_says_so():
    (outcome,) = check(HoldoutRule(), evidence(7, None))
    assert outcome.passed and not outcome.applicable and outcome.value == 7
    assert outcome.reason.startswith("not applicable: no max_looks set (query_set.max_looks)")
    assert outcome.reason.endswith("has informed 7 decisions since 2026-01-01")
    (missing,) = check(HoldoutRule(), evidence(None, 3))  # no count never passes
    assert not missing.passed and missing.reason.startswith("no look count")


def test_holdout_is_a_default_rule_and_the_decision_carries_the_looks():
    assert RULES["holdout"].default and HoldoutRule() in Params().gate.rules
    decision = decide([HoldoutRule()], evidence(4, 3))
    assert decision["failed"] == ["holdout"] and decision["looks"] == counted(4)
    assert Decision.model_validate(decision).looks.count == 4
    del decision["looks"]  # a decision written before looks were counted
    assert Decision.model_validate(decision).looks is None
