"""Stage health: run() on tiny frames, main() on the files the other stages write; the fused
window's status (stage fuse) and the health rule read by the gate stage."""

import hashlib
import json
import math

import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.decision.health import COLUMNS
from releval.errors import InputError
from releval.params import Params, parse_params
from stages import fuse, gate
from stages.common import main
from stages.health import Inputs, run
from tests.documents import health as health_doc
from tests.documents import read_comparison, read_health, read_summary, whole
from tests.frames import doc, documents, queries, query
from tests.stages import test_fuse_stage as fusing
from tests.stages import test_gate_stage as gating

DOCS = documents(doc("a"), doc("b"), doc("c"))
QS = queries(query("q1"), query("q2"))
RUNS = {"bm25": pd.DataFrame({S.QUERY_ID: ["q1", "q1"], S.DOC_ID: ["a", "b"], S.RANK: [1, 2],
                              S.SCORE: [2.0, 1.0]}),
        "dense": pd.DataFrame({S.QUERY_ID: ["q2"], S.DOC_ID: ["c"], S.RANK: [1],
                               S.SCORE: [0.5]})}
RUNS["hybrid"] = pd.concat([RUNS["bm25"], RUNS["dense"]], ignore_index=True)
STATUS = {"bm25": ["ok", "ok"], "dense": ["ok", "timeout"], "hybrid": ["ok", "partial"]}
LATENCIES = {s: pd.DataFrame({S.QUERY_ID: ["q1", "q2"], "latency_ms": [1.0, 3.0],
                              S.RUN_STATUS: STATUS[s]}) for s in RUNS}
STATS = {"bm25": {"route": "bm25"}, "dense": {"route": "dense"}, "hybrid": {"route": "hybrid"}}
COST = {"bm25": {"per_query": 0.001}, "dense": {"per_query": 0.002, "per_candidate": 0.001}}


def params(cost=COST) -> Params:
    return Params.model_validate({"health": {"cost": cost}})


def test_run_gives_one_row_per_system_and_the_judgments_revision():
    out = run(params(), Inputs(RUNS, LATENCIES, STATS, DOCS, QS, {"path": "q", "sha256": "x"}))
    assert list(out.table.columns) == list(COLUMNS)
    rows = out.table.set_index(S.SYSTEM)
    assert rows["timeout_rate"].to_dict() == {"bm25": 0.0, "dense": 0.5, "hybrid": 0.0}
    assert rows.loc["hybrid", "partial_rate"] == 0.5
    assert rows.loc["hybrid", "cost_per_query"] == pytest.approx(0.001 + 0.002 + 0.001 * 0.5)
    assert out.report["qrels"] == {"path": "q", "sha256": "x"}
    assert out.report["systems"]["hybrid"]["status"]["partial"] == 1


def test_a_cost_model_for_a_system_not_evaluated_is_refused():
    with pytest.raises(InputError, match="health.cost.bm52: 'bm52' is not a system"):
        parse_params({"health": {"cost": COST | {"bm52": {"per_query": 1.0}}}})  # at load
    evaluated = {name: RUNS[name] for name in ("bm25", "hybrid")}
    with pytest.raises(InputError, match="health.cost names dense, not evaluated systems"):
        run(params(), Inputs(evaluated, LATENCIES, STATS, DOCS, QS))


