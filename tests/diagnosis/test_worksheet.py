import csv
import hashlib

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.diagnosis.worksheet import (
    LAYERS,
    NO_RESULTS,
    NOT_IN_DOCUMENTS,
    REPEATED_WORKSHEET_ID,
    TOO_MANY_FIELDS,
    UNKNOWN_LAYER,
    UNKNOWN_WORKSHEET_ID,
    VERDICT_COLUMNS,
    WORKSHEET_COLUMNS,
    apply,
    build,
    ingest,
    markdown,
    write,
)
from releval.errors import InputError

# Four failures, given out of order: after sorting (system, query_id, kind, doc_id) they are
# C (base q2 dX), A (cand q1 d1), B (cand q1 d9, safety), D (cand q2 d4).
FAILURES = pd.DataFrame({
    S.SYSTEM: ["cand", "cand", "base", "cand"],
    S.QUERY_ID: ["q1", "q1", "q2", "q2"],
    S.DOC_ID: ["d1", "d9", "dX", "d4"],
    S.GRADE: [2, None, 1, 3],
    "kind": ["relevance", "safety", "relevance", "relevance"],
    "layer": ["ranking", "filter", "corpus", "representation"],
    "evidence": ['{"rank": 12}', '{"reason": "acl", "rank": 2}', '{"in_corpus": false}',
                 '{"rank": null}'],
    "unjudged_in_top_k": [1, 1, 0, 0],
    S.RANK: [12, 2, None, None],
})
ORDER = [("base", "q2", "dX"), ("cand", "q1", "d1"), ("cand", "q1", "d9"), ("cand", "q2", "d4")]


def _id(system, query_id, doc_id, kind):
    return hashlib.sha1(f"{system}|{query_id}|{doc_id}|{kind}".encode()).hexdigest()[:12]


ID_A, ID_B = _id("cand", "q1", "d1", "relevance"), _id("cand", "q1", "d9", "safety")
ID_C, ID_D = _id("base", "q2", "dX", "relevance"), _id("cand", "q2", "d4", "relevance")


@pytest.fixture
def inputs():
    runs = {
        # cand has ranks; d7 at rank 4 is outside k = 3
        "cand": pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q1", "q1", "q2"],
                              S.DOC_ID: ["d7", "d2", "d9", "d5", "d6"],
                              S.RANK: [4, 1, 2, 3, 1],
                              S.SCORE: [0.1, 0.9, 0.8, 0.5, 0.7]}),
        # base has only scores: ranked by score descending
        "base": pd.DataFrame({S.QUERY_ID: ["q2", "q2"], S.DOC_ID: ["d6", "d4"],
                              S.SCORE: [0.5, 0.9]}),
    }
    qrels = pd.DataFrame({S.QUERY_ID: ["q1", "q1", "q1", "q2", "q2", "q2"],
                          S.DOC_ID: ["d1", "d2", "d5", "d4", "dX", "d6"],
                          S.GRADE: [2, 0, 3, 3, 1, 0]})
    queries = pd.DataFrame({S.QUERY_ID: ["q1", "q2"],
                            S.TEXT: ["reset password café", "printer offline"]})
    documents = pd.DataFrame({
        S.DOC_ID: ["d1", "d2", "d4", "d9"],
        S.TITLE: ["Reset your password", "Login help", "Printer | troubleshooting", "HR memo"],
        S.TEXT: ["  How to\n reset\tyour   password in three steps. ", "Use SSO.",
                 "Check the cable.", "Salary bands"]})
    return runs, qrels, queries, documents


@pytest.fixture
def sheet(inputs):
    return build(FAILURES, *inputs, k=3, snippet_chars=20)


