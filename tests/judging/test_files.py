import json

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.judging.files import READ_COLUMNS, read_judges_files, read_judgments
from releval.judging.ingest import CANCELLED_ANNOTATION, MISSING_GRADE, ingest

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


def test_label_studio_hard_negative_choice_is_read(tmp_path, pool):
    def annotation(mark):
        result = [{"from_name": "grade", "to_name": "text", "type": "choices",
                   "value": {"choices": ["0"]}}]
        if mark:
            result.append({"from_name": "hard_negative", "to_name": "text", "type": "choices",
                           "value": {"choices": [mark]}})
        return {"completed_by": 7, "result": result}

    tasks = [{"data": {"blind_id": f"b00{i}"}, "annotations": [annotation(mark)]}
             for i, mark in enumerate(["yes", "no", None])]
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    frame = read_judgments(tmp_path / "export.json")
    assert frame[S.HARD_NEGATIVE].tolist()[:2] == ["yes", "no"]
    assert frame[S.HARD_NEGATIVE].isna().iloc[2]  # no choice: missing
    accepted = ingest(frame, pool, pool_id="p1", guideline="g1").accepted
    assert accepted[S.HARD_NEGATIVE].tolist() == [True, False, False]


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


def test_a_folder_of_judges_files_is_read_in_name_order(tmp_path):
    (tmp_path / "b.csv").write_text(CSV)
    label_studio(tmp_path)  # export.json
    (tmp_path / "notes.txt").write_text("not a judges' file")
    frame = read_judges_files(tmp_path)
    assert frame["source"].map(lambda s: s.rsplit("/", 1)[-1]).tolist() == [
        "b.csv", "b.csv", "export.json", "export.json", "export.json", "export.json"]
    assert frame[S.GRADE].tolist()[:4] == ["2", "abc", "2", "3"]


def test_a_folder_without_judges_files_is_an_input_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a judges' file")
    for folder in (tmp_path, tmp_path / "absent"):
        with pytest.raises(InputError, match="no judges' files"):
            read_judges_files(folder)
