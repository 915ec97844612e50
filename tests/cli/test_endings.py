"""Every way ``releval`` ends is one line on stderr: a usage error (exit 2, the flag and the
command's --help), bad input, including a library's parse error (exit 2, the user's own path
or flag), and a bug (exit 1, ``internal error:``, its traceback only on request). Through the
real command in a child process (``python -m releval.cli``: typer's CliRunner catches
exceptions itself), and the handlers of the stages and the flow."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from releval import errors
from releval.cli import files, main
from releval.errors import InputError, reading
from stages.common import guarded
from tests import endings

ROOT = Path(__file__).resolve().parents[2]
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\n"


def releval(*args, cwd: Path = ROOT, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != errors.DEBUG}
    return subprocess.run([sys.executable, "-m", "releval.cli", *map(str, args)], cwd=cwd,
                          env=environ | {"PYTHONPATH": str(ROOT)} | env, capture_output=True,
                          text=True, timeout=120)


def one_line(done: subprocess.CompletedProcess, status: int, *words: str) -> str:
    """The single stderr line of ``done``, which exited ``status`` and holds ``words``."""
    assert done.returncode == status, done.stderr
    return endings.one_line(done.stderr, done.stderr, *words)


@pytest.fixture
def clean(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path


@pytest.fixture
def project(tmp_path):
    """A folder the project commands take for a project (they refuse before reading more)."""
    (tmp_path / "dvc.yaml").write_text((ROOT / "dvc.yaml").read_text())
    (tmp_path / "flows").mkdir()
    return tmp_path


@pytest.mark.parametrize("args,words", [
    (["compare", "--seed", "-1", "a.csv", "b.csv"],
     ["error: --seed: Input should be greater than or equal to 0", "releval compare --help"]),
    (["metrics", "--nope", "q", "r"],
     ["error: --nope: no such option", "releval metrics --help"]),
    (["metrics", "--complet", "q", "r"], ["--complet", "did you mean --complete?"]),
    (["compare", "a.csv"], ["Missing argument", "candidate", "releval compare --help"]),
    (["compare", "a.csv", "b.csv", "--format", "xml"], ["--format", "'xml'"]),
])
def test_a_usage_error_is_one_line_naming_the_flag_and_the_commands_help(args, words):
    line = one_line(releval(*args), 2, *words)
    assert "Usage:" not in line and "Try '" not in line


def test_help_and_no_arguments_still_show_the_help():
    for flag in ("-h", "--help"):
        done = releval("compare", flag)
        assert done.returncode == 0 and "Usage: releval compare" in done.stdout, done.stderr
    done = releval()
    assert "Usage: releval [OPTIONS] COMMAND" in done.stdout + done.stderr
    assert "compare" in done.stdout + done.stderr


def test_a_truncated_parquet_file_is_one_line_naming_it(clean):
    table = clean / "run.parquet"
    pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}).to_parquet(table)
    cut = clean / "cut.parquet"
    cut.write_bytes(table.read_bytes()[:200])
    one_line(releval("metrics", clean / "qrels.txt", cut), 2, f"error: {cut}:",
             "not a readable parquet file")
    one_line(releval("compare", cut, cut), 2, f"error: {cut}:", "not a readable parquet file")


def test_a_params_file_that_is_not_yaml_is_refused_before_the_run_starts(project):
    (project / "bad.yaml").write_text("base:\n  seed: 1\nprepare: : [\n")
    one_line(releval("run", "--params", "bad.yaml", cwd=project), 2,
             "error: bad.yaml:line 3: not valid YAML")
    (project / "latin.yaml").write_bytes(b"base:\n  seed: 1\n# caf\xe9\n")
    one_line(releval("run", "--params", "latin.yaml", cwd=project), 2,
             "error: latin.yaml:line 3: not valid UTF-8 text: byte 0xe9")
    (project / "params.yaml").write_text("base:\n  seed: 1\n")
    one_line(releval("run", "-S", "base.seed=[1", cwd=project), 2,
             "error: override 'base.seed=[1': the value is not valid YAML")
    assert (project / "params.yaml").read_text() == "base:\n  seed: 1\n"
    assert sorted(p.name for p in project.iterdir()) == [
        "bad.yaml", "dvc.yaml", "flows", "latin.yaml", "params.yaml"]  # nothing ran


def test_a_beir_qrels_file_that_is_not_utf8_is_one_line_naming_it(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "a b"}\n')
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n')
    (beir / "qrels" / "test.tsv").write_bytes(b"query-id\tcorpus-id\tscore\nq1\td\xe91\t1\n")
    one_line(releval("init", tmp_path / "proj", "--corpus", beir, cwd=tmp_path), 2,
             f"error: {beir / 'qrels' / 'test.tsv'}:", "byte 0xe9", "(line 2)")
    assert not (tmp_path / "proj").exists()


def test_a_misspelt_measure_is_one_line_with_the_closest_name(clean, project):
    one_line(releval("compare", "-m", "nDGC@10", clean / "run.txt", clean / "run.txt",
                     "--qrels", clean / "qrels.txt"), 2,
             "unknown measure 'nDGC@10'; did you mean nDCG@10?")
    one_line(releval("drift", "HEAD~1", "HEAD", "--measure", "nDGC@10", cwd=project), 2,
             "error: --measure: unknown measure 'nDGC@10'; did you mean nDCG@10?")


def raising(monkeypatch):
    def boom(*_, **__):
        raise RuntimeError("boom")
    monkeypatch.setattr(files, "read_run", boom)


def test_a_bug_is_one_line_and_its_traceback_only_on_request(clean, monkeypatch, capsys):
    raising(monkeypatch)
    monkeypatch.delenv(errors.DEBUG, raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["metrics", str(clean / "qrels.txt"), str(clean / "run.txt")])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines() == ["internal error: RuntimeError: boom (rerun with RELEVAL_DEBUG=1 "
                                "for the traceback)"]
    monkeypatch.setenv(errors.DEBUG, "1")
    with pytest.raises(SystemExit) as stop:
        main(["metrics", str(clean / "qrels.txt"), str(clean / "run.txt")])
    err = capsys.readouterr().err
    assert stop.value.code == 1 and "Traceback" in err and 'raise RuntimeError("boom")' in err
    assert err.splitlines()[-1].startswith("internal error: RuntimeError: boom")


def test_a_bugs_traceback_is_printed_only_when_verbose(capsys):
    try:
        raise KeyError("k")
    except KeyError as exc:
        assert errors.end(exc, verbose=False, hint="h") == 1
        assert capsys.readouterr().err.splitlines() == ["internal error: KeyError: 'k' (h)"]
        assert errors.end(exc, verbose=True, hint="h") == 1
    assert "Traceback" in capsys.readouterr().err


def test_a_stage_ends_on_a_bug_with_its_traceback_then_one_line(capsys):
    def main():
        raise RuntimeError("boom")
    with pytest.raises(SystemExit) as stop:
        guarded(main)
    err = capsys.readouterr().err
    assert stop.value.code == 1 and "Traceback" in err
    assert err.splitlines()[-1].startswith("internal error: RuntimeError: boom (")

    def bad_json():
        import json
        json.loads("{")
    with pytest.raises(SystemExit) as stop:
        guarded(bad_json)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    assert err.splitlines() == ["error: not valid JSON: Expecting property name enclosed in "
                                "double quotes (line 1)"]


def test_the_flow_ends_with_a_stages_internal_error_line_and_status_1():
    from flows.pipeline import ending

    lines, status = ending("error: failed", ["internal error: KeyError: 'x' (…)"])
    assert lines[0] == "internal error: KeyError: 'x' (…)" and status == 1
    assert ending("error: failed", ["error: a.csv: bad", "internal error: KeyError"])[1] == 2
    assert ending("error: failed", []) == (["error: failed", "(the whole log: reports/run.log)"],
                                           1)


def _yaml():
    yaml.safe_load("a: [1\n")


def _json():
    import json
    json.loads('{"a": 1,\n}')


def _utf8():
    b"ok\n\xff".decode()


def _arrow():
    import pyarrow as pa
    pa.array(["x"]).cast(pa.int64())


def _csv():
    import io
    pd.read_csv(io.StringIO("a,b\n1,2\n1,2,3\n"))


def _empty():
    import io
    pd.read_csv(io.StringIO(""))


def _pydantic():
    from pydantic import BaseModel

    class Doc(BaseModel):
        n: int
    Doc.model_validate({"n": "x"})


@pytest.mark.parametrize("parse,words", [
    (_yaml, ["f.txt:line 2: not valid YAML: expected ',' or ']'"]),
    (_json, ["f.txt:line 2: not valid JSON"]),
    (_utf8, ["f.txt:line 2: not valid UTF-8 text: byte 0xff at offset 3"]),
    (_arrow, ["f.txt: not valid parquet/Arrow data"]),
    (_csv, ["f.txt:line 3: not valid CSV/TSV: Error tokenizing data"]),
    (_empty, ["f.txt: not valid CSV/TSV: No columns to parse"]),
    (_pydantic, ["f.txt: not valid its schema's document: n: Input should be a valid integer"]),
])
def test_each_librarys_parse_error_reads_as_bad_input_naming_the_file(parse, words):
    with pytest.raises(InputError) as raised, reading("f.txt"):
        parse()
    for word in words:
        assert word in str(raised.value), str(raised.value)


def test_anything_else_passes_through_reading_unchanged():
    with pytest.raises(KeyError), reading("f.txt"):
        {}["x"]
    with pytest.raises(InputError, match="^a.csv: mine$"), reading("f.txt"):
        raise InputError("mine", "a.csv")
    with pytest.raises(ValueError, match="^plain$"), reading("f.txt"):
        raise ValueError("plain")  # a ValueError is no parse error: a bug, never hidden
