"""Stage selftest: rows and totals on small demo tables, the one line it prints, and on a
broken route the lines naming each failed relation and exit status 1 after its outputs."""

import json
from dataclasses import replace

import pandas as pd
import pytest
import yaml

import stages.selftest as stage
from releval.data import contracts as S
from releval.demo.generator import generate
from releval.params import Params
from stages.common import main
from stages.selftest import Inputs, run, summary
from tests.selftest.mutants import MUTANTS

SYSTEMS = {"bm25": {"route": "bm25"}, "atire": {"route": "bm25", "method": "atire"},
           "team": {"route": "external", "path": "team.trec"}}
RAW = {"selftest": {"trials": 20, "cases": 45, "oracles": ["pytrec_eval"]},
       "candidates": {"depth": 20, "systems": SYSTEMS},
       "fusion": {"systems": {"hybrid": {"lexical": "bm25", "dense": "atire",
                                          "rrf_k": [60], "weights": [0.5]}}}}
NO_LOG = pd.DataFrame({S.USER_ID: pd.Series([], dtype=str), S.ITEM_ID: pd.Series([], dtype=str),
                       S.TIMESTAMP: pd.Series([], dtype="datetime64[us, UTC]"),
                       S.LABEL: pd.Series([], dtype="int64")})


@pytest.fixture(scope="module")
def demo():
    return generate(n_docs=120, n_queries=30, seed=3)


def test_rows_totals_and_the_line(demo):
    out = run(Params.model_validate(RAW), Inputs(demo.documents, demo.queries, demo.ground_truth,
              NO_LOG))
    assert list(out.rows.columns) == ["system", "route", "relation", "statement", "precondition",
                                      "trials", "reached", "passed", "failed", "ok", "status",
                                      "example"]
    assert out.totals["ok"] and out.totals["relations"] == 2 * 6 + 2 + 4
    assert out.totals["not_applicable"] == 3 and out.totals["failed"] == 0
    assert set(out.totals["systems"]) == {"bm25", "atire", "team", "hybrid", "evaluator"}
    assert out.totals["trials"] == out.rows["trials"].sum()
    oracle = out.totals["differential"]["oracles"]["pytrec_eval"]
    assert out.totals["differential"]["ok"] and oracle["cases"] > 0 and not oracle["differ"]
    assert set(out.differential["oracle"]) == {"pytrec_eval"}
    assert summary(out) == [f"selftest: 18 relations × {out.totals['trials']:,} trials, "
                            f"{out.totals['reached']:,} reached, all passed (3 not "
                            "applicable)",
                            f"selftest: differential parity: pytrec_eval {oracle['version']}: "
                            f"{oracle['cases']:,} comparisons, {oracle['measures']} measures × "
                            f"{oracle['paths']} paths, all agree"]


def test_an_oracle_that_differs_fails_and_one_not_installed_is_said_not_to_agree(demo,
                                                                                 monkeypatch):
    def differential(**kwargs):
        return pd.DataFrame([
            {"oracle": "pytrec_eval", "version": "1", "measure": "P@10", "path": "score_ties",
             "cases": 5, "status": "differ"},
            {"oracle": "ranx", "version": None, "measure": "P@10", "path": "score_ties",
             "cases": 0, "status": "not installed"}])
    monkeypatch.setattr(stage, "differential", differential)
    out = run(Params.model_validate(RAW), Inputs(demo.documents, demo.queries, demo.ground_truth,
              NO_LOG))
    assert not out.totals["ok"] and out.totals["differential"]["oracles"]["ranx"] == {
        "version": None, "measures": 0, "paths": 0, "cases": 0, "agree": 0, "differ": 0}
    lines = summary(out)
    assert "not installed: ranx" in lines[1]
    assert lines[2] == ("  FAILED differential pytrec_eval: 1 measure × path rows differ "
                        "(differential.parquet)")


def test_a_broken_route_stops_the_pipeline_after_writing_its_outputs(demo, tmp_path,
                                                                     monkeypatch, capsys):
    raw = tmp_path / "data/raw"
    raw.mkdir(parents=True)
    for name, table in (("documents", demo.documents), ("queries", demo.queries),
                        ("judgments", demo.ground_truth), ("interactions", NO_LOG)):
        table.to_parquet(raw / f"{name}.parquet", index=False)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(RAW, sort_keys=False))
    broken, _ = MUTANTS["term_permutation"]
    monkeypatch.setattr(stage, "run",
                        lambda p, inputs: run(p, replace(inputs, subjects=broken)))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main("selftest", [])
    assert stop.value.code == 1
    lines = capsys.readouterr().out.splitlines()
    assert "not passed" in lines[0] and "all agree" in lines[1]
    assert [line.split(":")[0] for line in lines[2:]] == ["  FAILED bm25 term_permutation",
                                                         "  FAILED atire term_permutation"]
    rows = pd.read_parquet(tmp_path / "data/selftest/selftest.parquet")
    doc = json.loads((tmp_path / "data/selftest/selftest.json").read_text())
    assert not doc["ok"] and doc["not_passed"] == 2 and len(rows) == 21
