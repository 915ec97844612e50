"""The recommendation mode end to end: the Prefect flow over the real DVC stages on a small
recommendation demo (examples/recsys-demo.yaml, shrunk), in a copy of this project."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from prefect.testing.utilities import prefect_test_harness

from flows.pipeline import pipeline
from releval.data import contracts as S
from tests.flows.test_pipeline import make_project
from tests.projects import HARNESS_S, SELFTEST

SMALL = {"prepare": {"n_docs": 250, "n_queries": 500}, "candidates": {"depth": 30},
         "failures": {"deep_k": 100}, "compare": {"resamples": 2000}, "selftest": SELFTEST}
TEAMS = ("team_v1", "team_v2")
ROUTES = ("popularity", "cooccurrence", "content", "hybrid")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    base = make_project(tmp_path_factory.mktemp("recsys"), SMALL, "examples/recsys-demo.yaml")
    cwd = Path.cwd()
    os.chdir(base)
    try:
        with prefect_test_harness(HARNESS_S):
            state = pipeline("params.yaml", return_state=True)
    finally:
        os.chdir(cwd)
    return base, state


def test_every_stage_runs_and_validates_on_users_as_queries(project):
    root, state = project
    assert state.is_completed(), state.message
    record = dict(state.result())
    assert record.pop("decision") in {"PASS", "FAIL"} and record.pop("receipt")
    assert set(record.values()) == {"ran"}
    reports = {p.name: json.loads(p.read_text()) for p in (root / "data/validation").rglob("*")
               if p.suffix == ".json"}
    assert {"interactions.interactions.json", "team_runs.team_runs.json",
            "reliability.reliability.json", "horizons.horizons.json",
            "horizons.horizon_metrics.json"} <= set(reports)
    assert all(r["success"] for r in reports.values())
    queries = pd.read_parquet(root / "data/raw/queries.parquet")
    split = pd.read_parquet(root / "data/split/split.parquet")
    assert set(split[S.SPLIT]) == {"validation", "test"}
    assert (queries[S.QUERY_ID] == queries[S.USER_ID] + "@" + queries[S.QUERY_ID].map(
        split.set_index(S.QUERY_ID)[S.SPLIT])).all()  # a user at each cut is one query
    assert queries.groupby(S.USER_ID).size().max() <= 2


def test_measures_are_scored_or_not_applicable_never_made_up(project):
    root, _ = project
    summary = json.loads((root / "data/evaluate/summary.json").read_text())
    block = summary["recommendation"]
    assert block["users"] == summary["queries"] > block["undefined_users"] > 0
    systems = summary["systems"]
    assert set(systems) == {*ROUTES, *TEAMS}
    for system in ROUTES:  # scores, no probabilities: calibration is not applicable
        for measure in ("LogLoss", "Brier", "ECE", "ECE(binning='mass')"):
            entry = systems[system][measure]
            assert entry["applicable"] is False and entry["value"] is None
    ece = {t: systems[t]["ECE"]["value"] for t in TEAMS}
    assert 0 <= ece["team_v1"] < ece["team_v2"]  # calibrated vs overconfident
    for system in systems:
        entry = systems[system]["nDCG@10"]
        assert entry["n"] + entry["undefined"] == summary["queries"]
        assert 0 <= systems[system]["Coverage@10"]["value"] <= 1
        assert systems[system]["Coverage@10"]["level"] == "system"
    metrics = json.loads((root / "data/evaluate/metrics.json").read_text())
    assert metrics["popularity"]["ECE"] is None and metrics["team_v1"]["ECE"] is not None
    diagram = pd.read_parquet(root / "data/evaluate/reliability.parquet")
    assert set(diagram[S.SYSTEM]) == set(TEAMS) and set(diagram["binning"]) == {"width", "mass"}


def test_leakage_comparison_slices_gate_and_report(project):
    root, state = project
    leakage = json.loads((root / "data/split/split_report.json").read_text())["random_split"]
    assert set(leakage["systems"]) == {"popularity", "cooccurrence"}
    assert all(set(v["inflation"]) == {"HR@10", "nDCG@10"} for v in leakage["systems"].values())
    comparison = json.loads((root / "data/compare/comparison.json").read_text())
    assert (comparison["baseline"], comparison["candidate"]) == TEAMS
    assert {r["measure"] for r in comparison["paired"]} == {"nDCG@10", "Hit@10", "R@10"}
    horizons = comparison["horizons"]  # recommend.horizons_days: [7, 28]
    assert horizons["days"] == [7, 28] and len(horizons["rows"]) == 6
    assert {f["measure"] for f in horizons["novelty"]} == {"nDCG@10", "Hit@10", "R@10"}
    slices = pd.read_parquet(root / "data/slices/slices.parquet")
    assert {"history", "returning", "country", "holdout"} <= set(slices["dimension"])
    decision = json.loads((root / "data/gate/decision.json").read_text())
    names = [r["name"] for r in decision["rules"]]
    assert "not_worse ECE" in names and "not_worse Coverage@10" in names
    assert decision["passed"] == (state.result()["decision"] == "PASS")
    page = (root / "reports/index.html").read_text()
    assert 'id="plot-reliability"' in page and "not applicable" in page
    assert 'id="plot-horizons"' in page and "<h3>By horizon</h3>" in page
    assert "random" in (root / "reports/summary.md").read_text()
