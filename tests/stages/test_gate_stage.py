"""Stage gate: run() on in-memory evidence and main() on the files the other stages write."""

import json
import math

import pandas as pd
import pytest
import yaml

from releval.documents.decision import Decision
from releval.errors import InputError
from releval.params import Params
from stages.common import main
from stages.gate import Inputs, summary
from stages.gate import run as stage_run
from tests import documents
from tests.documents import paired, read_comparison, read_summary
from tests.frames import split_report, write_looks_inputs

COMPARISON = documents.comparison(paired(mean_diff=0.02, ci_low=-0.01, ci_high=0.05))
SLICES = pd.DataFrame({
    "dimension": ["all", "kind"], "slice": ["all", "error_code"],
    "measure": ["nDCG@10", "nDCG@10"], "n": [150, 12], "n_queries": [150, 12],
    "too_small": [False, True], "mean_diff": [0.02, math.nan], "ci_low": [-0.01, math.nan],
    "ci_high": [0.05, math.nan], "p_value": [0.2, math.nan], "p_holm": [0.2, math.nan],
    "verdict": ["inconclusive", "too small"]})
SAFETY = {"top_k": 10, "skipped": [],
          "systems": {"hybrid": {"routes": ["bm25", "dense"], "violations": 0, "own": 0,
                                 "by_reason": {}, "queries_affected": 0, "below_top_k": 0}},
          "no_answer": {s: {"no_answer_queries": 0, "correct_refusals": 0,
                            "correct_refusal_rate": None, "answerable_queries": 150,
                            "no_result": 0, "no_result_rate": 0.0, "threshold": None}
                        for s in ("bm25", "hybrid")}}
METRICS = {"bm25": {"nDCG@10": 0.40, "Judged@10": 0.95},
           "hybrid": {"nDCG@10": 0.42, "Judged@10": 0.9}}
SUMMARY = documents.summary(METRICS)
GATE = {"rules": [{"rule": "no_regression", "measure": "nDCG@10", "max_drop": 0.01},
                  {"rule": "safety"}, {"rule": "no_answer"}, {"rule": "judged", "min": 0.8},
                  {"rule": "latency", "percentile": "p95", "max_ms": 50}]}


def params(gate=GATE, **compare):
    return Params.model_validate({"gate": gate, "compare": compare})


def run(p, comparison, slices, safety, metrics, latency, summary):
    """The stage's run() on the documents as the stages write them."""
    return stage_run(p, Inputs(read_comparison(comparison), slices, safety, metrics,
                     documents.latency(latency), read_summary(summary)))


def test_run_passes_when_every_rule_holds():
    decision = run(params(), COMPARISON, SLICES, SAFETY, METRICS,
                   {"hybrid": {"p95": 50.0}}, SUMMARY).decision
    assert decision["passed"] is True and decision["failed"] == []
    assert [r["passed"] for r in decision["rules"]] == [True] * 5
    assert decision["rules"][2]["reason"] == "not applicable: no no-answer queries"
    assert decision["not_applicable"] == [decision["rules"][2]["name"]]
    assert summary(decision) == "gate: PASS"


def test_run_fails_on_a_too_small_critical_slice_and_unmeasured_latency():
    gate = {"rules": [{**GATE["rules"][0], "slices": ["kind=error_code"]}, GATE["rules"][4]]}
    decision = run(params(gate), COMPARISON, SLICES, SAFETY, METRICS,
                   {"bm25": {"p50": 10.0, "p95": 40.0, "p99": 50.0},  # measured elsewhere
                    "hybrid": {"p50": None, "p95": None, "p99": None}}, SUMMARY).decision
    assert decision["failed"] == ["no_regression nDCG@10 @ kind=error_code", "latency p95"]
    assert summary(decision) == ("gate: FAIL (2 of 3 rules failed: no_regression nDCG@10 @ "
                                 "kind=error_code, latency p95)")


def test_run_rejects_a_comparison_of_other_systems():
    with pytest.raises(InputError, match="comparison's baseline is 'bm25' but compare.baseline "
                                         "is 'dense'"):
        run(params(baseline="dense"), COMPARISON, SLICES, SAFETY, METRICS, {}, SUMMARY)


