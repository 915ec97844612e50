import shutil
from pathlib import Path

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.adapters import read_beir, read_tables
from releval.demo import generator as demo_data
from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import pin
from stages.prepare import Inputs, run

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def shared(name: str) -> Path:
    folder = DATA / name
    if not (folder / "corpus.jsonl").is_file():
        pytest.fail(f"shared test data missing: expected the BEIR folder {folder} "
                    "(see ../shared/data/README.md beside the checkout)")
    return folder


@pytest.fixture(scope="module")
def cacm():
    return read_beir(shared("cacm"))


@pytest.fixture(scope="module")
def cranfield():
    return read_beir(shared("cranfield"))


def write_beir(folder: Path, corpus: str, queries: str, qrels: dict[str, str]) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus)
    (folder / "queries.jsonl").write_text(queries)
    for name, text in qrels.items():
        (folder / "qrels" / name).write_text(text)
    return folder


CORPUS = ('{"_id": "d1", "title": "A", "text": "x", "published_at": "2020-05-01"}\n'
          '{"_id": "d2", "text": "y"}\n')
QUERIES = '{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n{"_id": 3, "text": "c"}\n'
HEADER = "query-id\tcorpus-id\tscore\n"


def test_cacm_counts_dates_and_defaults(cacm):
    docs, queries, qrels = cacm.documents, cacm.queries, cacm.qrels
    assert (len(docs), len(queries), len(qrels)) == (3204, 64, 796)
    assert tuple(docs.columns) == S.DOCUMENT_COLUMNS and tuple(queries.columns) == S.QUERY_COLUMNS
    assert tuple(qrels.columns) == S.QRELS_COLUMNS and qrels[S.GRADE].dtype == "int64"
    assert set(qrels[S.GRADE]) == {1} and qrels[S.QUERY_ID].nunique() == 52
    assert str(docs[S.PUBLISHED_AT].dt.tz) == "UTC"
    assert docs[S.PUBLISHED_AT].min() == pd.Timestamp("1958-01-01", tz="UTC")
    assert docs[S.PUBLISHED_AT].max() == pd.Timestamp("1979-12-01", tz="UTC")
    assert docs.set_index(S.DOC_ID).loc["1", S.PUBLISHED_AT] == pd.Timestamp("1958-12-01",
                                                                            tz="UTC")
    assert (queries[S.ISSUED_AT] == docs[S.PUBLISHED_AT].max()).all()
    assert not cacm.has_query_times
    assert (docs[S.SOURCE_ID] == docs[S.DOC_ID]).all() and docs[S.DELETED_AT].isna().all()
    assert set(docs[S.STATUS]) == {"published"} and docs[S.ACL].map(len).eq(0).all()
    assert set(queries[S.ROLE]) == {"employee"} and (queries[S.WEIGHT] == 1.0).all()
    assert queries[S.GROUPS].map(len).eq(0).all() and queries[S.TAGS].map(len).eq(0).all()
    for column in (docs[S.DOC_ID], queries[S.QUERY_ID], qrels[S.QUERY_ID], qrels[S.DOC_ID]):
        assert pd.api.types.is_string_dtype(column)
    assert qrels[S.DOC_ID].isin(docs[S.DOC_ID]).all()
    assert qrels[S.QUERY_ID].isin(queries[S.QUERY_ID]).all()


def test_cacm_a_test_collection_puts_every_query_in_test(cacm):
    assert tuple(cacm.splits.columns) == (S.QUERY_ID, S.SPLIT)
    assert set(cacm.splits[S.SPLIT]) == {"test"}
    assert cacm.splits[S.QUERY_ID].tolist() == cacm.queries[S.QUERY_ID].tolist()  # all 64
    assert cacm.qrels[S.QUERY_ID].nunique() == 52  # 12 topics have no judgment


def test_cranfield_counts_and_grades(cranfield):
    assert (len(cranfield.documents), len(cranfield.queries), len(cranfield.qrels)) == (
        1400, 225, 1837)
    grades = cranfield.qrels[S.GRADE]
    assert grades.max() == 4 and grades.min() == 0
    assert grades.value_counts().to_dict() == {4: 128, 3: 387, 2: 734, 1: 363, 0: 225}
    undated = cranfield.documents[S.PUBLISHED_AT]
    assert (undated == pd.Timestamp("1970-01-01", tz="UTC")).all()
    assert len(cranfield.splits) == 225


