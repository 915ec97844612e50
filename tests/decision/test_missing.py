"""Queries missing from a run: counted on every surface, and the comparison's query set
chosen and stated (``releval.decision.missing``), through the library and ``releval
compare``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from releval.cli import app
from releval.decision.missing import MissingQueries, answered, chosen
from releval.metrics.engine import evaluate

QUERIES = [f"q{i:02d}" for i in range(30)]


def _qrels() -> pd.DataFrame:
    rows = [(q, f"d{d}", int(d % 4 == 0)) for q in QUERIES for d in range(12)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])


def _run(skip: set[str], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(q, f"d{d}", r + 1, 10.0 - r) for q in QUERIES if q not in skip
            for r, d in enumerate(rng.permutation(12)[:10])]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])


def _write(path, run: pd.DataFrame, tag: str) -> None:
    path.write_text("".join(f"{r.query_id} Q0 {r.doc_id} {r.rank} {r.score} {tag}\n"
                            for r in run.itertuples()))


# the battery's three shapes: the candidate lacks some, both lack the same, each lacks others
SHAPES = {"candidate lacks": (set(), set(QUERIES[:4])),
          "both lack": (set(QUERIES[:5]), set(QUERIES[:5])),
          "each lacks others": (set(QUERIES[:3]), set(QUERIES[3:7]))}


def test_the_engine_counts_the_judged_queries_a_run_misses():
    result = evaluate(_run(set(QUERIES[:6]), 1), _qrels(), ["nDCG@10", "Judged@10"])
    c = result.counts
    assert (c["queries_judged"], c["queries_missing"]) == (30, 6)
    summary = result.summary.set_index("measure")
    assert summary.loc["nDCG@10", "empty"] == 6  # scored 0, counted


def test_judged_at_k_is_undefined_for_a_query_nobody_judged():
    run = _run(set(), 2)
    result = evaluate(run, _qrels()[lambda f: f.query_id != "q00"], ["Judged@10"],
                      queries=QUERIES)
    values = result.per_query.set_index("query_id")["value"]
    assert np.isnan(values["q00"]) and values.drop("q00").notna().all()
    assert result.summary.set_index("measure").loc["Judged@10", "n"] == 29


@pytest.mark.parametrize("shape", SHAPES)
def test_each_query_set_keeps_what_it_says(shape):
    skip_b, skip_c = SHAPES[shape]
    judged = set(QUERIES)
    answers = {"b": judged - skip_b, "c": judged - skip_c}
    kept, block = chosen("judged", judged, answers)
    assert kept == judged and not block["complete"]
    assert block["missing"] == {"b": len(skip_b), "c": len(skip_c)}
    assert "scored 0" in block["label"]
    kept, block = chosen("common", judged, answers)
    assert kept == judged - skip_b - skip_c
    assert block["left_out"] == len(skip_b | skip_c) and block["compared"] == len(kept)
    with pytest.raises(MissingQueries, match=f"{len(skip_b | skip_c)} of 30 judged"):
        chosen("refuse", judged, answers)


def test_a_complete_comparison_says_so_and_refuse_lets_it_through():
    judged = set(QUERIES)
    kept, block = chosen("refuse", judged, {"b": judged, "c": judged | {"extra"}})
    assert kept == judged and block["complete"]
    assert block["label"] == "all 30 judged queries, answered by every run"
    assert answered(judged | {"extra"}, judged).not_judged == 1


def _files(tmp_path, skip_b: set, skip_c: set):
    """qrels.txt, base.run (missing ``skip_b``) and cand.run (missing ``skip_c``) in
    ``tmp_path``; returns the qrels' path."""
    qrels = tmp_path / "qrels.txt"
    _qrels().assign(it=0)[["query_id", "it", "doc_id", "grade"]].to_csv(
        qrels, sep=" ", header=False, index=False)
    _write(tmp_path / "base.run", _run(skip_b, 3), "base")
    _write(tmp_path / "cand.run", _run(skip_c, 4), "cand")
    return qrels


@pytest.mark.parametrize("shape", SHAPES)
def test_compare_on_runs_counts_the_missing_and_labels_the_comparison(tmp_path, monkeypatch,
                                                                     shape):
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: whole lines
    skip_b, skip_c = SHAPES[shape]
    qrels = _files(tmp_path, skip_b, skip_c)
    runner = CliRunner()
    args = ["compare", str(tmp_path / "base.run"), str(tmp_path / "cand.run"),
            "--qrels", str(qrels), "--resamples", "200"]
    judged = runner.invoke(app, [*args, "--format", "json"])
    assert judged.exit_code == 0, judged.output
    doc = json.loads(judged.stdout)
    assert doc["query_set"]["missing"] == {"base": len(skip_b), "cand": len(skip_c)}
    assert {r["n"] for r in doc["paired"]} == {30}
    table = runner.invoke(app, args)
    assert "MISSING QUERIES SCORED 0" in table.stdout
    assert f"missing: base {len(skip_b)}, cand {len(skip_c)}" in table.stdout
    common = json.loads(runner.invoke(app, [*args, "--query-set", "common", "--format",
                                            "json"]).stdout)
    assert {r["n"] for r in common["paired"]} == {30 - len(skip_b | skip_c)}
    refused = runner.invoke(app, [*args, "--query-set", "refuse"])
    assert refused.exit_code == 2
    assert refused.stderr.count("\n") == 1 and "--query-set common" in refused.stderr


@pytest.mark.parametrize("shape", SHAPES)
def test_compare_with_a_gate_labels_every_decision_on_missing_queries(tmp_path, monkeypatch,
                                                                       shape):
    """``compare --qrels --gate``: a rule decided over judged queries a run misses says so in
    its reason, the decision keeps the query set (not complete), and the query_set rule holds
    in the gate too (common: the queries both answer; refuse: one line)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    skip_b, skip_c = SHAPES[shape]
    qrels = _files(tmp_path, skip_b, skip_c)
    (tmp_path / "rules.yaml").write_text(
        "rules:\n  - {rule: no_regression, measure: nDCG@10, max_drop: 0.5}\n")
    args = ["compare", str(tmp_path / "base.run"), str(tmp_path / "cand.run"), "--qrels",
            str(qrels), "--resamples", "200", "--gate", str(tmp_path / "rules.yaml")]
    runner = CliRunner()
    done = runner.invoke(app, [*args, "--format", "json"])
    assert done.exit_code in (0, 1), done.output
    gate = json.loads(done.stdout)["gate"]
    missing = len(skip_b | skip_c)
    assert gate["query_set"]["complete"] is False
    assert gate["query_set"]["missing"] == {"base": len(skip_b), "cand": len(skip_c)}
    label = (f"all 30 judged queries, {missing} missing from a run and scored 0 there "
             f"(missing: base {len(skip_b)}, cand {len(skip_c)}): not like for like")
    assert all(label in r["reason"] for r in gate["rules"]), gate["rules"]
    table = runner.invoke(app, args)
    assert "MISSING QUERIES SCORED 0" in table.stdout and label in " ".join(table.stdout.split())
    common = json.loads(runner.invoke(app, [*args, "--query-set", "common", "--format",
                                            "json"]).stdout)["gate"]
    assert common["query_set"]["compared"] == 30 - missing
    assert all(f"n={30 - missing}" in r["reason"] for r in common["rules"])
    refused = runner.invoke(app, [*args, "--query-set", "refuse"])
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1
    assert f"{missing} of 30 judged" in refused.stderr and "Traceback" not in refused.output
