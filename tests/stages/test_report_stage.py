"""Stage report: run() renders both markdown documents and the HTML page from small hand-made
inputs; main() reads the stages' files and writes the three reports side by side."""

import hashlib
import json
import math
import re

import pandas as pd
import pytest
import yaml

from releval.diagnosis.worksheet import WORKSHEET_COLUMNS
from releval.params import Params
from stages.common import main
from stages.report import Outputs, run
from tests.documents import whole
from tests.report import sample

MEASURE = {"value": 0.5, "n": 40, "undefined": 2, "empty": 1}
SUMMARY = {
    "splits": ["test"], "queries": 42, "skipped": ["empty_sys"], "depth": 100,
    "qrels": "hand-made", "unjudged": 7,
    "systems": {"bm25": {"nDCG@10": MEASURE, "R@100": {**MEASURE, "value": None}},
                "hybrid": {"nDCG@10": {**MEASURE, "value": 0.61234}}},
    "judgments": {"invisible_left_out": 3, "relevant_invisible_left_out": 1},
    "route_hits": {"bm25|dense": {"bm25-only": 4, "both": 9, "dense-only": 2, "neither": 1}},
}
SPLIT = sample.SPLIT
STATS = {"bm25": {"route": "bm25", "depth": 100,
                  "candidates_per_query": {"mean": 64.25, "empty": 3},
                  "latency_ms": {"p50": 0.25, "p95": 0.5, "p99": None}},
         "hybrid": {"route": "hybrid", "depth": 100,
                    "candidates_per_query": {"mean": 80.0, "empty": 0},
                    "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0},
                    "fusion": {"method": "rrf", "k": 10}, "tuning": "tuned on 5 queries"}}
INGEST = {"qrels": "hand-made", "rows_in": 5, "accepted_new": 3, "already_accepted": 1,
          "quarantined": 1, "by_reason": {"grade missing": 1, "unknown blind id": 0}}
AGREEMENT = {"judges": 2, "mean_pairwise_kappa_weighted": 0.5, "pairs": [],
             "low_agreement": [{"annotator_a": "a", "annotator_b": "b", "n": 12,
                                "kappa": 0.1}]}
PAIRED = {"measure": "nDCG@10", "n": 40, "mean_baseline": 0.5, "mean_candidate": 0.61234,
          "mean_diff": 0.11234, "ci_low": 0.01, "ci_high": None, "wins": 20, "ties": 15,
          "losses": 5, "p_value": 0.004, "p_holm": math.nan, "min_effect": 0.02,
          "verdict": "improved", "resamples": 500, "seed": 3, "units": 40}
COMPARISON = {"baseline": "bm25", "candidate": "hybrid", "controlled": False,
              "differences": ["budget: 100 vs 50"], "measures": ["nDCG@10"], "unit": "query",
              "strata": "kind",
              "conditions": {"bm25": {"budget": 100, "qrels": "abc"}, "hybrid": {}},
              "paired": [PAIRED],
              "aggregates": {"bm25": {"nDCG@10": {"n": 40, "n_undefined": 0, "n_slices": 2,
                                                  "macro": 0.5, "traffic_weighted": 0.45,
                                                  "equal_slice": 0.4, "micro": None}}},
              "composition": {"nDCG@10": {"before": 0.45, "after": 0.5, "delta": 0.05,
                                          "rate": 0.0, "mix": 0.05, "equal_slice_before": 0.4,
                                          "equal_slice_after": 0.4, "mix_shift": True,
                                          "slices": [], "controlled": True,
                                          "note": "paired: the same queries"}}}
SLICES = pd.DataFrame({
    "dimension": ["all", "kind", "kind"], "slice": ["all", "typo", "error_code"],
    "measure": ["nDCG@10"] * 3, "n": [40, 25, 3], "mean_bm25": [0.5, 0.4, math.nan],
    "mean_hybrid": [0.61, 0.55, math.nan], "too_small": [False, False, True],
    "mean_diff": [0.11, 0.15, math.nan], "ci_low": [0.01, -0.02, math.nan],
    "ci_high": [0.2, 0.3, math.nan], "p_holm": [0.01, 0.2, math.nan],
    "verdict": ["improved", "inconclusive", "too small"]})