def test_splits_follow_qrels_file_names(tmp_path):
    data = read_beir(write_beir(tmp_path, CORPUS, QUERIES, {
        "train.tsv": HEADER + "q1\td1\t1\n", "dev.tsv": HEADER + "q2\td2\t0\n",
        "test.tsv": HEADER + "3\td1\t2\n\n"}))
    assert dict(zip(data.splits[S.QUERY_ID], data.splits[S.SPLIT], strict=True)) == {
        "q1": "train", "q2": "validation", "3": "test"}
    assert data.queries[S.QUERY_ID].tolist() == ["q1", "q2", "3"]
    assert data.documents[S.TITLE].tolist() == ["A", ""]
    assert data.documents[S.PUBLISHED_AT].tolist() == [pd.Timestamp("2020-05-01", tz="UTC"),
                                                       pd.Timestamp(0, tz="UTC")]
    assert (data.queries[S.ISSUED_AT] == pd.Timestamp("2020-05-01", tz="UTC")).all()


def test_malformed_json_line_names_file_and_line(tmp_path):
    folder = tmp_path / "cacm"
    shutil.copytree(shared("cacm"), folder, ignore=shutil.ignore_patterns("original"))
    lines = (folder / "corpus.jsonl").read_text().splitlines(keepends=True)
    lines[2] = lines[2][:40] + "\n"
    (folder / "corpus.jsonl").write_text("".join(lines))
    with pytest.raises(InputError, match=r"corpus\.jsonl:line 3: invalid JSON") as error:
        read_beir(folder)
    assert error.value.where == "line 3"


@pytest.mark.parametrize("corpus,queries,qrels,message", [
    (CORPUS, QUERIES, HEADER + "q1\td1\t1\nq1\td2\thigh\n",
     r"test\.tsv:line 3: score must be an integer, got 'high'"),
    (CORPUS, QUERIES, HEADER + "q1\td1\t1.5\n", r"test\.tsv:line 2: score must be an integer"),
    (CORPUS, QUERIES, HEADER + "q1\td1\n", r"test\.tsv:line 2: expected 3 tab-separated"),
    (CORPUS, QUERIES, "q1\td1\t1\n", r"test\.tsv:line 1: expected the header"),
    (CORPUS, QUERIES, HEADER + "q1\td1\t1\nq1\td1\t2\n", r"line 3: duplicate judgment"),
    (CORPUS, '{"text": "no id"}\n', HEADER, r"queries\.jsonl:line 1: expected a JSON object"),
    (CORPUS + '{"_id": "d1"}\n', QUERIES, HEADER, r"corpus\.jsonl:line 3: duplicate _id 'd1'"),
    ('{"_id": "d1", "published_at": "May 2020"}\n', QUERIES, HEADER,
     r"corpus\.jsonl:line 1: published_at must be an ISO date"),
])
def test_bad_beir_input_names_file_line_and_rule(tmp_path, corpus, queries, qrels, message):
    with pytest.raises(InputError, match=message):
        read_beir(write_beir(tmp_path, corpus, queries, {"test.tsv": qrels}))


def test_bad_beir_splits_are_rejected(tmp_path):
    with pytest.raises(InputError, match="unknown qrels split 'extra'"):
        read_beir(write_beir(tmp_path / "a", CORPUS, QUERIES, {"extra.tsv": HEADER}))
    with pytest.raises(InputError, match="query 'q1' is judged in more than one split"):
        read_beir(write_beir(tmp_path / "b", CORPUS, QUERIES, {
            "train.tsv": HEADER + "q1\td1\t1\n", "test.tsv": HEADER + "q1\td2\t1\n"}))
    with pytest.raises(InputError, match="corpus.jsonl: file not found"):
        read_beir(tmp_path / "missing")


@pytest.fixture(scope="module")
def demo():
    return demo_data.generate(n_docs=600, n_queries=120, seed=5)