def test_run_checks_not_worse_on_the_summary_in_the_measure_registry_direction():
    gate = {"rules": [{"rule": "not_worse", "measure": "nDCG@10"},
                      {"rule": "not_worse", "measure": "Judged@10", "tolerance": 0.04}]}
    decision = run(params(gate), COMPARISON, SLICES, SAFETY, METRICS, {}, SUMMARY).decision
    assert [(r["name"], r["passed"]) for r in decision["rules"]] == [
        ("not_worse nDCG@10", True), ("not_worse Judged@10", False)]
    assert decision["rules"][1]["threshold"] == pytest.approx(0.91)
    assert decision["rules"][1]["reason"].endswith("higher is better)")
    with pytest.raises(InputError, match="nope"):
        run(params({"rules": [{"rule": "not_worse", "measure": "nope@3"}]}), COMPARISON,
            SLICES, SAFETY, METRICS, {}, SUMMARY)


def test_uncontrolled_summary_is_labelled():
    uncontrolled = {**COMPARISON, "controlled": False, "differences": ["queries differ"]}
    decision = run(params({"rules": [{"rule": "safety"}]}), uncontrolled, SLICES, SAFETY,
                   METRICS, {}, SUMMARY).decision
    assert decision["controlled"] is False and decision["differences"] == ["queries differ"]
    assert summary(decision) == "gate: PASS [UNCONTROLLED]"


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """The stage's inputs, as the other stages write them, under tmp_path."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"gate": GATE}))
    files = {"data/compare/comparison.json": COMPARISON, "data/safety/safety.json": SAFETY,
             "data/evaluate/metrics.json": METRICS, "data/evaluate/summary.json": SUMMARY,
             "data/health/health.json": documents.health({}),
             "data/split/split_report.json": split_report({"categories": {}}),
             "data/offpolicy/offpolicy.json": {"applicable": False, "reason": "no log"}}
    for path, doc in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(json.dumps(doc))
    (tmp_path / "data/slices").mkdir()
    SLICES.to_parquet(tmp_path / "data/slices/slices.parquet", index=False)
    for folder, system, p95 in (("candidates", "bm25", 0.2), ("candidates", "dense", 30.0),
                                ("fused", "hybrid", 60.0)):
        (tmp_path / "data" / folder / system).mkdir(parents=True)
        (tmp_path / "data" / folder / system / "run_stats.json").write_text(json.dumps(
            documents.run_stats(system, p95=p95, p99=p95)))
    write_looks_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_main_writes_the_decision_and_exits_normally_on_fail(project, capsys):
    main("gate",
         [])  # hybrid's p95 (60 ms, from data/fused) is over 50 ms: FAIL, yet no exit status
    decision = json.loads((project / "data/gate/decision.json").read_text())
    assert decision["passed"] is False and decision["failed"] == ["latency p95"]
    latency = decision["rules"][-1]
    assert latency["value"] == 60.0 and latency["threshold"] == 50.0
    assert capsys.readouterr().out.strip() == "gate: FAIL (1 of 4 rules failed: latency p95)"


def test_main_passes_with_a_looser_latency_bound(project, capsys):
    gate = {"rules": [*GATE["rules"][:4], {"rule": "latency", "max_ms": 60}]}
    (project / "params.yaml").write_text(yaml.safe_dump({"gate": gate}))
    main("gate", [])
    assert json.loads((project / "data/gate/decision.json").read_text())["passed"] is True
    assert capsys.readouterr().out.strip() == "gate: PASS"


def test_main_missing_input_is_one_line_and_exit_2(project, capsys):
    (project / "data/safety/safety.json").unlink()
    with pytest.raises(SystemExit) as stop:
        main("gate", [])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: data/safety/safety.json: file not found"
    assert not (project / "data/gate/decision.json").exists()


@pytest.mark.parametrize(("path", "rename", "key"), [
    ("data/compare/comparison.json", lambda d: d.update(is_controlled=d.pop("controlled")),
     "controlled"),
    ("data/compare/comparison.json", lambda d: d["paired"][0].update(lo=d["paired"][0].pop(
        "ci_low")), "paired.0.ci_low"),
    ("data/evaluate/summary.json", lambda d: d["systems"]["hybrid"]["nDCG@10"].update(
        mean=d["systems"]["hybrid"]["nDCG@10"].pop("value")), "systems.hybrid.nDCG@10.value"),
    ("data/health/health.json", lambda d: d.update(system=d.pop("systems")), "systems"),
    ("data/fused/hybrid/run_stats.json", lambda d: d.update(latency=d.pop("latency_ms")),
     "latency_ms"),
])
def test_main_a_renamed_key_stops_the_stage_naming_the_file_and_the_key(project, capsys, path,
                                                                       rename, key):
    doc = json.loads((project / path).read_text())
    rename(doc)
    (project / path).write_text(json.dumps(doc))
    with pytest.raises(SystemExit) as stop:
        main("gate", [])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"error: {path}: not a ") and f": {key}: Field required" in err
    assert not (project / "data/gate/decision.json").exists()


def test_main_counts_the_recorded_looks_and_this_one(project):
    main("gate", [])  # an empty looks file: this run's look is the first
    first = json.loads((project / "data/gate/decision.json").read_text())["looks"]
    assert (first["split"], first["count"], first["unrecorded"]) == ("test", 1, 0)
    other = {"split": "test", "set": first["digest"], "system": "hybrid", "candidate": "0" * 64,
             "first_seen": "2026-01-01"}
    mine = {**other, "candidate": first["candidate"], "first_seen": "2026-02-01"}
    elsewhere = {**other, "set": "1" * 64, "candidate": "2" * 64}
    (project / "reports/looks.json").write_text(json.dumps(
        {"looks": [other, mine, elsewhere], "unrecorded": 1}))
    (project / "params.yaml").write_text(yaml.safe_dump(
        {"gate": {"rules": [{"rule": "holdout"}]}, "query_set": {"max_looks": 1}}))
    main("gate", [])
    decision = json.loads((project / "data/gate/decision.json").read_text())
    assert decision["looks"] | {"candidate": None} == {
        "split": "test", "digest": first["digest"], "candidate": None, "count": 2,
        "since": "2026-01-01", "unrecorded": 1}
    assert decision["failed"] == ["holdout"]


def test_gate_ppi_reads_the_ppi_interval_of_the_difference_and_says_so():
    """Under judgments.automatic.gate ppi the overall paired row of a measure with a PPI
    difference reads it (here a wider interval that fails where the bootstrap passed);
    under gate human, or for another pair, the bootstrap row decides."""
    figures = {"estimate": 0.02, "ci_low": -0.03, "ci_high": 0.07}
    automatic = {"configured": True, "difference": {"nDCG@10": {
        "ppi": figures, "n_labelled": 75, "n_unlabelled": 75, "baseline": "bm25",
        "candidate": "hybrid"}}}
    gate = {"rules": [{"rule": "no_regression", "measure": "nDCG@10", "max_drop": 0.02}]}

    def decide(mode, doc=automatic):
        p = Params.model_validate({"gate": gate, "judgments": {"automatic": {"gate": mode}}})
        return stage_run(p, Inputs(read_comparison(COMPARISON), SLICES, SAFETY, METRICS,
                         documents.latency({}), read_summary(SUMMARY),
                         automatic=doc)).decision

    ppi = decide("ppi")
    assert ppi["passed"] is False and ppi["rules"][0]["value"] == -0.03
    assert ppi["rules"][0]["reason"].startswith(
        "CI lower bound of ΔnDCG@10 (candidate − baseline) -0.0300 < -0.0200 (PPI interval "
        "(75 human-judged queries, 75 automatic))")
    assert ppi["intervals"] == ("judgments.automatic.gate ppi: the paired rows of nDCG@10 "
                                "read its PPI interval (75 human-judged queries, 75 "
                                "automatic)")
    Decision.check(ppi)
    human = decide("human")
    assert human["passed"] is True and "intervals" not in human
    assert "(n=150)" in human["rules"][0]["reason"]
    other = {"difference": {"nDCG@10": {**automatic["difference"]["nDCG@10"],
                                        "candidate": "dense"}}}
    assert decide("ppi", other)["rules"][0]["value"] == -0.01
    undefined = {"difference": {"nDCG@10": {
        "undefined": "undefined: 1 labelled and 40 unlabelled queries with a defined value "
                     "(2 of each needed)", "baseline": "bm25", "candidate": "hybrid"}}}
    failed = decide("ppi", undefined)["rules"][0]
    assert failed["passed"] is False and failed["value"] is None
    assert "is undefined (PPI interval undefined: 1 labelled" in failed["reason"]