SAFETY = {"top_k": 10,
          "systems": {"hybrid": {"routes": ["hybrid", "bm25"], "violations": 2, "own": 1,
                                 "by_reason": {"acl": 2}, "below_top_k": 1,
                                 "queries_affected": 1}},
          "no_answer": {"hybrid": {"no_answer_queries": 4, "correct_refusals": 1,
                                   "correct_refusal_rate": 0.25, "answerable_queries": 40,
                                   "no_result": 2, "no_result_rate": 0.05, "threshold": None}}}
FAILURES = {"baseline": "bm25", "candidate": "hybrid", "k": 10, "deep_k": 1000, "queries": 40,
            "chunk_map": False,
            "by_layer": [{"layer": "ranking", "baseline": 9, "candidate": 4, "difference": -5}],
            "safety": {"bm25": 0, "hybrid": 2},
            "review": {"reviewed": 3, "rows_in": 4, "unreviewed": 0, "quarantined": 1,
                       "by_reason": {}, "not_in_file": 0, "disagreement_rate": 1 / 3}}
GATE = {"passed": False, "baseline": "bm25", "candidate": "hybrid", "controlled": False,
        "rules": [{"name": "safety hybrid", "passed": False, "value": 2, "threshold": 0,
                   "reason": "2 violation(s) > max 0"},
                  {"name": "latency p95", "passed": True, "value": 0.123456,
                   "threshold": None, "reason": "fast"}]}


PARAMS = Params.model_validate({"slices": {"min_n": 20}})
ABSENT = dict.fromkeys(("per_query_diff", "curves", "violations", "failure_rows", "queries",
                        "receipt", "automatic", "selftest", "offpolicy", "offpolicy_estimates",
                        "offpolicy_weights"))


def inputs(sheet: pd.DataFrame | None = None, **changes):
    """This module's documents as the stage reads them (each completed with the sample's
    whole document, ``sample.model``), every optional input absent unless given."""
    sheet = pd.DataFrame(columns=list(WORKSHEET_COLUMNS)) if sheet is None else sheet
    return sample.inputs(**ABSENT | dict(
        summary=whole("summary", SUMMARY), split_report=SPLIT,
        source={"source": "hand-made data"},
        stats={s: whole("run_stats", doc | {"system": s}) for s, doc in STATS.items()},
        ingest=INGEST, agreement=AGREEMENT,
        comparison=whole("comparison", COMPARISON) | {"family": None},
        slices=SLICES, safety=SAFETY, failures=FAILURES, sheet=sheet,
        gate=whole("decision", GATE)) | changes)


def render(sheet: pd.DataFrame | None = None) -> Outputs:
    return run(PARAMS, inputs(sheet))


def written(field: str, doc: dict) -> str:
    """``doc`` as the stage that writes it would: whole, as JSON."""
    return json.dumps(sample.model(field, doc).model_dump(mode="json"))


@pytest.fixture(scope="module")
def out() -> Outputs:
    return render()


def test_summary_is_the_page_then_a_blank_line_then_the_decision(out):
    page, decision = out.summary.split("\n\n## Comparison", 1)
    assert page.startswith("# releval summary\n\nData: hand-made data · qrels: hand-made · "
                           "evaluated split(s): test (42 queries)\n")
    assert "## Comparison" + decision == out.decision
    assert out.decision.endswith("| ✓ | latency p95 | 0.1235 | — | fast |\n")


def test_summary_page_rows_per_system_candidates_judgments_route_hits_and_split(out):
    lines = out.summary.splitlines()
    assert "| system | nDCG@10 | R@100 | n | undefined | missing |" in lines
    assert "| bm25 | 0.5000 | — | 40 | 2 | ? |" in lines
    assert "| hybrid | 0.6123 | — | 40 | 2 | ? |" in lines
    assert "Skipped (empty run): empty_sys" in lines
    assert "| bm25 | bm25 | 100 | 64.2 | 3 | 0.25 | 0.50 | — |  |" in lines
    assert ('| hybrid | hybrid | 100 | 80.0 | 0 | 1.00 | 2.00 | 3.00 | '
            '{"method": "rrf", "k": 10} (tuned on 5 queries) |') in lines
    assert ("Rows in 5 = accepted 3 + already accepted 1 + quarantined 1 (grade missing: 1)."
            in lines)
    assert ('Low agreement: {"annotator_a": "a", "annotator_b": "b", "n": 12, "kappa": 0.1}'
            in lines)
    assert "Unjudged top-k candidates kept for the next pooling round: 7." in lines
    assert "## Which route found each relevant document (bm25 vs dense)" in lines
    assert "| 4 | 9 | 2 | 1 |" in lines
    assert "Method: quantiles · cuts: 2025-01-01 → 2025-02-01" in lines
    assert "| | train | test |" in lines and "| typo | 0 | 2 |" in lines
    assert ("- 1 source(s) relevant in both train and test, affecting 2 test queries: kb-1"
            in lines)