def write_tables(folder: Path, demo, judgments: bool = True) -> Path:
    folder.mkdir(exist_ok=True)
    demo.documents.to_parquet(folder / "documents.parquet")
    demo.queries.to_parquet(folder / "queries.parquet")
    if judgments:
        demo.ground_truth.to_parquet(folder / "judgments.parquet")
    return folder


def test_tables_round_trip_the_demo_data(tmp_path, demo):
    data = read_tables(write_tables(tmp_path, demo))
    pd.testing.assert_frame_equal(data.documents, demo.documents)
    pd.testing.assert_frame_equal(data.queries, demo.queries)
    pd.testing.assert_frame_equal(data.qrels, demo.ground_truth)
    assert data.has_query_times and data.splits.empty
    assert tuple(data.splits.columns) == (S.QUERY_ID, S.SPLIT)


def test_tables_without_judgments_have_empty_qrels(tmp_path, demo):
    data = read_tables(write_tables(tmp_path, demo, judgments=False))
    assert data.qrels.empty and tuple(data.qrels.columns) == S.QRELS_COLUMNS


def test_tables_missing_columns_name_file_and_columns(tmp_path, demo):
    folder = write_tables(tmp_path, demo)
    demo.queries.drop(columns=[S.ROLE, S.WEIGHT]).to_parquet(folder / "queries.parquet")
    with pytest.raises(InputError, match=r"queries\.parquet: missing column\(s\) role, weight"):
        read_tables(folder)


@pytest.mark.parametrize("column,value,rule", [
    (S.DOC_ID, None, "doc_id is missing"),
    (S.PUBLISHED_AT, "last spring", "published_at must be a timestamp, got 'last spring'"),
])
def test_unreadable_document_rows_name_file_row_and_rule(tmp_path, demo, column, value, rule):
    folder = write_tables(tmp_path, demo)
    documents = demo.documents.astype({column: "str"})
    documents.loc[7, column] = value
    documents.to_parquet(folder / "documents.parquet")
    with pytest.raises(InputError, match=rf"documents\.parquet:row 8: {rule}"):
        read_tables(folder)


def test_row_invariants_are_left_to_validation(tmp_path, demo):
    folder = write_tables(tmp_path, demo)
    documents = demo.documents
    pd.concat([documents, documents.iloc[[3]]]).to_parquet(folder / "documents.parquet")
    assert read_tables(folder).documents[S.DOC_ID].duplicated().sum() == 1


def test_bad_judgment_grade_names_row(tmp_path, demo):
    folder = write_tables(tmp_path, demo)
    judgments = demo.ground_truth.astype({S.GRADE: float})
    judgments.loc[4, S.GRADE] = 2.5
    judgments.to_parquet(folder / "judgments.parquet")
    with pytest.raises(InputError, match=r"judgments\.parquet:row 5: grade must be an integer"):
        read_tables(folder)


def assert_empty_must_not_return(frame: pd.DataFrame) -> None:
    assert frame.empty and tuple(frame.columns) == S.MUST_NOT_RETURN_COLUMNS
    assert all(pd.api.types.is_string_dtype(frame[c]) for c in S.MUST_NOT_RETURN_COLUMNS)


def test_beir_has_no_must_not_return(tmp_path):
    data = read_beir(write_beir(tmp_path, CORPUS, QUERIES, {"test.tsv": HEADER + "q1\td1\t1\n"}))
    assert_empty_must_not_return(data.must_not_return)


def test_tables_read_must_not_return_when_present(tmp_path, demo):
    folder = write_tables(tmp_path, demo)
    assert_empty_must_not_return(read_tables(folder).must_not_return)
    banned = pd.DataFrame({S.QUERY_ID: ["q000000", "q000001"], S.DOC_ID: ["d1", "d2"],
                           S.REASON: ["restricted answer: staff only", "legal hold"],
                           "note": ["extra columns are dropped", ""]})
    banned.to_parquet(folder / "must_not_return.parquet")
    got = read_tables(folder).must_not_return
    assert tuple(got.columns) == S.MUST_NOT_RETURN_COLUMNS
    assert got.values.tolist() == banned[list(S.MUST_NOT_RETURN_COLUMNS)].values.tolist()
    assert all(pd.api.types.is_string_dtype(got[c]) for c in S.MUST_NOT_RETURN_COLUMNS)


