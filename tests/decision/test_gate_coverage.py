"""Gate rule coverage: one outcome per risk category with a minimum, read from the split
stage's description of the evaluated query set."""

import json

import pandas as pd
import yaml

from releval.decision.gate import RULES, decide
from releval.decision.gate.coverage import check
from releval.decision.gate.evidence import Evidence
from releval.params import Params
from releval.params.rules import CoverageRule
from stages.common import main
from stages.gate import Inputs, run
from tests.documents import comparison, health, read_comparison, read_summary, summary
from tests.frames import split_report, write_looks_inputs

RULE = CoverageRule()


def category(count, minimum=None, underwrites=(), label=None):
    return {"label": label, "count": count, "from_text": 0, "share": None,
            "weight_share": None, "minimum": minimum,
            "covered": None if minimum is None else count >= minimum,
            "underwrites": list(underwrites)}


QUERY_SET = {"splits": ["test"], "queries": 150, "categories": {
    "head": category(90, 30, label="head"),
    "no_answer": category(12, 30, ["no_answer"], "no-answer"),
    "authorization_boundary": category(31, 30, ["safety"], "authorization-boundary"),
    "high_risk": category(4, 20, ["safety"], "high-risk"),
    "negation": category(2, 10, label="negation"),
    "typo": category(5, label="typo")}}


def evidence(query_set=QUERY_SET) -> Evidence:
    return Evidence(baseline="bm25", candidate="hybrid", query_set=query_set)


def test_one_outcome_per_category_with_a_minimum():
    outcomes = check(RULE, evidence())
    assert [(o.name, o.passed, o.value, o.threshold) for o in outcomes] == [
        ("coverage head", True, 90, 30), ("coverage no_answer", False, 12, 30),
        ("coverage authorization_boundary", True, 31, 30),
        ("coverage high_risk", False, 4, 20), ("coverage negation", False, 2, 10)]
    reasons = [o.reason for o in outcomes]
    assert reasons[0] == "90 head queries ≥ 30"
    assert reasons[1] == ("only 12 no-answer queries < 30: the no_answer rule's refusal figures "
                          "are untrustworthy")
    assert reasons[2] == "31 authorization-boundary queries ≥ 30 (underwrites the safety rule)"
    assert reasons[3] == ("only 4 high-risk queries < 20: the safety rule's violation count is "
                          "untrustworthy")
    assert reasons[4] == ("only 2 negation queries < 10: figures on negation queries rest on too "
                          "few queries")


def test_the_count_decides_not_a_stale_covered_flag():
    stale = {"categories": {"no_answer": category(12, 30, ["no_answer"]) | {"covered": True}}}
    (outcome,) = check(RULE, evidence(stale))
    assert outcome.passed is False and outcome.reason.startswith("only 12 no_answer queries")


def test_missing_description_fails_and_no_minimum_passes_as_not_applicable():
    (missing,) = check(RULE, evidence({}))
    assert missing.passed is False and missing.name == "coverage"
    assert missing.reason == ("no query-set description (split_report.json's query_set): "
                              "rerun the split stage")
    (free,) = check(RULE, evidence({"categories": {"typo": category(5)}}))
    assert free.passed is True
    assert free.reason == "not applicable: query_set.min_per_category sets no minimum"
    assert not free.applicable  # listed apart as n/a


def test_coverage_is_a_default_rule_and_fails_the_decision():
    assert RULES["coverage"].default and CoverageRule() in Params().gate.rules
    decision = decide([RULE], evidence())
    assert decision["passed"] is False
    assert decision["failed"] == ["coverage no_answer", "coverage high_risk", "coverage negation"]


COMPARISON, SUMMARY = comparison(), summary({})


def test_the_gate_stage_reads_the_split_reports_query_set(tmp_path, monkeypatch):
    p = Params.model_validate({"gate": {"rules": [{"rule": "coverage"}]}})
    comparison, summary = read_comparison(COMPARISON), read_summary(SUMMARY)
    decision = run(p, Inputs(comparison, pd.DataFrame(), {}, {}, {}, summary,
                   split_report={"query_set": QUERY_SET})).decision
    assert [r["name"] for r in decision["rules"]][:2] == ["coverage head", "coverage no_answer"]
    assert run(p, Inputs(comparison, pd.DataFrame(), {}, {}, {}, summary)).decision["failed"] == [
        "coverage"]
    # the stage reads the query_set of the split report the split stage wrote
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"gate": {"rules": [
        {"rule": "coverage"}]}}))
    for path, doc in (("compare/comparison.json", COMPARISON),
                      ("safety/safety.json", {"top_k": 10, "systems": {}, "no_answer": {},
                                              "skipped": []}),
                      ("evaluate/metrics.json", {}), ("evaluate/summary.json", SUMMARY),
                      ("health/health.json", health({})),
                      ("split/split_report.json", split_report(QUERY_SET))):
        (tmp_path / "data" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "data" / path).write_text(json.dumps(doc))
    (tmp_path / "data/slices").mkdir()
    pd.DataFrame({"dimension": ["all"]}).to_parquet(tmp_path / "data/slices/slices.parquet")
    write_looks_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    main("gate", [])
    written = json.loads((tmp_path / "data/gate/decision.json").read_text())
    assert written["failed"] == ["coverage no_answer", "coverage high_risk", "coverage negation"]


def test_auto_minimums_are_the_comparisons_needed_queries_stated_as_derived():
    from tests.documents import paired

    auto = {"splits": ["test"], "queries": 150, "minimums": "auto", "categories": {
        "head": category(90), "negation": category(2, label="negation")}}
    planned = comparison(paired(n=150, sd=0.2, power=0.8, mde=0.046, needed_queries=80,
                                min_effect=0.02))
    ev = Evidence(baseline="bm25", candidate="hybrid", query_set=auto,
                  comparison=read_comparison(planned))
    outcomes = check(RULE, ev)
    assert [(o.name, o.passed, o.value, o.threshold) for o in outcomes] == [
        ("coverage head", True, 90, 80), ("coverage negation", False, 2, 80)]
    assert outcomes[1].reason.endswith(
        "(auto: the queries nDCG@10 needs to detect min_effect 0.02 at power 0.8 (σ 0.200 "
        "over this run's 150 queries))")
    unplanned = Evidence(baseline="bm25", candidate="hybrid", query_set=auto,
                         comparison=read_comparison(comparison(paired())))
    [outcome] = check(RULE, unplanned)
    assert not outcome.passed and outcome.applicable and "no needed queries" in outcome.reason


def test_auto_is_accepted_by_params_and_described_by_the_split_stage():
    from releval.data.query_set import describe

    p = Params.model_validate({"query_set": {"min_per_category": "auto"}})
    assert p.query_set.min_per_category == "auto"
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["a", "not b"],
                            "tags": [["head"], []], "weight": [1.0, 1.0]})
    split = pd.DataFrame({"query_id": ["q1", "q2"], "split": ["test", "test"]})
    described = describe(queries, split, ["test"], "auto")
    assert described["minimums"] == "auto"
    assert all(c["minimum"] is None for c in described["categories"].values())
