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


# ---- the fast TREC reader (releval.data.trec_fast) reads what the general one reads ----

RUNS = {
    "spaces": b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 NA 1 -0 sys\n",
    "tabs": b"q1\tQ0\td1\t1\t2.5\tsys\nq1\tQ0\td2\t2\t1e-3\tsys\n",
    "crlf, no last newline": b"q1 Q0 d1 1 2.5 s\r\nq1 Q0 d2 2 1.5 s",
    "bom and unicode": "\ufeffq1 Q0 dé 1 2.5 s\nq1 Q0 ü 2 inf s\n".encode(),
    "extra fields": b"q1 Q0 d1 1 2.5 s extra\nq1 Q0 d2 2 1.5 s\n",
    "runs of blanks": b"q1  Q0 d1 1 2.5 s\nq1\t Q0 d2 2 1.5 s\n",
    "blank line": b"q1 Q0 d1 1 2.5 s\n\nq1 Q0 d2 2 1.5 s\n",
    "quotes": b'q1 Q0 "d1" 1 2.5 s\n',
    "nan score": b"q1 Q0 d1 1 nan s\n",
    "bad score": b"q1 Q0 d1 1 2.5 s\nq1 Q0 d2 2 high s\n",
    "short line": b"q1 Q0 d1 1 2.5 s\nq1 Q0 d2 2 1.5\n",
    "empty field": b"q1 Q0 d1 1 2.5 s\n q1 Q0 d2 2 s\n",
    "rank not a number": b"q1 Q0 d1 x 2.5 s\n",
    "not utf-8": b"q1 Q0 d\xff 1 2.5 s\n",
    "nul": b"q1 Q0 d\x00 1 2.5 s\n",
    "lone carriage return": b"q1 Q0 d1 1 2.5 s\rq1 Q0 d2 2 1.5 s\n",
    "empty": b"",
    "many systems": b"q1 Q0 d1 1 2.5 a\nq1 Q0 d2 2 1.5 b\n",
}
QRELS = {
    "spaces": b"1 0 d1 2\n1 0 d2 0\n2 0 d1 -1\n",
    "tabs": b"1\t0\td1\t2\n",
    "float grade": b"1 0 d1 2.0\n",
    "bad grade": b"1 0 d1 2\n1 0 d2 x\n",
    "fractional grade": b"1 0 d1 1.5\n",
}


def _read_both(monkeypatch, path, reader):
    from releval.data import trec_fast

    out = []
    for fast in (True, False):
        with monkeypatch.context() as mp:
            if not fast:
                mp.setattr(trec_fast, "read", lambda *a, **k: None)
            try:
                out.append(reader(path))
            except InputError as exc:
                out.append(str(exc))
    return out


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert list(a.columns) == list(b.columns)
    assert a.index.tolist() == b.index.tolist() and a.attrs == b.attrs
    for c in a.columns:
        assert a[c].dtype == b[c].dtype, c
        assert a[c].tolist() == b[c].tolist() or (a[c].isna() == b[c].isna()).all(), c


@pytest.mark.parametrize("name", sorted(RUNS))
def test_fast_trec_run_reader_reads_what_the_general_one_reads(tmp_path, monkeypatch, name):
    path = tmp_path / "run.txt"
    path.write_bytes(RUNS[name])
    _same(*_read_both(monkeypatch, path, read_run))


@pytest.mark.parametrize("name", sorted(QRELS))
def test_fast_trec_qrels_reader_reads_what_the_general_one_reads(tmp_path, monkeypatch, name):
    path = tmp_path / "qrels.txt"
    path.write_bytes(QRELS[name])
    _same(*_read_both(monkeypatch, path, read_qrels))


