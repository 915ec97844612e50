"""The CLI prints trec_eval's numbers (to its 4 decimals) and one-line errors."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from typer.testing import CliRunner

from releval.cli import app

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"
EXAMPLES = Path(__file__).resolve().parents[2] / "releval" / "examples"
TREC_MEASURES = ["ndcg", "ndcg_cut.10", "P.5,10", "recall.100", "recip_rank", "map",
                 "map_cut.100", "Rprec", "bpref", "success.1", "num_ret", "num_rel",
                 "num_rel_ret"]
runner = CliRunner()


def cli(*args):
    return runner.invoke(app, ["metrics", *map(str, args)])


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory):
    """Cranfield's graded qrels and a random-score run (with ties) in TREC format."""
    if not CRANFIELD.exists():
        pytest.fail(f"shared test data missing: {CRANFIELD}")
    tmp = tmp_path_factory.mktemp("cran")
    qrels = pd.read_csv(CRANFIELD / "qrels" / "test.tsv", sep="\t", dtype=str)
    qrels.columns = ["query_id", "doc_id", "grade"]
    rng = np.random.default_rng(3)
    rows = []
    for q in sorted(qrels.query_id.unique(), key=int)[:150]:  # 75 queries left to -c
        docs = rng.choice(np.arange(1, 1401), 120, replace=False)
        docs = np.r_[qrels.doc_id[qrels.query_id == q].astype(int).to_numpy()[:3], docs]
        for i, d in enumerate(dict.fromkeys(docs.tolist())):
            rows.append(f"{q} Q0 {d} {i + 1} {rng.integers(0, 40) / 4} test")
    (tmp / "qrels.txt").write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.grade}\n"
                                           for r in qrels.itertuples()))
    (tmp / "run.txt").write_text("\n".join(rows) + "\n")
    qd, rd = {}, {}
    for r in qrels.itertuples():
        qd.setdefault(r.query_id, {})[r.doc_id] = int(r.grade)
    for line in rows:
        q, _, d, _, s, _ = line.split()
        rd.setdefault(q, {})[d] = float(s)
    expected = pytrec_eval.RelevanceEvaluator(qd, set(TREC_MEASURES)).evaluate(rd)
    return tmp, expected, qd


def parse_trec(output: str) -> dict:
    out = {}
    for line in output.strip().splitlines():
        name, qid, val = (p.strip() for p in line.split("\t"))
        out[(name, qid)] = val
    return out


def test_table_shows_counts_and_json_carries_definitions():
    table = cli(EXAMPLES / "qrels.txt", EXAMPLES / "run.txt")
    assert table.exit_code == 0
    assert "undefined" in table.stdout and "nDCG@10" in table.stdout
    assert "0.3271" in table.stdout  # nDCG@10 over q1, q2 and the empty q4
    doc = json.loads(cli(EXAMPLES / "qrels.txt", EXAMPLES / "run.txt", "--format",
                         "json").stdout)
    assert doc["measures"]["nDCG@10"]["undefined"] == 1
    assert doc["measures"]["nDCG@10"]["empty"] == 1
    assert "log2(i + 1)" in doc["definitions"]["nDCG@10"]


def test_csv_per_query_is_a_long_table(tmp_path):
    result = cli(EXAMPLES / "qrels.txt", EXAMPLES / "run.txt", "-q", "--format", "csv",
                 "-m", "AP")
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "query_id,measure,value" and lines[1] == "q1,AP,0.5"


def test_bad_input_is_one_line_with_file_line_and_rule(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 s\nq1 Q0 d1 2 0.5 s\n")
    result = cli(EXAMPLES / "qrels.txt", run)
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in result.output
    assert f"{run}:line 2: duplicate doc_id 'd1'" in message
    result = cli(EXAMPLES / "qrels.txt", EXAMPLES / "run.txt", "-m", "nDCG@x")
    assert result.exit_code == 2 and "unknown measure" in result.stderr
