"""The "System health" section: the health and freshness tables, the health rule's outcomes
and the rollback thresholds, in markdown and as an escaped HTML fragment."""

from releval.report.health import markdown as section
from releval.report.html import markdown as page_of
from tests.documents import health_record
from tests.report.sample import model

ENTRY = {"route": "hybrid", "n_queries": 100, "latency_p50_ms": 1.0, "latency_p95_ms": 2.5,
         "latency_p99_ms": 4.0, "status_recorded": 100, "error_rate": 0.01,
         "timeout_rate": 0.0, "partial_rate": 0.02, "fallback_rate": 0.0,
         "candidates_per_query": 74.5, "empty_share": 0.05, "near_duplicate_ratio": 0.25,
         "embedding_cache_hit_rate": 1.0, "cost_per_query": 0.0003, "cost_unit": "USD",
         "freshness_eligible": 40, "freshness_appeared": 30, "freshness_median_days": 7.25,
         "freshness_p95_days": 50.0, "deleted_eligible": 5, "deleted_still_appearing": 0,
         "deletion_propagation_p95_days": 0.0, "deletion_propagation_max_days": 0.0,
         "undefined": {}}
TEAM = ENTRY | {"route": "external", "latency_p50_ms": None, "latency_p95_ms": None,
                "latency_p99_ms": None, "cost_per_query": None, "cost_unit": None,
                "undefined": {"latency_p99_ms": "latency not measured for any query",
                              "cost_per_query": "no cost model in health.cost for <team>"}}
HEALTH = {"systems": {"hybrid": ENTRY, "<team>": TEAM}}
DECISION = {"candidate": "hybrid", "rules": [
    {"rule": "safety", "name": "safety hybrid", "passed": True, "value": 0, "threshold": 0,
     "reason": "0 violation(s)"},
    {"rule": "health", "name": "health hybrid error_rate max", "passed": False, "value": 0.01,
     "threshold": 0.005, "reason": "error_rate of hybrid 0.01 > 0.005"}],
    "rollback": [{"metric": "nDCG@10", "bound": "min", "threshold": 0.55, "offline": 0.6,
                  "of": None, "source": "metrics", "headroom": 0.05}]}


def markdown(health: dict, decision: dict, receipt: dict | None = None) -> list[str]:
    """The section of health.json, decision.json (completed with the sample's) and a
    receipt's parts, each read as its model."""
    health = {"definitions": {}, "qrels": {"path": "qrels.parquet", "sha256": "cd" * 32},
              "systems": {name: health_record(name, **figures)
                          for name, figures in health["systems"].items()}}
    receipt = receipt and model("receipt", {"sha256": "0" * 64} | receipt)
    return section(model("health", health), model("gate", decision), receipt)


def test_markdown_shows_every_table_and_what_is_undefined():
    lines = markdown(HEALTH, DECISION)
    assert lines[:2] == ["", "## System health"]
    text = "\n".join(lines)
    assert ("| hybrid | hybrid | 1.00 | 2.50 | 4.00 | 100 of 100 | 1.00% | 0.00% | 2.00% | "
            "0.00% | 74.5 | 5.0% | 25.0% | 100.0% | 0.0003 USD |") in lines
    assert "| <team> | external | — | — | — |" in text
    assert "| hybrid | 40 | 30 | 7.2 | 50.0 | 5 | 0 | 0.0 | 0.0 |" in lines
    assert "| ✗ | health hybrid error_rate max | 0.01 | 0.005 | error_rate of hybrid 0.01 > " \
           "0.005 |" in lines
    assert "safety hybrid" not in text  # only the health rule's outcomes
    assert "| nDCG@10 | < 0.55 | 0.6 | +0.05 |" in lines
    assert ("- <team>: latency_p99_ms (latency not measured for any query); cost_per_query "
            "(no cost model in health.cost for <team>)") in lines


def test_tables_without_rows_are_left_out():
    text = "\n".join(markdown(HEALTH, {"candidate": "hybrid", "rules": []}))
    assert "### Per system" in text and "### Freshness" in text
    assert "### Health rules" not in text and "### Rollback thresholds" not in text


def test_no_freshness_table_without_a_dated_document():
    undated = {"systems": {name: e | {"freshness_eligible": 0, "deleted_eligible": 0}
                           for name, e in HEALTH["systems"].items()}}
    text = "\n".join(markdown(undated, {"candidate": "hybrid", "rules": []}))
    assert "### Per system" in text and "### Freshness" not in text


def test_the_page_escapes_every_string():
    fragment = str(page_of(markdown(HEALTH, DECISION)))
    assert fragment.startswith("<h2>System health</h2>")
    assert "<team>" not in fragment and "&lt;team&gt;" in fragment
    assert fragment.count("<table>") == 5  # per system, revisions, freshness, rules, rollback
    assert "<td>health hybrid error_rate max</td>" in fragment


def test_revisions_name_index_model_analyzer_run_file_and_qrels():
    revisions = {
        "bm25": ENTRY | {"route": "bm25", "revisions": {
            "params": {"method": "lucene", "k1": 1.2, "b": 0.75, "stemmer": "english",
                       "stopwords": "en"}}},
        "dense": ENTRY | {"route": "dense", "revisions": {
            "model": "mini", "index": "hnsw", "params": {"max_length": 256}}},
        "team": ENTRY | {"route": "external", "revisions": {"run_sha256": "ab" * 32}}}
    health = {"systems": revisions, "qrels": {"path": "qrels.parquet", "sha256": "cd" * 32}}
    receipt = {"receipt": {"routes": {"dense": {"route": "dense", "model_digest": "ef" * 32}}}}
    lines = markdown(health, {"candidate": "dense", "rules": []}, receipt)
    assert ("| bm25 | method lucene, k1 1.2, b 0.75 | — | stemmer english, stopwords en | — | "
            "cdcdcdcdcdcd |") in lines
    assert ("| dense | hnsw | mini (efefefefefef) | the model's tokenizer, max 256 tokens | — | "
            "cdcdcdcdcdcd |") in lines
    assert "| team | — | — | — | abababababab | cdcdcdcdcdcd |" in lines
    without = markdown(health, {"candidate": "dense", "rules": []})  # no receipt yet
    assert "| dense | hnsw | mini | the model's tokenizer, max 256 tokens | — |" \
           " cdcdcdcdcdcd |" in without
