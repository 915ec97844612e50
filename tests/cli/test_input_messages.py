"""One-line refusals that name the right thing, through the commands: a flag by its name, a
TREC line by its field count, a malformed corpus line in a whole sentence, text that is not
UTF-8 by its byte, offset and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from releval.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "releval" / "examples"


def refused(*args: str) -> str:
    done = CliRunner().invoke(app, list(map(str, args)))
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output and done.stderr.count("\n") == 1, done.stderr
    return done.stderr.strip()


@pytest.fixture(autouse=True)
def _whole_lines(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_resamples_below_one_is_blamed_on_the_flag(value):
    """Through the installed command (its usage errors are one line: releval.cli.main)."""
    run = EXAMPLES / "run.txt"
    done = subprocess.run([str(Path(sys.executable).with_name("releval")), "compare", str(run),
                           str(run), "--qrels", str(EXAMPLES / "qrels.txt"), "--resamples",
                           value], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    said = done.stderr.strip()
    assert said.startswith("error: --resamples: ") and "<input>" not in said, said
    assert said.endswith("(see releval compare --help)") and "Traceback" not in said


def test_a_qrels_line_whose_query_id_holds_a_space_is_reported_by_its_field_count(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq 2 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 x\n")
    said = refused("metrics", qrels, tmp_path / "run.txt")
    assert said.startswith(f"error: {qrels}:line 2: expected 4 fields (query_id iteration "
                           "doc_id grade), got 5: an id holding a space"), said
    assert "grade must be an integer" not in said


def _beir(folder: Path, corpus: bytes) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes(corpus)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "x"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


FIRST = b'{"_id": "d1", "text": "a"}\n'  # 27 bytes


@pytest.mark.parametrize(("line", "said"), [
    (b'{"_id": "d2", "text": "open\n', "invalid JSON: Invalid control character '\\n' at "
                                      "column 28"),
    (b'{"_id": "d2" "text": "b"}\n', "invalid JSON: Expecting ',' delimiter at column 14")])
def test_a_malformed_corpus_line_is_a_whole_sentence(tmp_path, line, said):
    folder = _beir(tmp_path / "beir", FIRST + line)
    got = refused("init", tmp_path / "proj", "--corpus", folder)
    assert got == f"error: {folder / 'corpus.jsonl'}:line 2: {said}", got


def test_a_corpus_that_is_not_utf8_names_the_byte_its_offset_and_line(tmp_path):
    folder = _beir(tmp_path / "beir", FIRST + b'{"_id": "d2", "text": "caf\xe9"}\n')
    got = refused("init", tmp_path / "proj", "--corpus", folder)
    assert got.startswith(f"error: {folder / 'corpus.jsonl'}: not UTF-8 text: byte 0xe9 at "
                          "offset 53 (line 2)"), got
    assert not (tmp_path / "proj").exists()