def test_main_writes_the_table_and_the_report(tmp_path, monkeypatch, capsys):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({
        "candidates": {"systems": {"bm25": {"route": "bm25"}, "dense": {"route": "dense"}}},
        "health": {"cost": COST}}))
    for folder, system in (("candidates", "bm25"), ("candidates", "dense"), ("fused", "hybrid")):
        out = tmp_path / "data" / folder / system
        out.mkdir(parents=True)
        RUNS[system].to_parquet(out / "run.parquet")
        LATENCIES[system].to_parquet(out / "latency.parquet")
        (out / "run_stats.json").write_text(json.dumps(whole("run_stats", STATS[system])))
    (tmp_path / "data/raw").mkdir()
    DOCS.to_parquet(tmp_path / "data/raw/documents.parquet")
    QS.to_parquet(tmp_path / "data/raw/queries.parquet")
    (tmp_path / "data/split").mkdir()
    pd.DataFrame({S.QUERY_ID: QS[S.QUERY_ID], S.SPLIT: "test"}).to_parquet(
        tmp_path / "data/split/split.parquet")
    (tmp_path / "data/judgments").mkdir()
    (tmp_path / "data/judgments/qrels.parquet").write_bytes(b"qrels")
    monkeypatch.chdir(tmp_path)
    main("health", [])
    table = pd.read_parquet(tmp_path / "data/health/health.parquet")
    report = json.loads((tmp_path / "data/health/health.json").read_text())
    assert table[S.SYSTEM].tolist() == ["bm25", "dense", "hybrid"]
    assert report["qrels"]["sha256"] == hashlib.sha256(b"qrels").hexdigest()
    assert report["systems"]["hybrid"]["undefined"]["embedding_cache_hit_rate"]
    assert capsys.readouterr().out.startswith("health: 3 system(s)")


def test_a_fused_window_records_its_status_from_its_sources():
    latency = {"bm25": fusing.LATENCY["bm25"].assign(**{S.RUN_STATUS: ["ok", "ok", "error"]}),
               "dense": fusing.LATENCY["dense"].assign(**{S.RUN_STATUS: ["ok", "error", "error"]})}
    out = fuse.run(fusing.params(), fuse.Inputs("hybrid", fusing.RUNS, fusing.JUDGED, fusing.SPLIT,
                   fusing.QUERIES, fusing.DOCS, latency))
    assert out.latency[S.RUN_STATUS].tolist() == ["ok", "partial", "error"]
    assert out.stats["status"] == {"ok": 1, "error": 1, "timeout": 0, "partial": 1,
                                   "fallback": 0, "not_recorded": 0}
    unrecorded = fuse.run(fusing.params(), fuse.Inputs("hybrid", fusing.RUNS, fusing.JUDGED,
                                                       fusing.SPLIT,
                          fusing.QUERIES, fusing.DOCS))
    assert unrecorded.latency[S.RUN_STATUS].isna().all()


def test_the_gate_reads_the_health_record():
    rules = {"rules": [{"rule": "health", "max": {"error_rate": 0.01, "latency_p99_ms": 1.0}}],
             "rollback": [{"metric": "error_rate", "max": 0.05}]}
    health = read_health(health_doc({"hybrid": {
        "error_rate": 0.02, "latency_p99_ms": None,
        "undefined": {"latency_p99_ms": "latency not measured"}}}))
    decision = gate.run(gating.params(rules), gate.Inputs(read_comparison(gating.COMPARISON),
                                                          gating.SLICES,
                        gating.SAFETY, gating.METRICS, {}, read_summary(gating.SUMMARY),
                        health=health)).decision
    assert [(r["passed"], r["value"]) for r in decision["rules"]] == [(False, 0.02),
                                                                      (False, None)]
    assert decision["rules"][1]["reason"].endswith("undefined: latency not measured")
    assert decision["rollback"][0]["offline"] == 0.02
    assert math.isclose(decision["rollback"][0]["headroom"], 0.03)


def test_queries_whose_issue_time_is_a_stand_in_claim_no_freshness():
    """A BEIR collection's queries are all issued at the latest publication (source.json's
    query_times false): no document is eligible, so no freshness figure is claimed."""
    from releval.documents.source import Source

    dated = documents(doc("a", published="2024-06-01"), doc("b", published="2024-06-02"),
                      doc("c", published="2024-01-01"))
    spanned = queries(query("q1", issued="2024-06-01"), query("q2", issued="2024-06-03"))
    timed = run(params(), Inputs(RUNS, LATENCIES, STATS, dated, spanned, None))
    assert timed.table.set_index(S.SYSTEM).loc["bm25", "freshness_eligible"] > 0
    source = Source.model_construct(query_times=False)
    untimed = run(params(), Inputs(RUNS, LATENCIES, STATS, dated, spanned, None, None, source))
    assert (untimed.table["freshness_eligible"] == 0).all()
    assert untimed.table["freshness_median_days"].isna().all()