@pytest.mark.parametrize("part_size", [1 << 26, 1000, 1])
def test_fast_reader_takes_the_common_shape_in_blocks(tmp_path, monkeypatch, part_size):
    """Blocks and parts (read on threads of their own) end inside a query's lines: the
    frame is the general reader's, every line numbered in order."""
    from releval.data import trec_fast

    monkeypatch.setattr(trec_fast, "BLOCK_SIZE", 64)  # many blocks
    monkeypatch.setattr(trec_fast, "PART_SIZE", part_size)
    monkeypatch.setattr(trec_fast.os, "sched_getaffinity", lambda pid: range(4))
    lines = [f"q{i // 7} Q0 d{i} {i % 7 + 1} {10 - i % 7}.5 run" for i in range(500)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    calls = []
    real = trec_fast.read
    monkeypatch.setattr(trec_fast, "read", lambda *a, **k: calls.append(1) or real(*a, **k))
    fast, compact = read_run(path), read_run(path, compact=True)
    assert calls and len(fast) == 500 and fast.index[-1] == 500
    assert compact["query_id"].astype(str).tolist() == fast["query_id"].tolist()
    assert compact["query_id"].cat.categories.tolist() == [f"q{i}" for i in range(72)]
    monkeypatch.setattr(trec_fast, "read", lambda *a, **k: None)
    _same(fast, read_run(path))


@pytest.mark.parametrize("name", ["spaces", "tabs", "crlf, no last newline", "bom and unicode"])
def test_common_trec_shapes_take_the_fast_reader(tmp_path, name):
    from releval.data import trec_fast
    from releval.data.readers import TREC_RUN

    path = tmp_path / "run.txt"
    path.write_bytes(RUNS[name])
    kinds = {"query_id": "ids", "doc_id": "text", "score": "float", "system": "category"}
    assert trec_fast.read(path, TREC_RUN, kinds) is not None


@pytest.mark.parametrize("size", [1, 7, 17, 64])
@pytest.mark.parametrize("name", ["crlf, no last newline", "bom and unicode",
                                  "lone carriage return", "tabs"])
def test_small_blocks_read_what_one_block_reads(tmp_path, monkeypatch, size, name):
    """Blocks end inside lines, inside CR LF, inside a BOM and a UTF-8 character; a line
    longer than a block waits for the next."""
    from releval.data import trec_fast

    path = tmp_path / "run.txt"
    path.write_bytes(RUNS[name] * 3)
    whole = _read_both(monkeypatch, path, read_run)
    monkeypatch.setattr(trec_fast, "BLOCK_SIZE", size)
    _same(whole[0], _read_both(monkeypatch, path, read_run)[0])
    _same(*whole)


def test_a_bad_line_in_a_later_block_is_named_by_its_line(tmp_path, monkeypatch):
    from releval.data import trec_fast

    monkeypatch.setattr(trec_fast, "BLOCK_SIZE", 64)
    monkeypatch.setattr(trec_fast, "PART_SIZE", 2000)  # the bad lines: in the last part
    monkeypatch.setattr(trec_fast.os, "sched_getaffinity", lambda pid: range(4))
    lines = [f"q{i // 5} Q0 d{i} {i % 5 + 1} {9 - i % 5}.25 run" for i in range(300)]
    path = tmp_path / "run.txt"
    for at, bad, rule in [(240, "q9 Q0 d1 1 2.5", "line 241: expected 6 fields"),
                          (250, "q9 Q0 d1 1 high run", "line 251: score must be a number, "
                           "got 'high'"),
                          (260, "q9 Q0 d\xff 1 2.5 run", "offset .* \\(line 261\\)")]:
        text = "\n".join([*lines[:at], bad, *lines[at:]]) + "\n"
        path.write_bytes(text.encode("utf-8", "surrogateescape") if "\xff" not in bad
                         else text.encode("latin-1"))
        with pytest.raises(InputError, match=rule):
            read_run(path)


def test_compact_frames_hold_the_same_values(tmp_path):
    lines = [f"q{(i // 4) % 9} Q0 d{i % 13} {i % 4 + 1} {i % 3}.5 run" for i in range(72)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    plain, compact = read_run(path), read_run(path, compact=True)
    assert isinstance(compact["query_id"].dtype, pd.CategoricalDtype)
    assert str(compact["doc_id"].dtype) == "string[pyarrow]"
    for c in plain.columns:
        assert compact[c].astype(str).tolist() == plain[c].astype(str).tolist(), c
    assert compact.index.equals(plain.index) and compact.attrs == plain.attrs
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2\nq2 0 d1 0\nq1 0 d2 -1\n")
    plain, compact = read_qrels(qrels), read_qrels(qrels, compact=True)
    assert compact["query_id"].tolist() == plain["query_id"].tolist() == ["q1", "q2", "q1"]
    assert compact["grade"].tolist() == plain["grade"].tolist() == [2, 0, -1]


def test_numbers_parse_as_arrows_parser_does(tmp_path):
    """The compiled parser's decimals and integers are Arrow's values bit for bit; what it
    leaves is Arrow's to parse."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(7)
    mantissas = rng.integers(0, 10 ** rng.integers(1, 19, 3000), dtype=np.int64)
    decimals = [f"{'-' if i % 3 == 0 else ''}{m}" + (f".{i % 1000:0{i % 5 + 1}d}" if i % 2 else "")
                + (f"e{rng.integers(-30, 30)}" if i % 7 == 0 else "")
                for i, m in enumerate(mantissas)]
    decimals += ["0", "-0", "0.0", "-0.000", "1e22", "1e23", "9007199254740993", "5e-324",
                 "1.7976931348623157e308", "+1", ".5", "5.", "inf", "-Infinity", "1E+05",
                 "0.1", "0.30000000000000004", "123456789012345678.5e-3"]
    integers = [str(v) for v in rng.integers(-10 ** 18, 10 ** 18, 500)]
    integers += ["0", "-0", "01", "999999999999999999", "-9223372036854775808"]
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(f"q Q0 d{i} 1 {s} r\n" for i, s in enumerate(decimals)))
    qrels.write_text("".join(f"q 0 d{i} {s}\n" for i, s in enumerate(integers)))
    from releval.data import trec_fast
    from releval.data.readers import TREC_QRELS, TREC_RUN

    assert trec_fast.read(run, TREC_RUN, {"score": "float"}) is not None
    assert trec_fast.read(qrels, TREC_QRELS, {"grade": "int"}) is not None
    expected = pc.cast(pa.array(decimals), pa.float64()).to_numpy()
    assert read_run(run)["score"].to_numpy().view(np.int64).tolist() == \
        expected.view(np.int64).tolist()
    assert read_qrels(qrels)["grade"].tolist() == [int(s) for s in integers]
