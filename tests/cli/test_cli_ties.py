"""``releval metrics --ties``: the example of docs/cli.md in every format, and a ranked run."""

import json

import pytest
from typer.testing import CliRunner

from releval.cli import app

runner = CliRunner()


def cli(*args):
    return runner.invoke(app, ["metrics", *map(str, args)])


@pytest.fixture()
def example(tmp_path):
    """docs/cli.md's example: nine documents, then the relevant d10 tied with d11 at 1.5."""
    (tmp_path / "qrels.txt").write_text("q1 0 d10 1\n")
    (tmp_path / "run.txt").write_text(
        "".join(f"q1 Q0 a{i} {i} {20 - i} bm25\n" for i in range(1, 10))
        + "q1 Q0 d10 10 1.5 bm25\nq1 Q0 d11 11 1.5 bm25\n")
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


MEASURES = ("-m", "R@10", "-m", "RR", "-m", "R@100")


def lines(text: str) -> list[str]:
    return [" ".join(line.replace("│", " ").split()) for line in text.splitlines()]


def test_table_puts_worst_and_best_beside_the_value(example):
    result = cli(*example, *MEASURES, "--ties")
    assert result.exit_code == 0, result.output
    out = lines(result.stdout)
    assert "R@10 0.0000 [0.0000, 1.0000] 1/1 1" in out
    assert "RR 0.0909 [0.0909, 0.1000] 1/1 1" in out
    assert "R@100 1.0000 [1.0000, 1.0000] 0/1 0" in out
    assert "1 tie group(s) of 2 documents in 1 of 1 queries." in " ".join(out)
    assert "summary (mean over n queries" in result.stdout  # the usual table comes first
    assert "score ties per query" not in result.stdout


def test_per_query_lists_the_pairs_a_tie_could_move(example):
    out = lines(cli(*example, *MEASURES, "--ties", "-q").stdout)
    assert "q1 R@10 0.0000 [0.0000, 1.0000] ✓" in out
    assert "q1 RR 0.0909 [0.0909, 0.1000] ✓" in out
    assert not any(line.startswith("q1 R@100 ") for line in out)  # inside the cutoff


def test_json_adds_a_ties_object(example):
    result = cli(*example, *MEASURES, "--ties", "-q", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["measures"]["R@10"]["value"] == 0.0 and "R@10" in doc["definitions"]
    ties = doc["ties"]
    assert ties["ranked_by"] == "score" and ties["counts"]["tie_groups"] == 1
    assert ties["measures"]["R@10"] == {"worst": 0.0, "best": 1.0, "ties": 1, "changed": 1,
                                        "exact": True}
    assert {"query_id": "q1", "measure": "R@10", "worst": 0.0, "best": 1.0, "tied": True,
            "changed": True} in ties["per_query"]


def test_csv_writes_the_ties_table_and_trec_keeps_stdout_for_trec_eval_lines(example):
    summary = cli(*example, *MEASURES, "--ties", "--format", "csv").stdout.splitlines()
    assert summary[0] == "measure,value,worst,best,n,ties,changed,exact"
    assert summary[1] == "R@10,0.0,0.0,1.0,1,1,1,True"
    per_query = cli(*example, *MEASURES, "--ties", "-q", "--format", "csv").stdout.splitlines()
    assert per_query[0] == "query_id,measure,value,worst,best,tied,changed"
    assert per_query[1] == "q1,R@10,0.0,0.0,1.0,True,True"
    trec = cli(*example, *MEASURES, "--ties", "--format", "trec")
    assert all(len(line.split("\t")) == 3 for line in trec.stdout.strip().splitlines())
    assert "[0.0000, 1.0000]" in trec.stderr and "[0.0000, 1.0000]" not in trec.stdout


def test_a_ranked_run_has_no_ties_to_report(tmp_path, example):
    run = tmp_path / "run.csv"
    run.write_text("query_id,doc_id,rank,score\nq1,d11,1,1.5\nq1,d10,2,1.5\n")
    result = cli(example[0], run, "-m", "P@1", "--ties")
    assert result.exit_code == 0, result.output
    assert "ranks decide the order: no score tie can change a value" in " ".join(
        result.stdout.split())
    doc = json.loads(cli(example[0], run, "-m", "P@1", "--ties", "--format", "json").stdout)
    assert doc["ties"]["ranked_by"] == "rank"
    assert doc["ties"]["measures"]["P@1"] == {"worst": 0.0, "best": 0.0, "ties": 0,
                                              "changed": 0, "exact": True}
