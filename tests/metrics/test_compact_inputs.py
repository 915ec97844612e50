"""Compact inputs (``read_run`` / ``read_qrels`` with ``compact``, as ``releval metrics``
reads its files: query ids categorical, doc ids Arrow strings with 4-byte offsets, grades in
the least integer type) give the evaluator exactly the values, counts and errors of plain
frames, whole and in blocks; ``releval metrics`` prints what it printed when the general
reader read the files."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_blocks import assert_same_evaluation
from test_ranking import frames, with_repeat
from typer.testing import CliRunner

from releval.cli import app
from releval.data import trec_fast
from releval.data.readers import TREC_QRELS, TREC_RUN, read_qrels, read_run
from releval.errors import InputError
from releval.metrics import blocks, ids, trec_eval
from releval.metrics.engine import evaluate

MEASURES = ["nDCG@3", "P@2", "R@5", "RR", "AP", "Judged@2", "NumRet", "Bpref", "IPrec@0.5"]
settings_ = settings(max_examples=100, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


def compact(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` in the compact reader's form."""
    out = frame.copy()
    codes, uniques = pd.factorize(frame["query_id"])
    out["query_id"] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(
        pd.Index(pd.array(list(uniques), dtype="str"))))
    out["doc_id"] = pd.arrays.ArrowExtensionArray(pa.array(list(frame["doc_id"]), pa.string()))
    if "grade" in out.columns:
        out["grade"] = out["grade"].astype(np.int8)
    return out


def _evaluate(run, qrels, block_rows, **kw):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "BLOCK_ROWS", block_rows)
        try:
            return evaluate(run, qrels, MEASURES, workers=2, **kw)
        except InputError as exc:
            return str(exc)


@settings_
@given(frames(), st.sampled_from([1, 3, 10**9]),
       st.sampled_from([{}, {"common_only": True}, {"queries": ["q1", "é", "zz"]}]))
def test_compact_frames_evaluate_as_plain_frames(data, block_rows, kw):
    run, qrels = data
    _same(_evaluate(compact(run), compact(qrels), block_rows, **kw),
          _evaluate(run, qrels, block_rows, **kw))


@settings_
@given(with_repeat())
def test_a_doc_ranked_twice_is_named_alike(data):
    run, qrels = data
    _same(_evaluate(compact(run), compact(qrels), 10**9), _evaluate(run, qrels, 10**9))


def _same(small, plain):
    assert_same_evaluation(small, plain)


def test_a_doc_judged_twice_is_named_alike():
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": ["d1", "d1", "d1"],
                          "grade": [1, 0, 2]})
    with pytest.raises(InputError) as plain:
        evaluate(run, qrels, ["AP"])
    with pytest.raises(InputError) as small:
        evaluate(compact(run), compact(qrels), ["AP"])
    assert str(small.value) == str(plain.value)
    assert "duplicate judgment for query 'q1' doc 'd1' (first at index 0)" in str(plain.value)


@pytest.mark.parametrize("codes", [[0, 0, 1, 1, 2], [0, 1, 0, 2, 2], [2, 2, 0], []])
def test_query_codes_of_a_categorical_column_are_the_strings_codes(codes):
    names = np.array(["b", "a", "c"])[codes].tolist()
    plain = pd.DataFrame({"query_id": pd.array(names, dtype="str")})
    strings = ids.query_codes(plain, "run")
    coded = ids.query_codes(compact(plain.assign(doc_id="d")), "run")
    assert coded[0].to_pylist() == strings[0].to_pylist()
    assert coded[1].tolist() == strings[1].tolist() and coded[2] == strings[2]
    runs = ids.query_runs(compact(plain.assign(doc_id="d")), "run")
    starts = [i for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    if len(starts) > len(set(names)):  # a query's rows apart
        assert runs is None
    else:
        assert runs[0].to_pylist() == [names[i] for i in starts]
        assert runs[1].tolist() == starts


def test_scores_keep_the_precision_each_version_ranks_them_at():
    run = pd.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"],
                        "score": [0.1, 1 / 3]})
    ranked = trec_eval.as_ranked(run, "9.0.8")
    assert ranked["score"].dtype == np.float32
    assert ranked["score"].astype(float).tolist() == \
        run["score"].astype(np.float32).astype(float).tolist()
    assert trec_eval.as_ranked(ranked, "9.0.8") is ranked
    assert trec_eval.as_ranked(run, "10.0") is run


