import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from releval import schema as S
from releval.errors import InputError
from releval.judgments import (
    CANCELLED_ANNOTATION,
    CONFLICT,
    MISSING_GRADE,
    QRELS_CONTRACT,
    QUEUE_COLUMNS,
    RAW_COLUMNS,
    READ_COLUMNS,
    REASONS,
    SPREAD,
    TIE,
    adjudicate,
    agreement,
    ingest,
    read_judgments,
)
from releval.simulated_judges import INJECTED, corrupt, simulate

N_PAIRS = 40


@pytest.fixture
def pool():
    return pd.DataFrame({
        "pool_id": "p1", S.QUERY_ID: [f"q{i // 4}" for i in range(N_PAIRS)],
        S.DOC_ID: [f"d{i}" for i in range(N_PAIRS)],
        "blind_id": [f"b{i:03d}" for i in range(N_PAIRS)], "systems": [["bm25"]] * N_PAIRS,
        "min_rank": 1, "round": 1})


@pytest.fixture
def truth(pool):
    return pool.loc[::2, [S.QUERY_ID, S.DOC_ID]].assign(**{S.GRADE: [0, 1, 2, 3] * 5})


def judgments(rows):
    """Raw judgments from (query_id, doc_id, annotator, grade) tuples."""
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.ANNOTATOR, S.GRADE])


# --- reading ------------------------------------------------------------------------------

CSV = ('blind_id,pool_id,query,title,text,grade,annotator,notes\n'
       'b000,p1,reset vpn,VPN,"line one\nline two",2,ann,\n'
       '\n'
       'b001,p1,reset vpn,VPN,short,abc,bob,"unsure, skip"\n'
       ',,,,,,,\n')


def test_csv_rows_are_traceable_to_their_lines(tmp_path):
    path = tmp_path / "judges.csv"
    path.write_text(CSV)
    frame = read_judgments(path)
    assert list(frame.columns[:len(READ_COLUMNS)]) == list(READ_COLUMNS)
    assert frame["row"].tolist() == ["line 2", "line 5"]  # record 1 spans lines 2-3
    assert frame[S.GRADE].tolist() == ["2", "abc"]  # raw, as read
    assert frame["notes"].tolist() == [None, "unsure, skip"]  # extra columns kept
    assert frame[S.JUDGED_AT].isna().all() and set(frame["source"]) == {str(path)}


@pytest.mark.parametrize("name,text,rule", [
    ("j.csv", "blind_id,annotator\nb1,ann\n", "missing column.*grade"),
    ("j.json", '[{"id": 1, "data": ', "not valid JSON"),
    ("j.json", '{"tasks": []}', "a JSON list of task objects"),
    ("j.json", '[{"data": {"pool_id": "p1"}, "annotations": []}]', "task 0: .*blind_id"),
    ("j.xlsx", "", "judgments must be"),
])
def test_unreadable_files_name_file_and_rule(tmp_path, name, text, rule):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=rule):
        read_judgments(tmp_path / name)


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


