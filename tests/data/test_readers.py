import pandas as pd
import pytest

from releval.data.readers import read_qrels, read_run
from releval.errors import InputError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_trec_run_drops_rank_and_keeps_tag_as_system(tmp_path):
    run = read_run(write(tmp_path, "run.txt", "q1 Q0 d1 7 2.5 sys\nq1 Q0 d2 3 1.5 sys\n"))
    assert list(run.columns) == ["query_id", "doc_id", "score", "system"]
    assert run.score.tolist() == [2.5, 1.5] and run.index.tolist() == [1, 2]


@pytest.mark.parametrize("text,rule", [
    ("q1 Q0 d1 1 2.5\n", "line 1: expected 6 fields"),
    ("q1 Q0 d1 1 2.5 s\nq1 Q0 d2 2 high s\n", "line 2: score must be a number, got 'high'"),
])
def test_bad_run_lines_name_file_line_and_rule(tmp_path, text, rule):
    with pytest.raises(InputError, match=rule) as exc:
        read_run(write(tmp_path, "run.txt", text))
    assert str(exc.value).startswith(str(tmp_path / "run.txt"))


def test_qrels_formats(tmp_path):
    trec = read_qrels(write(tmp_path, "q.txt", "1 0 d1 2\n1 0 d2 0\n"))
    beir = read_qrels(write(tmp_path, "q.tsv", "query-id\tcorpus-id\tscore\n1\td1\t2\n"))
    zeros = read_qrels(write(tmp_path, "z.tsv", "query-id\tcorpus-id\tscore\n007\t01\t1\n"))
    assert zeros.iloc[0][["query_id", "doc_id"]].tolist() == ["007", "01"]
    pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "grade": [2]}).to_parquet(
        tmp_path / "q.parquet")
    table = read_qrels(tmp_path / "q.parquet")
    for frame in (trec, beir, table):
        assert frame.iloc[0][["query_id", "doc_id", "grade"]].tolist() == ["1", "d1", 2]
    assert beir.index[0] == 2  # line 2 of the file (after the header)


def test_bad_qrels_grade_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="line 2: grade must be an integer, got '1.5'"):
        read_qrels(write(tmp_path, "q.txt", "1 0 d1 2\n1 0 d2 1.5\n"))
    with pytest.raises(InputError, match="file not found"):
        read_qrels(tmp_path / "nope.txt")


def test_trec_run_writer_round_trips_and_writes_empty_runs(tmp_path):
    from releval.data.readers import write_trec_run

    run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "a", "c"],
                        "score": [0.5, 2.0, 1.0], "system": "team"})
    write_trec_run(tmp_path / "run.txt", run)
    assert (tmp_path / "run.txt").read_text().splitlines()[0] == "q1 Q0 a 1 2.000000 team"
    back = read_run(tmp_path / "run.txt")
    assert back.doc_id.tolist() == ["a", "b", "c"] and back.system.unique().tolist() == ["team"]
    write_trec_run(tmp_path / "empty.txt", run.iloc[:0])
    assert (tmp_path / "empty.txt").read_text() == ""