def test_no_common_query_is_refused_in_one_line(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q2 Q0 d1 1 1.0 r\n")
    out = CliRunner().invoke(app, ["metrics", str(tmp_path / "qrels.txt"),
                                   str(tmp_path / "run.txt"), "--format", "trec", "-m", "P@10"])
    assert out.exit_code == 2
    assert "nothing evaluated: no query of the qrels is in the run" in out.output


RUN = ("q2 Q0 d3 1 2.5e0 tag\r\nq2 Q0 d1 2 2.5 tag\r\nq2 Q0 d2 3 1E-3 tag\r\n"
       "q1 Q0 d9 1 -0 tag\r\nq1 Q0 d8 2 -1.5e+2 tag\r\nq1 Q0 d7 3 -150 tag\r\n"
       "q9 Q0 d1 1 3 tag\r\n")  # ties (2.5, -150), scientific notation, a query unjudged
QRELS = "q1\t0\td7\t2\nq1\t0\td8\t-1\nq2\t0\td1\t1\nq2\t0\td3\t0\nq3\t0\td1\t3\n"


@pytest.mark.parametrize("flags", [[], ["-c"], ["-q"], ["--trec-eval", "10.0", "-c"],
                                   ["-m", "all_trec", "-q"], ["-M", "2", "-J"],
                                   ["--format", "csv"]])
def test_metrics_prints_what_the_general_reader_gave(tmp_path, monkeypatch, flags):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    args = ["metrics", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    if "--format" not in flags:
        args += ["--format", "trec"]
    assert trec_fast.read(tmp_path / "run.txt", TREC_RUN, {"score": "float"}) is not None
    assert trec_fast.read(tmp_path / "qrels.txt", TREC_QRELS, {"grade": "int"}) is not None
    fast = CliRunner().invoke(app, args + flags)
    monkeypatch.setattr(trec_fast, "read", lambda *a, **k: None)
    general = CliRunner().invoke(app, args + flags)
    assert fast.exit_code == general.exit_code == 0, fast.output
    assert fast.output == general.output


def test_a_bad_line_far_into_a_large_run_is_named_by_its_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_fast, "BLOCK_SIZE", 256)
    monkeypatch.setattr(trec_fast, "PART_SIZE", 4096)
    monkeypatch.setattr(trec_fast.os, "sched_getaffinity", lambda pid: range(4))
    lines = [f"q{i // 10} Q0 d{i % 10} {i % 10 + 1} {10 - i % 10} r" for i in range(2000)]
    lines[1777] = "q177 Q0 d7 8"
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    with pytest.raises(InputError, match=r"run.txt:line 1778: expected 6 fields"):
        read_run(tmp_path / "run.txt", compact=True)
    out = CliRunner().invoke(app, ["metrics", str(tmp_path / "qrels.txt"),
                                   str(tmp_path / "run.txt"), "--format", "trec"])
    assert out.exit_code == 2 and "line 1778: expected 6 fields" in out.output


def test_compact_qrels_keep_negative_grades_in_a_byte(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    qrels = read_qrels(tmp_path / "qrels.txt", compact=True)
    assert qrels["grade"].dtype == np.int8 and qrels["grade"].tolist() == [2, -1, 1, 0, 3]


def test_per_query_lines_not_asked_for_are_not_built(tmp_path):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    run, qrels = (read_run(tmp_path / "run.txt", compact=True),
                  read_qrels(tmp_path / "qrels.txt", compact=True))
    req = trec_eval.request(["official"])
    full = trec_eval.evaluate(run, qrels, req, run_id="r", complete=True)
    lean = trec_eval.evaluate(run, qrels, req, run_id="r", complete=True, per_query=False)
    assert len(full.per_query) and lean.per_query.empty
    assert list(lean.per_query.columns) == list(full.per_query.columns)
    assert lean.text() == full.text()