def test_decision_labels_an_uncontrolled_comparison_and_writes_undefined_as_a_dash(out):
    lines = out.decision.splitlines()
    assert lines[0] == "## Comparison: hybrid vs bm25 (UNCONTROLLED)"
    assert "- budget: 100 vs 50" in lines
    assert "Baseline's conditions: budget: 100; qrels: abc" in lines
    assert ("| nDCG@10 | 40 | 0.5000 | 0.6123 | +0.1123 | [+0.0100, —] | 20/15/5 | 0.0040 | — "
            "| 0.020 | improved | — | — |") in lines
    assert ("Paired by query; bootstrap (500 resamples, seed 3) and sign-flip randomization "
            "test over 40 queries; Holm over the measures.") in lines
    assert "| nDCG@10 | bm25 | 0.5000 | — | 0.4500 | 0.4000 | 40 |" in lines
    assert any(line.startswith("- nDCG@10: traffic-weighted 0.4500 → 0.5000 (Δ +0.0500")
               and line.endswith("FLAGGED: the aggregate moved while no slice did (mix shift)")
               for line in lines)


def test_decision_slices_safety_failures_and_gate(out):
    lines = out.decision.splitlines()
    assert "Holm over all 2 measure × slice tests; every system and measure is in " \
        "data/slices/slices.parquet." in lines
    assert "| kind | typo | 25 | 0.4000 | 0.5500 | +0.1500 [-0.020, +0.300] | 0.200 | " \
        "inconclusive | — | — |" in lines
    assert "Too small to test (n < 20): kind=error_code (3)." in lines
    assert "| hybrid | 4 | 1 | 0.250 | 40 | 2 | 0.050 | — |" in lines
    assert "| system | routes | violations | own window | acl | below top k | queries |" in lines
    assert "| hybrid | hybrid+bm25 | 2 | 1 | 2 | 1 | 1 |" in lines
    assert "| ranking | 9 | 4 | -5 |" in lines
    assert "Safety failures (layer filter): bm25 0, hybrid 2." in lines
    assert any("chunk layer unknown: no answer map" in line for line in lines)
    assert any(line.endswith("automatic layer on 33.3% of them.") for line in lines)
    assert "No failures to inspect." in lines
    assert "## Release gate: FAIL (UNCONTROLLED)" in lines
    assert "| ✗ | safety hybrid | 2 | 0 | 2 violation(s) > max 0 |" in lines


def test_decision_shows_the_first_worksheet_rows():
    rows = [{c: "" for c in WORKSHEET_COLUMNS}
            | {"system": "bm25", "query_id": f"q{i}", "query_text": "reset password",
               "doc_id": "d1", "kind": "relevance", "grade": "2", "automatic_layer": "ranking"}
            for i in range(10)]
    decision = render(pd.DataFrame(rows)).decision
    assert "10 failure(s) to inspect; the first 8 below." in decision
    assert "2 more row(s) in the worksheet CSV." in decision
    assert "| bm25 | q7: reset password |" in decision and "q8: reset" not in decision


def test_run_also_renders_the_page(out):
    assert out.html.startswith("<!DOCTYPE html>")
    assert '<div class="verdict fail">FAIL</div>' in out.html
    assert '<span class="badge warn">UNCONTROLLED</span>' in out.html
    assert "No receipt describes these outputs yet" in out.html  # no receipt given
    assert out.html.count("<svg") == 4  # slices, failures, latency, no-answer: the rest absent


def test_run_shows_the_receipt_it_is_given():
    html = run(PARAMS, inputs(receipt=sample.RECEIPT | {"sha256": "feedc0ffee" * 6})).html
    assert "<code>feedc0ffeefe</code>" in html


