import pandas as pd

from releval.data import contracts as S
from releval.demo.judges import INJECTED, corrupt, simulate
from releval.judging.files import read_judgments
from releval.judging.ingest import (
    ACCEPTED_COLUMNS,
    BAD_MARK,
    CONFLICT,
    REASONS,
    carried_over,
    ingest,
)


def test_a_judges_csv_line_with_extra_fields_is_quarantined_and_the_rest_kept(tmp_path, pool):
    path = tmp_path / "judge.csv"
    path.write_text("blind_id,annotator,grade\nb000,ann,2\nb001,ann,1,oops\nb002,ann,3\n")
    rows = read_judgments(path)
    result = ingest(rows, pool, pool_id="p1", guideline="g1")
    assert result.accepted["blind_id"].tolist() == ["b000", "b002"]
    assert result.quarantine[["row", "reason"]].values.tolist() == [
        ["line 3", "more fields than the header"]]
    counts = result.counts
    assert counts["rows_in"] == 3 == counts["accepted_new"] + counts["quarantined"]


def test_every_malformed_row_quarantined_with_its_reason(pool, truth):
    rows = corrupt(simulate(pool, truth, seed=1), share=0.1, seed=2)
    result = ingest(rows, pool, pool_id="p1", guideline="g1")
    damaged = rows[rows[INJECTED].notna()]
    assert len(damaged) >= 0.1 * len(rows)
    assert result.quarantine["reason"].tolist() == damaged[INJECTED].tolist()
    assert set(result.quarantine["reason"]) <= set(REASONS)
    counts = result.counts
    assert counts["rows_in"] == len(rows) == (counts["accepted_new"]
                                              + counts["already_accepted"]
                                              + counts["quarantined"])
    assert counts["accepted_new"] == len(result.accepted) == len(rows) - len(damaged)
    assert sum(counts["by_reason"].values()) == counts["quarantined"]
    assert list(result.accepted.columns) == list(ACCEPTED_COLUMNS)
    assert not result.accepted[S.HARD_NEGATIVE].any()  # simulated judges mark nothing
    assert result.accepted[S.GRADE].dtype == "int64"
    expected = pool.set_index("blind_id")[[S.QUERY_ID, S.DOC_ID]]
    mapped = expected.loc[result.accepted["blind_id"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(result.accepted[[S.QUERY_ID, S.DOC_ID]], mapped,
                                  check_dtype=False)


def test_reingesting_the_same_file_changes_nothing(pool, truth):
    rows = corrupt(simulate(pool, truth), seed=3)
    first = ingest(rows, pool, pool_id="p1", guideline="g1")
    again = ingest(rows, pool, pool_id="p1", guideline="g1", accepted=first.accepted)
    pd.testing.assert_frame_equal(again.accepted, first.accepted)
    pd.testing.assert_frame_equal(again.quarantine, first.quarantine)
    assert again.counts["accepted_new"] == 0
    assert again.counts["already_accepted"] == first.counts["accepted_new"]


def test_repeats_and_conflicts_with_accepted_grades(pool):
    rows = pd.DataFrame({"blind_id": ["b000", "b000", "b001", "b002"],
                         S.ANNOTATOR: ["ann", "ann", "ann", "bob"], S.GRADE: [2, 2, 1, 0]})
    first = ingest(rows, pool, pool_id="p1", guideline="g1")
    assert first.counts["accepted_new"] == 3 and first.counts["already_accepted"] == 1
    changed = pd.DataFrame({"blind_id": ["b001", "b002", "b003"], S.ANNOTATOR: ["ann"] * 3,
                            S.GRADE: [3, 0, 1], "pool_id": ["p1", "", "p1"]})
    second = ingest(changed, pool, pool_id="p1", guideline="g1", accepted=first.accepted)
    assert second.quarantine["reason"].tolist() == [CONFLICT]  # ann said 1 before
    assert second.counts["accepted_new"] == 2  # blank pool_id counts as this pool
    kept = second.accepted.set_index(["blind_id", S.ANNOTATOR])[S.GRADE]
    assert kept[("b001", "ann")] == 1 and len(kept) == 5


def test_only_this_pools_judgments_are_carried_over():
    mine = pd.DataFrame({"pool_id": ["p1"], "grade": [1]})
    assert carried_over(mine, "p1") is mine
    assert carried_over(mine.assign(pool_id="pool-other"), "p1") is None
    assert carried_over(pd.DataFrame(), "p1") is None  # e.g. after dataset qrels
    assert carried_over(None, "p1") is None


def test_judges_marks_are_accepted_with_their_judgments(tmp_path, pool):
    path = tmp_path / "judge.csv"
    path.write_text("blind_id,annotator,grade,hard_negative\n"
                    "b000,ann,0,yes\nb001,ann,2,\nb002,ann,0,No\nb003,ann,1,TRUE\n"
                    "b004,ann,0,maybe\n")
    result = ingest(read_judgments(path), pool, pool_id="p1", guideline="g1")
    assert result.accepted[S.HARD_NEGATIVE].tolist() == [True, False, False, True]
    assert result.quarantine[["row", "reason"]].values.tolist() == [["line 6", BAD_MARK]]
    assert result.counts["by_reason"][BAD_MARK] == 1


def test_one_annotator_gives_a_pair_one_grade_and_one_mark(pool):
    rows = pd.DataFrame({"blind_id": ["b000", "b001", "b001"], S.ANNOTATOR: "ann",
                         S.GRADE: [0, 0, 0], S.HARD_NEGATIVE: [True, True, False]})
    first = ingest(rows, pool, pool_id="p1", guideline="g1")
    assert first.quarantine["reason"].tolist() == [CONFLICT, CONFLICT]  # b001: yes and no
    again = ingest(rows[:1], pool, pool_id="p1", guideline="g1", accepted=first.accepted)
    assert again.counts["already_accepted"] == 1 and again.accepted.equals(first.accepted)
    unmarked = ingest(rows[:1].assign(**{S.HARD_NEGATIVE: False}), pool, pool_id="p1",
                      guideline="g1", accepted=first.accepted)
    assert unmarked.quarantine["reason"].tolist() == [CONFLICT]  # it said yes before
    assert unmarked.accepted[S.HARD_NEGATIVE].tolist() == [True]


def test_judgments_accepted_before_marks_existed_are_not_marked(pool):
    rows = pd.DataFrame({"blind_id": ["b000"], S.ANNOTATOR: ["ann"], S.GRADE: [0]})
    old = ingest(rows, pool, pool_id="p1", guideline="g1").accepted.drop(
        columns=S.HARD_NEGATIVE)
    result = ingest(rows, pool, pool_id="p1", guideline="g1", accepted=old)
    assert result.counts["already_accepted"] == 1
    assert result.accepted[S.HARD_NEGATIVE].tolist() == [False]