@pytest.mark.parametrize("rows, columns, rule", [
    ([("q1", "d1")], [S.QUERY_ID, S.DOC_ID], r"must_not_return\.parquet: missing column\(s\) "
                                             "reason"),
    ([("q1", "d1", "x"), ("q1", None, "x")], list(S.MUST_NOT_RETURN_COLUMNS),
     r"must_not_return\.parquet:row 2: doc_id is missing"),
    ([("q1", "d1", "x"), ("q2", "d1", "x"), ("q1", "d1", "y")], list(S.MUST_NOT_RETURN_COLUMNS),
     r"must_not_return\.parquet:row 3: duplicate pair query 'q1', document 'd1' \(first at row "
     r"1\)"),
])
def test_bad_must_not_return_names_file_row_and_rule(tmp_path, demo, rows, columns, rule):
    folder = write_tables(tmp_path, demo)
    pd.DataFrame(rows, columns=columns).to_parquet(folder / "must_not_return.parquet")
    with pytest.raises(InputError, match=rule):
        read_tables(folder)


def test_prepare_writes_must_not_return_for_every_source(tmp_path, demo):
    def prepare(p: Params):
        pin(p, tmp_path / "input")
        return run(p, Inputs(tmp_path / "input"))

    folder = write_tables(tmp_path / "tables", demo)
    tables = Params.model_validate({"prepare": {"source": "tables", "path": str(folder)}})
    assert_empty_must_not_return(prepare(tables).must_not_return)
    demo.must_not_return.to_parquet(folder / "must_not_return.parquet")
    pd.testing.assert_frame_equal(prepare(tables).must_not_return, demo.must_not_return)
    beir = write_beir(tmp_path / "beir", CORPUS, QUERIES, {"test.tsv": HEADER + "q1\td1\t1\n"})
    prepared = prepare(Params.model_validate({"prepare": {"source": "beir", "path": str(beir)}}))
    assert_empty_must_not_return(prepared.must_not_return)
    small = Params.model_validate({"prepare": {"n_docs": 300, "n_queries": 60}})
    generated = prepare(small).must_not_return
    assert len(generated) and demo_data.GUEST_RUNBOOK_QUERY_ID in set(generated[S.QUERY_ID])


def test_judgments_that_point_nowhere_are_counted_and_unknown_documents_refused(tmp_path):
    beir = write_beir(tmp_path / "beir", CORPUS, QUERIES,
                      {"test.tsv": HEADER + "q1\td1\t1\nq1\td7\t1\nq9\td2\t1\n"})

    def prepare(**extra):
        p = Params.model_validate({"prepare": {"source": "beir", "path": str(beir), **extra}})
        pin(p, tmp_path / "input")
        return run(p, Inputs(tmp_path / "input"))

    with pytest.raises(InputError) as info:
        prepare()
    assert "1 of 3 judgments (33.3%) name documents not in the corpus (first: q1/d7)" in str(
        info.value) and "prepare.max_unknown_docs=0" in str(info.value)
    prepared = prepare(max_unknown_docs=0.5)
    assert prepared.source["qrels_pointing_nowhere"] == {
        "judgments": 3, "unknown_documents": 1, "unknown_queries": 1,
        "first_unknown_document": "q1/d7", "first_unknown_query": "q9/d2"}


def test_an_empty_corpus_or_a_folder_in_its_place_is_named(tmp_path):
    beir = write_beir(tmp_path / "beir", "", QUERIES, {"test.tsv": HEADER + "q1\td1\t1\n"})
    with pytest.raises(InputError, match=r"corpus.jsonl: no documents: the corpus is empty"):
        read_beir(beir)
    (beir / "corpus.jsonl").unlink()
    (beir / "corpus.jsonl").mkdir()
    with pytest.raises(InputError, match=r"corpus.jsonl: is a folder, expected a file"):
        read_beir(beir)