def _edit(path, layers, notes=None):
    """Rewrite the written worksheet with reviewer_layer (and note) set by worksheet_id."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["reviewer_layer"] = layers.get(row["worksheet_id"], "")
        row["reviewer_note"] = (notes or {}).get(row["worksheet_id"], "")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(WORKSHEET_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)


# --- build --------------------------------------------------------------------------------


def test_build_one_row_per_failure_sorted_with_stable_ids(sheet):
    assert list(sheet.columns) == list(WORKSHEET_COLUMNS)
    assert list(zip(sheet[S.SYSTEM], sheet[S.QUERY_ID], sheet[S.DOC_ID], strict=True)) == ORDER
    assert sheet["worksheet_id"].tolist() == [ID_C, ID_A, ID_B, ID_D]
    assert sheet["automatic_layer"].tolist() == ["corpus", "ranking", "filter", "representation"]
    assert sheet["evidence"].tolist()[1] == '{"rank": 12}'
    assert sheet[S.GRADE].tolist()[:2] == [1, 2] and pd.isna(sheet[S.GRADE].iloc[2])
    assert (sheet["reviewer_layer"] == "").all() and (sheet["reviewer_note"] == "").all()


def test_build_does_not_depend_on_input_order(inputs, sheet):
    shuffled = build(FAILURES.iloc[[3, 1, 0, 2]], *inputs, k=3, snippet_chars=20)
    pd.testing.assert_frame_equal(shuffled, sheet)


def test_top_k_shows_grades_and_unjudged_and_stops_at_k(sheet):
    assert sheet["top_k"].tolist() == [
        "1. d4 [grade 3]; 2. d6 [grade 0]",  # base q2, ranked by score
        "1. d2 [grade 0]; 2. d9 [unjudged]; 3. d5 [grade 3]",  # d7 at rank 4 left out
        "1. d2 [grade 0]; 2. d9 [unjudged]; 3. d5 [grade 3]",
        "1. d6 [grade 0]",
    ]


def test_top_k_without_results_for_the_system(inputs):
    runs, qrels, queries, documents = inputs
    sheet = build(FAILURES, {"cand": runs["cand"]}, qrels, queries, documents, k=3)
    assert sheet["top_k"].tolist()[0] == NO_RESULTS
    assert sheet["top_k"].tolist()[3] == "1. d6 [grade 0]"


def test_query_text_title_snippet_and_unknown_document(sheet):
    assert sheet["query_text"].tolist() == ["printer offline", "reset password café",
                                            "reset password café", "printer offline"]
    assert sheet["expected_title"].tolist() == ["", "Reset your password", "HR memo",
                                                "Printer | troubleshooting"]
    assert sheet["expected_snippet"].tolist() == [NOT_IN_DOCUMENTS, "How to reset your pa",
                                                  "Salary bands", "Check the cable."]


@pytest.mark.parametrize("change, rule", [
    (lambda f: pd.concat([f, f.iloc[[0]]]), "repeated (system, query_id, doc_id, kind)"),
    (lambda f: f.assign(layer=["ranking", "filter", "magic", "corpus"]), "layer must be one of"),
    (lambda f: f.assign(kind="other"), "kind must be one of"),
    (lambda f: f.drop(columns="evidence"), "missing column(s) evidence"),
])
def test_build_rejects_bad_failures(inputs, change, rule):
    with pytest.raises(InputError, match=r"^failures.*") as error:
        build(change(FAILURES), *inputs)
    assert rule in str(error.value)


def test_build_rejects_repeated_qrels_pair(inputs):
    runs, qrels, queries, documents = inputs
    with pytest.raises(InputError, match="one grade per"):
        build(FAILURES, runs, pd.concat([qrels, qrels.iloc[[0]]]), queries, documents)


# --- write and markdown -------------------------------------------------------------------


def test_write_is_utf8_csv_with_header(sheet, tmp_path):
    path = write(sheet, tmp_path / "out" / "worksheet.csv")
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == ",".join(WORKSHEET_COLUMNS)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["worksheet_id"] for r in rows] == [ID_C, ID_A, ID_B, ID_D]
    assert rows[1]["query_text"] == "reset password café"
    assert rows[2]["grade"] == "" and rows[1]["grade"] == "2"
    assert rows[2]["evidence"] == '{"reason": "acl", "rank": 2}'


def test_markdown_table_limit_and_clipping(sheet):
    text = markdown(sheet, limit=2, top_k_chars=20)
    lines = text.splitlines()
    assert lines[0] == "4 failure(s) to inspect; the first 2 below."
    assert lines[2] == "| system | query | expected | automatic layer | top k |"
    table = [line for line in lines[4:] if line.startswith("| ")]
    assert table == [
        "| base | q2: printer offline | dX (relevance, grade 1) | corpus "
        "| 1. d4 [grade 3] … |",
        "| cand | q1: reset password café | d1 Reset your password (relevance, grade 2) "
        "| ranking | 1. d2 [grade 0] … |",
    ]
    assert lines[-1] == "2 more row(s) in the worksheet CSV."


def test_markdown_clips_at_a_word_or_a_whole_top_k_item(sheet):
    words = "how do I reset the password of a shared printer account after a lockout"
    long = sheet.assign(query_text=words, top_k="; ".join(
        f"{r}. doc-{r} [grade 1]" for r in range(1, 11)))
    rows = [line.split(" | ") for line in markdown(long, limit=1, top_k_chars=50).splitlines()
            if line.startswith("| ") and "top k" not in line]
    query, top = rows[0][1], rows[0][-1].removesuffix(" |")
    assert query.endswith(" …") and len(query) <= 60
    assert words.startswith(query.removesuffix(" …").split(": ", 1)[1] + " ")  # whole words
    assert top == "1. doc-1 [grade 1]; 2. doc-2 [grade 1] …"  # whole items, ≤ 50
    one_word = sheet.assign(top_k="x" * 30)
    assert "| " + "x" * 19 + "… |" in markdown(one_word, limit=1, top_k_chars=20)


def test_markdown_escapes_pipes_and_handles_empty(sheet):
    assert r"d4 Printer \| troubleshooting (relevance, grade 3)" in markdown(sheet)
    assert "more row(s)" not in markdown(sheet)
    assert markdown(sheet.iloc[:0]) == "No failures to inspect.\n"


# --- ingest and apply ---------------------------------------------------------------------


def test_round_trip_applies_reviewer_overrides(sheet, tmp_path):
    path = write(sheet, tmp_path / "worksheet.csv")
    _edit(path, {ID_A: " Fusion ", ID_B: "filter", ID_C: "corpus"}, {ID_A: "weights off"})
    review = ingest(path, sheet)

    assert review.counts == {"rows_in": 4, "reviewed": 3, "unreviewed": 1, "quarantined": 0,
                             "by_reason": dict.fromkeys(
                                 (TOO_MANY_FIELDS, UNKNOWN_WORKSHEET_ID, REPEATED_WORKSHEET_ID,
                                  UNKNOWN_LAYER), 0),
                             "not_in_file": 0}
    assert review.disagreement_rate == pytest.approx(1 / 3)
    assert list(review.verdicts.columns) == list(VERDICT_COLUMNS)
    assert review.verdicts.to_dict("records") == [
        {"worksheet_id": ID_C, S.SYSTEM: "base", S.QUERY_ID: "q2", S.DOC_ID: "dX",
         "automatic_layer": "corpus", "reviewer_layer": "corpus", "reviewer_note": "",
         "agrees": True},
        {"worksheet_id": ID_A, S.SYSTEM: "cand", S.QUERY_ID: "q1", S.DOC_ID: "d1",
         "automatic_layer": "ranking", "reviewer_layer": "fusion",
         "reviewer_note": "weights off", "agrees": False},
        {"worksheet_id": ID_B, S.SYSTEM: "cand", S.QUERY_ID: "q1", S.DOC_ID: "d9",
         "automatic_layer": "filter", "reviewer_layer": "filter", "reviewer_note": "",
         "agrees": True},
    ]
    assert review.quarantine.empty

    applied = apply(FAILURES, review)
    assert applied.index.equals(FAILURES.index)
    assert applied["layer"].tolist() == ["fusion", "filter", "corpus", "representation"]
    assert applied["automatic_layer"].tolist() == FAILURES["layer"].tolist()
    assert applied["layer_source"].tolist() == ["reviewer", "reviewer", "reviewer", "automatic"]
    assert applied["evidence"].tolist() == FAILURES["evidence"].tolist()


def test_nothing_reviewed_has_no_disagreement_rate(sheet, tmp_path):
    review = ingest(write(sheet, tmp_path / "worksheet.csv"), sheet)
    assert review.disagreement_rate is None
    assert review.counts["unreviewed"] == 4 and review.counts["reviewed"] == 0
    assert apply(FAILURES, review)["layer"].tolist() == FAILURES["layer"].tolist()


def _reviewer_file(path):
    path.write_text(
        "worksheet_id,reviewer_layer,reviewer_note\n"
        f'{ID_A},ranking,"spans\ntwo lines"\n'  # lines 2-3
        "deadbeef0000,ranking,\n"  # line 4
        f"{ID_B},vibes,\n"  # line 5
        f"{ID_A},fusion,second opinion\n"  # line 6
        "\n"  # line 7: blank, skipped
        f"{ID_C},,\n"  # line 8
        f"{ID_D},ranking,note,extra\n",  # line 9
        encoding="utf-8")
    return path


def test_each_quarantine_rule_with_line_reason_and_reconciling_counts(sheet, tmp_path):
    review = ingest(_reviewer_file(tmp_path / "review.csv"), sheet)

    assert review.quarantine[["line", "worksheet_id", "reviewer_layer", "reason"]].to_dict(
        "records") == [
        {"line": 4, "worksheet_id": "deadbeef0000", "reviewer_layer": "ranking",
         "reason": UNKNOWN_WORKSHEET_ID},
        {"line": 5, "worksheet_id": ID_B, "reviewer_layer": "vibes", "reason": UNKNOWN_LAYER},
        {"line": 6, "worksheet_id": ID_A, "reviewer_layer": "fusion",
         "reason": REPEATED_WORKSHEET_ID},
        {"line": 9, "worksheet_id": ID_D, "reviewer_layer": "ranking", "reason": TOO_MANY_FIELDS},
    ]
    counts = review.counts
    assert (counts["rows_in"], counts["reviewed"], counts["unreviewed"],
            counts["quarantined"]) == (6, 1, 1, 4)
    assert counts["rows_in"] == counts["reviewed"] + counts["unreviewed"] + counts["quarantined"]
    assert counts["by_reason"] == {TOO_MANY_FIELDS: 1, UNKNOWN_WORKSHEET_ID: 1,
                                   REPEATED_WORKSHEET_ID: 1, UNKNOWN_LAYER: 1}
    assert counts["not_in_file"] == 2  # B (quarantined) and D (quarantined)
    # the first row for ID_A stands, the repeat does not override it
    assert review.verdicts[["worksheet_id", "reviewer_layer", "reviewer_note", "agrees"]].to_dict(
        "records") == [{"worksheet_id": ID_A, "reviewer_layer": "ranking",
                        "reviewer_note": "spans\ntwo lines", "agrees": True}]
    assert review.disagreement_rate == 0.0


def test_missing_column_names_the_file_in_one_line(sheet, tmp_path):
    path = tmp_path / "review.csv"
    path.write_text(f"worksheet_id,reviewer_note\n{ID_A},hello\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        ingest(path, sheet)
    message = str(error.value)
    assert message.startswith(f"{path}: missing column(s) reviewer_layer")
    assert "\n" not in message


def test_missing_file_is_an_input_error(sheet, tmp_path):
    with pytest.raises(InputError, match="file not found"):
        ingest(tmp_path / "nope.csv", sheet)


def test_reingesting_and_reapplying_is_idempotent(sheet, tmp_path):
    path = _reviewer_file(tmp_path / "review.csv")
    first, second = ingest(path, sheet), ingest(path, sheet)
    pd.testing.assert_frame_equal(first.verdicts, second.verdicts)
    pd.testing.assert_frame_equal(first.quarantine, second.quarantine)
    assert first.counts == second.counts
    assert first.disagreement_rate == second.disagreement_rate

    path = write(sheet, tmp_path / "worksheet.csv")
    _edit(path, {ID_A: "fusion", ID_D: "exact_ann"})
    review = ingest(path, sheet)
    once = apply(FAILURES, review)
    pd.testing.assert_frame_equal(apply(once, review), once)
    assert once["layer"].tolist() == ["fusion", "filter", "corpus", "exact_ann"]
    assert once["automatic_layer"].tolist() == FAILURES["layer"].tolist()


def test_layers_registry():
    assert LAYERS == ("chunk", "corpus", "filter", "representation", "exact_ann", "fusion",
                      "qrels", "downstream", "ranking")