def rename(frame: pd.DataFrame) -> pd.DataFrame:
    """The sample's frames with its candidate called hybrid, as in this module's inputs."""
    return frame.replace({"system": {sample.CAND: "hybrid"}})


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """Every file the stage reads, as the earlier stages write them, under tmp_path."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({
        "candidates": {"systems": {"bm25": {"route": "bm25"}, "dense": {"route": "dense"}}},
        "fusion": {"systems": {"hybrid": {"lexical": "bm25", "dense": "dense"}}},
        "slices": {"min_n": 20}}))
    stats = STATS | {"dense": STATS["bm25"] | {"route": "dense"}}
    docs = {"raw/source.json": written("source", {"source": "hand-made data"}),
            "split/split_report.json": written("split_report", SPLIT),
            "evaluate/summary.json": json.dumps(whole("summary", SUMMARY)),
            "judgments/ingest.json": written("ingest", INGEST),
            "judgments/agreement.json": written("agreement", AGREEMENT),
            "compare/comparison.json": json.dumps(whole("comparison", COMPARISON)),
            "safety/safety.json": written("safety", SAFETY),
            "gate/decision.json": json.dumps(whole("decision", GATE)),
            "failures/failures.json": written("failures", FAILURES),
            "candidates/bm25/run_stats.json": json.dumps(whole("run_stats", stats["bm25"])),
            "candidates/dense/run_stats.json": json.dumps(whole("run_stats", stats["dense"])),
            "fused/hybrid/run_stats.json": json.dumps(whole("run_stats", stats["hybrid"])),
            "selftest/selftest.json": written("selftest", sample.SELFTEST),
            "health/health.json": json.dumps(whole("health", {"systems": {},
                                                              "definitions": {}})),
            "offpolicy/offpolicy.json": written("offpolicy", sample.OFFPOLICY)}
    tables = {"raw/queries.parquet": sample.QUERIES, "slices/slices.parquet": SLICES,
              "compare/per_query_diff.parquet": sample.PER_QUERY_DIFF,
              "evaluate/curves.parquet": rename(sample.CURVES),
              "safety/violations.parquet": rename(sample.VIOLATIONS),
              "failures/failures.parquet": rename(sample.FAILURE_ROWS),
              "selftest/selftest.parquet": sample.SELFTEST_ROWS,
              "selftest/differential.parquet": sample.DIFFERENTIAL,
              "offpolicy/estimates.parquet": sample.OFFPOLICY_ESTIMATES,
              "offpolicy/weights.parquet": sample.OFFPOLICY_WEIGHTS}
    for path, doc in docs.items():
        (tmp_path / "data" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "data" / path).write_text(doc)
    for path, frame in tables.items():
        (tmp_path / "data" / path).parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(tmp_path / "data" / path, index=False)
    pd.DataFrame(columns=list(WORKSHEET_COLUMNS)).to_csv(
        tmp_path / "data/failures/worksheet.csv", index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_main_writes_the_page_beside_the_markdown_and_the_receipt_only_when_given(
        project, monkeypatch, capsys):
    main("report", [])
    assert capsys.readouterr().out.strip() == "report: reports/summary.md"
    page = (project / "reports/index.html").read_text(encoding="utf-8")
    assert (project / "reports/summary.md").read_text().startswith("# releval summary")
    assert (project / "reports/decision.md").read_text().startswith("## Comparison: hybrid vs")
    assert page.count("<svg") == 10  # every plot: its data is all there (2 off-policy)
    assert '<td title="four">q4</td><td>head</td>' in page
    assert "No receipt describes these outputs yet" in page
    assert '<section id="selftest"><h2>Self-test</h2>' in page and "3 relations × 100" in page
    assert "\n## Self-test\n" in (project / "reports/summary.md").read_text()
    decision = (project / "reports/decision.md").read_text()
    assert "## Off-policy evaluation" in decision and "| dr | all | 0.0013 |" in decision
    assert "| ips | 1 |" not in decision  # the page holds the positions
    assert 'id="plot-offpolicy_estimates"' in page
    gate = "data/gate/decision.json"
    md5 = hashlib.md5((project / gate).read_bytes()).hexdigest()
    (project / "reports/receipt.json").write_text(json.dumps(
        sample.RECEIPT | {"receipt": {"outputs": {gate: md5}}}))
    main("report", [])  # the flow writes the receipt just before the stage
    again = (project / "reports/index.html").read_text(encoding="utf-8")
    assert f"<code>{sample.DIGEST[:12]}</code>" in again
    receipt = re.compile(r'<p class="receipt">.*?</p>')
    assert receipt.sub("", again) == receipt.sub("", page)  # only the receipt line differs
    (project / "reports/receipt.json").write_text(json.dumps(   # an earlier run's receipt
        sample.RECEIPT | {"receipt": {"outputs": {gate: "0" * 32}}}))
    main("report", [])
    assert (project / "reports/index.html").read_text(encoding="utf-8") == page
    (project / "reports/receipt.json").unlink()
    main("report", [])
    assert (project / "reports/index.html").read_text(encoding="utf-8") == page


def test_main_of_a_recommendation_run_draws_the_reliability_diagram(project, capsys):
    rec_summary = sample.REC_SUMMARY | {"systems": {
        "bm25": sample.REC_SUMMARY["systems"][sample.BASE],
        "hybrid": sample.REC_SUMMARY["systems"][sample.CAND]}}
    (project / "data/evaluate/summary.json").write_text(json.dumps(whole("summary", rec_summary)))
    (project / "data/split/split_report.json").write_text(written("split_report",
                                                                  sample.REC_SPLIT))
    (project / "params.yaml").write_text(yaml.safe_dump(
        yaml.safe_load((project / "params.yaml").read_text())
        | {"prepare": {"source": "interactions"}}))
    with pytest.raises(SystemExit):
        main("report", [])  # a recommendation evaluation writes it; without it the page is
    assert "reliability.parquet" in capsys.readouterr().err  # incomplete
    rename(sample.RELIABILITY).to_parquet(project / "data/evaluate/reliability.parquet",
                                          index=False)
    main("report", [])
    page = (project / "reports/index.html").read_text(encoding="utf-8")
    figure = page[page.index('<figure id="plot-reliability">'):]
    assert figure[:figure.index("</figure>")].count("<svg") == 1
    assert 'id="plot-judged"' not in page and 'id="group-calibration"' in page
    summary = (project / "reports/summary.md").read_text()
    assert "| bm25 | n/a | n/a |" in summary
    assert "| popularity | HR@10 | 0.2000 | 0.3000 | +0.1000 | 1.50 |" in summary


@pytest.mark.parametrize(("path", "key", "renamed"), [
    ("data/compare/comparison.json", "paired", "pairs"),
    ("data/gate/decision.json", "rules", "outcomes"),
    ("data/evaluate/summary.json", "systems", "system"),
    ("data/fused/hybrid/run_stats.json", "latency_ms", "latency")])
def test_a_renamed_key_in_a_document_stops_the_page_naming_file_and_key(
        project, monkeypatch, capsys, path, key, renamed):
    doc = json.loads((project / path).read_text())
    doc[renamed] = doc.pop(key)
    (project / path).write_text(json.dumps(doc))
    with pytest.raises(SystemExit) as stop:
        main("report", [])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: not a ") and key in err and "\n" not in err
    assert not (project / "reports/summary.md").exists()


def test_an_automatic_judge_adds_one_line_to_each_page():
    from tests.report.sample import AUTOMATIC

    out = run(PARAMS, inputs(automatic=AUTOMATIC))
    line = ("Automatic judgments: dense-similarity (minilm, built-in) on 40 held-out pairs: "
            "quadratic κ 0.430 [0.200, 0.600], ordinal α 0.420 [0.200, 0.600]; nDCG@10 "
            "rankings of 2 systems, human vs automatic labels: τ -1.000 [-1.000, 1.000], τ_AP "
            "-1.000 [-1.000, 1.000]; 10 holes filled.")
    page = out.summary.split("\n\n## Comparison", 1)[0]
    assert page.count("Automatic judgments:") == 1 and f"\n{line}\n" in page
    assert out.decision.endswith(
        "\nLabels: the gate read human labels only (judgments.automatic.gate human); the "
        "automatic judge dense-similarity (minilm, built-in) is validated in the report's "
        "judging section.\n")
    assert out.decision.count("Labels:") == 1
    assert "<h2>Automatic judgments</h2>" in out.html
