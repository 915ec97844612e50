"""``releval init`` through the command reads the shape of the data before it writes a rule:
positive-only qrels get no judged bound (the params comment says why), and qrels naming
documents the corpus lacks are refused as ``prepare`` would refuse them, before anything is
written."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from releval.cli import app


def beir(folder: Path, grades: list[int], unknown: int = 0) -> Path:
    """A small BEIR folder: 20 queries, 60 documents, each query judging three documents
    with ``grades`` (cycled); ``unknown`` judgments name documents the corpus lacks."""
    (folder / "qrels").mkdir(parents=True)
    words = ["retrieval", "ranking", "index", "query", "document", "corpus", "score"]
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": f"doc {i}",
                    "text": " ".join(words[(i + j) % 7] for j in range(5))}) + "\n"
        for i in range(60)))
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"q{i}", "text": f"{words[i % 7]} {words[(i + 2) % 7]}"}) + "\n"
        for i in range(20)))
    rows = [f"q{q}\td{(q * 3 + j) % 60}\t{grades[(q + j) % len(grades)]}"
            for q in range(20) for j in range(3)]
    rows += [f"q{q}\tmissing{q}\t1" for q in range(unknown)]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "\n".join(rows) + "\n")
    return folder


def init(tmp_path: Path, folder: Path):
    return CliRunner().invoke(app, ["init", str(tmp_path / "proj"), "--corpus", str(folder)])


def test_positive_only_qrels_get_no_judged_bound_and_the_comment_says_why(tmp_path,
                                                                           monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    done = init(tmp_path, beir(tmp_path / "beir", [1]))
    assert done.exit_code == 0, done.output
    text = (tmp_path / "proj" / "params.yaml").read_text()
    rules = [r["rule"] for r in yaml.safe_load(text)["gate"]["rules"]]
    assert "judged" not in rules and "no_regression" in rules
    comment = " ".join(line.strip().lstrip("#").strip() for line in text.splitlines()
                       if line.strip().startswith("#"))
    assert "judged (the qrels are positive-only: all 60 judgments give one grade: " \
           "Judged@10 would measure precision" in comment


def test_graded_qrels_with_judged_non_relevant_documents_keep_the_judged_bound(tmp_path):
    done = init(tmp_path, beir(tmp_path / "beir", [0, 0, 2]))
    assert done.exit_code == 0, done.output
    rules = yaml.safe_load((tmp_path / "proj" / "params.yaml").read_text())["gate"]["rules"]
    assert {"rule": "judged", "measure": "Judged@10", "min": 0.8} in rules


def test_qrels_naming_documents_the_corpus_lacks_are_refused_before_anything_is_written(
        tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    folder = beir(tmp_path / "beir", [1], unknown=3)
    done = init(tmp_path, folder)
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.output
    assert done.stderr.startswith(f"error: {folder}: 3 of 63 judgments")
    assert "name documents not in the corpus (first: q0/missing0)" in done.stderr
    assert "prepare.max_unknown_docs" in done.stderr
    assert not (tmp_path / "proj").exists()


def test_a_run_answering_none_of_the_queries_is_refused_naming_its_file(tmp_path,
                                                                        monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    folder = beir(tmp_path / "beir", [0, 1])
    (tmp_path / "other.trec").write_text("".join(f"x{q} Q0 d{q} 1 1.0 other\n"
                                                 for q in range(10)))
    (tmp_path / "some.trec").write_text("q1 Q0 d3 1 1.0 some\nx9 Q0 d1 1 1.0 some\n")
    done = CliRunner().invoke(app, ["init", str(tmp_path / "proj"), "--corpus", str(folder),
                                    "--run", f"other={tmp_path / 'other.trec'}"])
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"error: {tmp_path / 'other.trec'}: none of its 10 queries "
                                  f"is among the queries of {folder} (20; the run's first: "
                                  "'x0')")
    assert not (tmp_path / "proj").exists()
    some = CliRunner().invoke(app, ["init", str(tmp_path / "proj"), "--corpus", str(folder),
                                    "--run", f"some={tmp_path / 'some.trec'}"])
    assert some.exit_code == 0, some.output  # one query in common: evaluated, the rest counted


def test_runs_only_a_run_of_other_queries_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 d{d} {int(d == q)}\n" for q in range(5) for d in range(4)))
    (tmp_path / "a.trec").write_text("".join(f"{q} Q0 d{q} 1 1.0 a\n" for q in range(5)))
    (tmp_path / "b.trec").write_text("".join(f"t{q} Q0 d{q} 1 1.0 b\n" for q in range(5)))
    done = CliRunner().invoke(app, ["init", str(tmp_path / "proj"), "--qrels", str(qrels),
                                    "--run", f"a={tmp_path / 'a.trec'}",
                                    "--run", f"b={tmp_path / 'b.trec'}"])
    assert done.exit_code == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"error: {tmp_path / 'b.trec'}: none of its 5 queries is "
                                  f"among the queries {qrels} judges")