def label_studio(tmp_path):
    def annotation(who, grade, cancelled=False):
        result = [{"from_name": "grade", "to_name": "text", "type": "choices",
                   "value": {"choices": [grade]}}] if grade else []
        return {"completed_by": who, "result": result, "created_at": "2025-03-01T10:00:00Z",
                "was_cancelled": cancelled}

    tasks = [
        {"id": 11, "data": {"blind_id": "b000", "pool_id": "p1", "query": "reset vpn"},
         "annotations": [annotation(7, "2"), annotation({"id": 8, "email": "bo@x.org"}, "3")]},
        {"id": 12, "data": {"blind_id": "b001", "pool_id": "p1", "query": "reset vpn"},
         "annotations": [annotation(7, "1", cancelled=True), annotation(8, None)]},
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    return path


def test_label_studio_one_row_per_annotation_none_dropped(tmp_path, pool):
    frame = read_judgments(label_studio(tmp_path))
    assert frame["row"].tolist() == ["task 0 annotation 0", "task 0 annotation 1",
                                     "task 1 annotation 0", "task 1 annotation 1"]
    assert frame[S.ANNOTATOR].tolist() == ["7", "bo@x.org", "7", "8"]
    assert frame[S.GRADE].tolist()[:3] == ["2", "3", "1"] and frame[S.GRADE].isna().iloc[3]
    assert frame["cancelled"].tolist() == [False, False, True, False]
    result = ingest(frame, pool, pool_id="p1", guideline="g1")
    assert result.quarantine["reason"].tolist() == [CANCELLED_ANNOTATION, MISSING_GRADE]
    assert result.quarantine["row"].tolist() == ["task 1 annotation 0", "task 1 annotation 1"]
    assert result.accepted[S.GRADE].tolist() == [2, 3]
    assert (result.accepted[S.JUDGED_AT] == pd.Timestamp("2025-03-01 10:00", tz="UTC")).all()


# --- ingestion ----------------------------------------------------------------------------


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
    assert list(result.accepted.columns) == list(RAW_COLUMNS)
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


# --- agreement ----------------------------------------------------------------------------

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


# --- adjudication -------------------------------------------------------------------------

SPLITS = [("q1", "d1", (0, 1, 3)),  # spread 3: queued; median 1
          ("q1", "d2", (1, 2)),  # lower median 1; majority tie
          ("q2", "d3", (2, 2, 3)),  # both methods 2
          ("q2", "d4", (3,))]  # one judge


def split_judgments():
    rows = [(q, d, f"j{k}", g) for q, d, grades in SPLITS for k, g in enumerate(grades)]
    return judgments(rows).assign(blind_id=lambda f: "b-" + f[S.DOC_ID])


@pytest.mark.parametrize("method,grades,queued", [
    ("median", [1, 1, 2, 3], {"d1": SPREAD}),
    ("majority", [0, 1, 2, 3], {"d1": f"{TIE}; {SPREAD}", "d2": TIE}),
])
def test_adjudication_methods_and_queue(method, grades, queued):
    result = adjudicate(split_judgments(), method=method, pool_id="p1", guideline="g1")
    assert list(result.qrels.columns) == list(QRELS_CONTRACT)
    assert result.qrels[S.GRADE].tolist() == grades
    assert result.qrels["n_judges"].tolist() == [3, 2, 3, 1]
    assert list(result.queue.columns) == list(QUEUE_COLUMNS)
    assert dict(zip(result.queue[S.DOC_ID], result.queue["reason"], strict=True)) == queued
    assert result.queue["needs_adjudication"].all()
    assert result.queue["grades"].iloc[0] == [0, 1, 3]
    assert not result.qrels["adjudicated"].any()


def test_adjudicator_overrides_and_is_flagged():
    adjudicator = pd.DataFrame({"blind_id": ["b-d1", "b-d3"], S.GRADE: [3, 0]})
    result = adjudicate(split_judgments(), adjudicator=adjudicator, pool_id="p1",
                        guideline="g1")
    qrels = result.qrels.set_index(S.DOC_ID)
    assert qrels[S.GRADE].tolist() == [3, 1, 0, 3]
    assert qrels["adjudicated"].tolist() == [True, False, True, False]
    assert qrels["agreement"].tolist() == pytest.approx([1 / 3, 0.5, 0.0, 1.0])
    assert result.queue["needs_adjudication"].tolist() == [False]  # d1 decided
    with pytest.raises(InputError, match="pair not among the judgments"):
        adjudicate(split_judgments(), adjudicator=pd.DataFrame({"blind_id": ["zz"],
                                                                 S.GRADE: [1]}),
                   pool_id="p1", guideline="g1")


def test_unknown_method_is_an_input_error():
    with pytest.raises(InputError, match="unknown adjudication method 'mean'"):
        adjudicate(split_judgments(), method="mean", pool_id="p1", guideline="g1")


# --- simulated judges ---------------------------------------------------------------------


def test_simulation_is_seeded_and_judges_differ_by_bias(pool, truth):
    big = pd.concat([pool.assign(blind_id=pool["blind_id"] + f"-{k}", doc_id=pool[S.DOC_ID]
                                 + f"-{k}") for k in range(25)], ignore_index=True)
    truth = big[[S.QUERY_ID, S.DOC_ID]].assign(**{S.GRADE: 1})  # no clipping at 1 ± 0.3
    rows = simulate(big, truth, seed=5, noise=0.3, bias=(0.0, 0.8, -0.8))
    pd.testing.assert_frame_equal(rows, simulate(big, truth, seed=5, noise=0.3,
                                                 bias=(0.0, 0.8, -0.8)))
    assert not rows.equals(simulate(big, truth, seed=6, noise=0.3, bias=(0.0, 0.8, -0.8)))
    means = rows.groupby(S.ANNOTATOR)[S.GRADE].mean()
    assert means["sim-judge-2"] > means["sim-judge-1"] > means["sim-judge-3"]
    assert rows[S.GRADE].between(0, 3).all()


def test_partial_coverage_leaves_no_pair_unjudged(pool, truth):
    rows = simulate(pool, truth, judges=4, coverage=0.3, seed=0)
    assert set(rows["blind_id"]) == set(pool["blind_id"])
    shares = rows.groupby(S.ANNOTATOR).size() / len(pool)
    assert len(shares) == 4 and (shares < 0.6).all()
    assert len(rows) < 0.6 * 4 * len(pool)


def test_all_pairs_of_judges_in_confusion_counts(pool, truth):
    rows = simulate(pool, truth, judges=3)
    report = agreement(ingest(rows, pool, pool_id="p1", guideline="g").accepted)
    assert np.array(report["confusion"]["counts"]).sum() == 2 * N_PAIRS * len(
        list(combinations(range(3), 2)))


def test_a_pairs_simulated_grades_do_not_depend_on_the_rest_of_the_pool():
    from releval.simulated_judges import simulate

    pool = pd.DataFrame({"pool_id": "P", "query_id": [f"q{i}" for i in range(40)],
                         "doc_id": "d", "blind_id": [f"B{i}" for i in range(40)]})
    truth = pd.DataFrame({"query_id": pool.query_id, "doc_id": "d", "grade": 2})
    whole = simulate(pool, truth, seed=4)
    part = simulate(pool.iloc[::-1].iloc[:15], truth, seed=4)
    key = ["blind_id", "annotator"]
    merged = part.merge(whole, on=key, suffixes=("_part", "_whole"))
    assert len(merged) == len(part) and (merged.grade_part == merged.grade_whole).all()
