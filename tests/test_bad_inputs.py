"""A battery of bad inputs against the commands: each is one line on stderr naming the file
(and line) and the rule, exit status 2 and no traceback; or it is accepted and gives the
numbers of its clean twin."""

import json

import pytest
from typer.testing import CliRunner

from releval.cli import app
from releval.cli.inputs import read_side
from releval.data.contracts import AboveScale
from releval.data.readers import read_qrels, read_run
from releval.decision.compare import MeasuresDiffer, QueriesDiffer
from releval.decision.compare import compare as run_compare
from releval.metrics.engine import evaluate

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 NA 3\n"
RUN = ("q1 Q0 d1 1 3.0 sys\nq1 Q0 d9 2 2.0 sys\nq1 Q0 d3 3 1.0 sys\n"
       "q2 Q0 NA 1 2.5 sys\nq2 Q0 d4 2 1.5 sys\n")


def invoke(*args: str):
    return CliRunner().invoke(app, list(map(str, args)))


def metrics_json(qrels, run, *extra) -> dict:
    result = invoke("metrics", qrels, run, "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["measures"]


def assert_refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.exception is None or \
        isinstance(result.exception, SystemExit)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture
def clean(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path, metrics_json(tmp_path / "qrels.txt", tmp_path / "run.txt")


@pytest.mark.parametrize("name,text", [
    ("every line", RUN.replace(" sys\n", " sys trailing comment\n")),
    ("one line", RUN.replace("d9 2 2.0 sys\n", "d9 2 2.0 sys # looked odd\n")),
])
def test_trec_run_lines_with_trailing_fields_read_as_trec_eval_reads_them(clean, name, text):
    folder, twin = clean
    (folder / "long.txt").write_text(text)
    assert metrics_json(folder / "qrels.txt", folder / "long.txt") == twin


def test_trec_qrels_with_trailing_fields_and_a_headerless_beir_tsv_read_as_their_twin(clean):
    folder, twin = clean
    (folder / "long.qrels").write_text(QRELS.replace("\n", " judge7\n"))
    assert metrics_json(folder / "long.qrels", folder / "run.txt") == twin
    rows = [line.split() for line in QRELS.splitlines()]
    (folder / "plain.tsv").write_text("".join(f"{q}\t{d}\t{g}\n" for q, _, d, g in rows))
    (folder / "beir.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                     + (folder / "plain.tsv").read_text())
    assert metrics_json(folder / "plain.tsv", folder / "run.txt") == twin
    assert metrics_json(folder / "beir.tsv", folder / "run.txt") == twin


def test_ids_that_look_missing_are_ids(clean):
    folder, twin = clean
    renamed = {"qrels.txt": QRELS.replace(" NA ", " dNA "), "run.txt": RUN.replace(" NA ", " dNA ")}
    for name, text in renamed.items():
        (folder / f"renamed-{name}").write_text(text)
    assert metrics_json(folder / "renamed-qrels.txt", folder / "renamed-run.txt") == twin
    (folder / "run.csv").write_text("query_id,doc_id,score\nq1,NA,1.0\nq1,null,0.5\n"
                                    "q2,None,2.0\nq2,N/A,1.0\n")
    counted = metrics_json(folder / "qrels.txt", folder / "run.csv", "-m", "NumRet")
    assert counted["NumRet"]["value"] == 4  # none of the four ids read as missing


BAD_TEXT = {
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xd8",
    "utf16": "q1 Q0 d1 1 3.0 sys\n".encode("utf-16"),
    "latin1": "q1 Q0 caf\xe9 1 3.0 sys\n".encode("latin-1"),
    "nul": b"q1 Q0 d1 1 3.0 sys\n\x00\n",
}


@pytest.mark.parametrize("kind", BAD_TEXT)
@pytest.mark.parametrize("side", ["qrels", "run"])
def test_text_that_is_not_utf8_is_one_line_with_offset_and_line(clean, kind, side):
    folder, _ = clean
    bad = folder / f"{kind}.txt"
    bad.write_bytes(BAD_TEXT[kind])
    args = (bad, folder / "run.txt") if side == "qrels" else (folder / "qrels.txt", bad)
    words = {"binary": ["not UTF-8", "offset 0"], "utf16": ["not UTF-8", "UTF-16"],
             "latin1": ["byte 0xe9 at offset 9 (line 1)"], "nul": ["NUL byte", "line 2"]}
    assert_refused(invoke("metrics", *args), str(bad), *words[kind])


def test_a_bom_is_fine(clean):
    folder, twin = clean
    (folder / "bom.txt").write_bytes(b"\xef\xbb\xbf" + RUN.encode())
    assert metrics_json(folder / "qrels.txt", folder / "bom.txt") == twin


def written(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("make,words", [
    (lambda f: (f / "adir").mkdir() or f / "adir", ["is a folder, expected a file"]),
    (lambda f: f / "absent.txt", ["file not found"]),
    (lambda f: written(f / "bad.parquet", b"PAR1 not really"), ["not a readable parquet"]),
])
@pytest.mark.parametrize("side", ["qrels", "run"])
def test_a_path_that_is_no_readable_file_is_one_line(clean, make, words, side):
    folder, _ = clean
    bad = make(folder)
    args = (bad, folder / "run.txt") if side == "qrels" else (folder / "qrels.txt", bad)
    assert_refused(invoke("metrics", *args), str(bad), *words)


@pytest.mark.parametrize("qrels,words", [
    ("", ["nothing evaluated"]),
    ("q1 0 d1 nan\n", ["line 1", "grade must be an integer, got 'nan'"]),
    ("q 1 0 d1 2\n", ["line 1", "expected 4 fields (query_id iteration doc_id grade), got 5",
                      "an id holding a space"]),  # a space in an id: the count, not 'd1'
    ("q1 0 d1\n", ["line 1", "expected 4 fields", "saw 3"]),
])
def test_qrels_that_judge_nothing_or_hold_no_grade_are_refused(clean, qrels, words):
    folder, _ = clean
    (folder / "bad.qrels").write_text(qrels)
    assert_refused(invoke("metrics", folder / "bad.qrels", folder / "run.txt"),
                   str(folder / "bad.qrels"), *words)


def per_query(folder, name, rows):
    path = folder / name
    path.write_text("query_id,measure,value\n" + "".join(f"{q},{m},{v}\n" for q, m, v in rows))
    return path


@pytest.fixture
def sides(tmp_path):
    base = per_query(tmp_path, "base.csv", [(f"q{i}", "AP", i / 10) for i in range(8)])
    cand = per_query(tmp_path, "cand.csv", [(f"q{i}", "AP", i / 9) for i in range(8)])
    return tmp_path, base, cand


@pytest.mark.parametrize("option,content,words", [
    ("--weights", "query_id,weight\nq0,heavy\n", ["line 2", "finite number ≥ 0", "'heavy'"]),
    ("--weights", "query_id,weight\nq0,nan\n", ["line 2", "finite number ≥ 0"]),
    ("--weights", "query_id,weight\nq0,1\nq1,-2\n", ["line 3", "finite number ≥ 0", "'-2'"]),
    ("--weights", "query_id,weight\nq0,1\n", ["no weight for 7 compared queries"]),
    ("--cluster", "query_id,user_id\n" + "".join(f"q{i},u\n" for i in range(8)),
     ["one user_id"]),
    ("--cluster", "query_id,user_id\nq0,u1\nq1,\n", ["line 3", "label must not be empty"]),
    ("--slices", "query_id,slice\nq0,a\nq0,b\n", ["line 3", "appears twice"]),
])
def test_compare_side_files_name_the_file_line_and_rule(sides, option, content, words):
    folder, base, cand = sides
    path = folder / "side.csv"
    path.write_text(content)
    assert_refused(invoke("compare", base, cand, option, path, "--resamples", "200"),
                   str(path), *words)


def test_compare_tables_are_checked_like_every_other_input(sides):
    folder, base, cand = sides
    assert_refused(invoke("compare", folder / "gone.csv", cand), "gone.csv", "file not found")
    dup = per_query(folder, "dup.csv", [("q0", "AP", 0.1), ("q0", "AP", 0.2)])
    assert_refused(invoke("compare", dup, cand), str(dup), "line 3", "two AP values")
    inf = per_query(folder, "inf.csv", [("q0", "AP", "inf")])
    assert_refused(invoke("compare", inf, cand), str(inf), "line 2", "finite")
    more = per_query(folder, "more.csv", [(f"q{i}", m, 0.5) for i in range(8)
                                          for m in ("AP", "nDCG@10")])
    assert_refused(invoke("compare", base, more), "nDCG@10", "--common-measures")
    ok = invoke("compare", base, more, "--common-measures", "--resamples", "200")
    assert ok.exit_code == 0, ok.output


def test_a_negative_seed_is_a_usage_error_not_a_traceback(sides):
    _, base, cand = sides
    result = invoke("compare", base, cand, "--seed", "-1")
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.parametrize("passed,rules,words", [
    (True, [{"name": "safety", "passed": False}], ["inconsistent", "safety"]),
    (False, [{"name": "safety", "passed": True}], ["inconsistent", "every rule passed"]),
])
def test_a_decision_whose_verdict_contradicts_its_rules_is_refused(tmp_path, passed, rules,
                                                                   words):
    path = tmp_path / "decision.json"
    path.write_text(json.dumps({"passed": passed, "rules": rules}))
    result = invoke("gate", "--decision", path)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert all(w in result.output for w in words), result.output


def test_judges_files_and_stage_inputs_pass_the_same_gate(tmp_path):
    from releval.errors import InputError
    from releval.judging.files import read_judgments
    from stages.common import read_doc, read_table

    latin = tmp_path / "judge.csv"
    latin.write_bytes("blind_id,grade\nb1,2\ncaf\xe9,1\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"judge.csv: not UTF-8 text: .* \(line 3\)"):
        read_judgments(latin)
    (tmp_path / "tasks.json").write_bytes("[]".encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16"):
        read_judgments(tmp_path / "tasks.json")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1")
    with pytest.raises(InputError, match="broken.parquet: not a readable parquet file"):
        read_table(tmp_path / "broken.parquet")
    (tmp_path / "stats.json").mkdir()
    with pytest.raises(InputError, match="stats.json: is a folder"):
        read_doc(tmp_path / "stats.json")


def test_a_run_with_trailing_fields_gives_trec_evals_numbers(clean):
    import pytrec_eval

    folder, _ = clean
    (folder / "long.txt").write_text(RUN.replace(" sys\n", " sys trailing comment\n"))
    qrels = {}
    for q, _, d, g in (line.split() for line in QRELS.splitlines()):
        qrels.setdefault(q, {})[d] = int(g)
    run = {}
    for q, _, d, _, s, *_ in (line.split() for line in RUN.splitlines()):
        run.setdefault(q, {})[d] = float(s)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map"}).evaluate(run)
    ours = metrics_json(folder / "qrels.txt", folder / "long.txt", "-m", "nDCG@10", "-m", "AP")
    for ours_name, trec_name in (("nDCG@10", "ndcg_cut_10"), ("AP", "map")):
        mean = sum(v[trec_name] for v in per_query.values()) / len(per_query)
        assert ours[ours_name]["value"] == pytest.approx(mean, abs=1e-12)


def test_the_library_refuses_in_words_of_the_data_the_command_in_its_flags(sides, clean):
    """compare's refusals carry what differs and name no flag; the command adds its flags."""
    folder, base, cand = sides
    more = per_query(folder, "more.csv", [(f"q{i}", m, 0.5) for i in range(8)
                                          for m in ("AP", "nDCG@10")])
    fewer = per_query(folder, "fewer.csv", [(f"q{i}", "AP", 0.5) for i in range(4)])
    read = {p: read_side(p, None, None).per_query for p in (base, more, fewer)}
    with pytest.raises(MeasuresDiffer) as measures:
        run_compare(read[base], read[more])
    assert (measures.value.one_side, measures.value.common) == (["nDCG@10"], ["AP"])
    with pytest.raises(QueriesDiffer) as queries:
        run_compare(read[base], read[fewer])
    assert queries.value.differences["queries_only_in_baseline"] == 4
    for error in (measures.value, queries.value):
        assert "--" not in str(error) and " -m" not in str(error)
    assert_refused(invoke("compare", base, more), "in only one of the two tables",
                   "name the measures with -m, or pass --common-measures to compare AP")
    assert_refused(invoke("compare", base, fewer), "4 queries only in the baseline",
                   "pass --allow-uncontrolled")
    tmp_path, _ = clean
    assert_refused(invoke("compare", tmp_path / "run.txt", tmp_path / "run.txt"),
                   "run.txt", "a run needs --qrels")
    (tmp_path / "high.txt").write_text(QRELS.replace("d1 2", "d1 7"))
    with pytest.raises(AboveScale, match=r"declare the scale: max_grade\)$"):
        evaluate(read_run(tmp_path / "run.txt"), read_qrels(tmp_path / "high.txt"), ["AP"])
    assert_refused(invoke("metrics", tmp_path / "high.txt", tmp_path / "run.txt"),
                   "high.txt", "grade 7 is above the declared scale's maximum 3",
                   "(declare the scale: --max-grade)")
