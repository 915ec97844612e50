"""Controls per kind of change: each kind's conditions refuse what it must hold fixed, and
each inspection on tiny hand-made frames."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from releval.decision import inspections as look
from releval.decision.change import KINDS
from releval.decision.compare import Uncontrolled
from releval.decision.conditions import (
    CONDITIONS,
    HELD,
    Evidence,
    conditions_of,
    controlled_change,
    fields_read,
    pooled,
)
from releval.decision.inspections import (
    INSPECTIONS,
    Settings,
    Subject,
    change_block,
    is_ordering,
    score_ece,
)
from releval.errors import InputError
from releval.params import Cost, Params, parse_params

T0 = pd.Timestamp("2025-03-01", tz="UTC")


def documents():  # d3 and d4: near-identical text (case, punctuation); d1, d2: one source
    return pd.DataFrame({
        "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6"],
        "title": ["A", "A", "B", "b", "C", "D"],
        "text": ["alpha one", "alpha two", "Beta, three!", "beta  three", "gamma", "delta"],
        "source_id": ["s1", "s1", "s3", "s4", "s5", "s6"]})


def queries():
    return pd.DataFrame({"query_id": ["q1", "q2", "q3"],
                         "issued_at": [T0, T0 + pd.Timedelta(days=1), T0 - pd.Timedelta(days=9)],
                         "user_id": ["u1", "u2", "u3"]})


def qrels(pool_id="pool-x"):  # R = {(q1, d1), (q1, d3), (q2, d2), (q2, d6)}
    return pd.DataFrame({"query_id": ["q1", "q1", "q1", "q2", "q2", "q3"],
                         "doc_id": ["d1", "d3", "d5", "d2", "d6", "d1"],
                         "grade": [2, 1, 0, 1, 3, 1], "pool_id": pool_id})


def window(system, lists):
    return pd.DataFrame([(system, "r", q, d, i + 1, float(len(docs) - i))
                         for q, docs in lists.items() for i, d in enumerate(docs)],
                        columns=["system", "route", "query_id", "doc_id", "rank", "score"])


BASE = {"q1": ["d1", "d2", "d5"], "q2": ["d2", "d1"]}
RUNS = {"base": window("base", BASE),
        "rerank": window("rerank", {"q1": ["d5", "d1", "d2"], "q2": ["d1", "d2"]}),
        "wide": window("wide", {"q1": ["d3", "d1", "d4"], "q2": ["d6", "d5"]}),
        "other": window("other", {"q1": ["d1", "d2", "d5"], "q2": ["d2", "d6"]}),
        "narrow": window("narrow", BASE), "unpooled": window("unpooled", BASE)}
BM25 = {"route": "bm25", "depth": 3, "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0},
        "candidates_per_query": {"mean": 2.5}}
STATS = {"base": BM25, "rerank": BM25, "other": BM25, "unpooled": BM25,
         "wide": {"route": "dense", "depth": 3, "params": {"doc_fields": ["title", "text"]},
                  "latency_ms": {"p50": 4.0, "p95": 5.0, "p99": None}},
         "narrow": {"route": "dense", "depth": 3, "params": {"doc_fields": ["text"]}},
         "prod": {"route": "external", "depth": 3},
         "hybrid": {"route": "hybrid", "depth": 3, "sources": ["base", "wide"]}}
POOL = {"pool_id": "pool-x", "depth": 10, "systems": ["base", "rerank", "wide", "other",
                                                      "narrow"], "guideline": "g1"}


def per_query(systems=tuple(RUNS), ids=("q1", "q2")):
    return pd.DataFrame([(s, q, "nDCG@10", 0.5) for s in systems for q in ids],
                        columns=["system", "query_id", "measure", "value"])


def evidence(**changes) -> Evidence:
    ev = Evidence(per_query(), queries(), documents(), qrels(), STATS, RUNS, POOL,
                  pd.DataFrame({"query_id": ["q1", "q2", "q3"],
                                "split": ["test", "test", "train"]}),
                  {"leakage": {"shared_sources": {"count": 3, "test_queries_affected": 2,
                                                  "sources": []},
                               "duplicate_texts": {"count": 1, "examples": []}}},
                  "simulated")
    return dataclasses.replace(ev, **changes)


def verdict(kind, baseline, candidate, ev=None, allow=False):
    ev = ev or evidence()
    held = conditions_of(kind, baseline, candidate, ev)
    return controlled_change(kind, held, baseline, candidate, ev, allow)


def subject(baseline, candidate, ev=None, paired=(), **settings):
    return Subject(baseline, candidate, list(paired), ev or evidence(),
                   pd.DataFrame(columns=["query_id", "dimension", "slice"]),
                   Settings(["nDCG@10"], **settings))


# --- conditions ------------------------------------------------------------------------


def test_every_kind_names_conditions_and_inspections():
    assert set(KINDS) == {"route", "ranker", "diversity", "training_signal"}
    for kind in KINDS.values():
        assert set(kind.holds_fixed) <= set(CONDITIONS) | set(HELD)
        assert set(kind.inspections) <= set(INSPECTIONS)
    assert set(HELD) | set(INSPECTIONS) <= {n for k in KINDS.values()
                                            for n in (*k.holds_fixed, *k.inspections)}
    assert KINDS["ranker"].holds_fixed == ("candidate_set", "feature_snapshot", "queries")
    assert list(KINDS["training_signal"].inspections) == ["slices", "leakage",
                                                          "negative_transfer"]


def test_a_ranker_with_another_candidate_set_is_refused_with_the_reason():
    assert verdict("ranker", "base", "rerank") == []  # the same sets, reordered
    with pytest.raises(Uncontrolled, match=r"other vs base is not a controlled comparison for "
                                           r"a ranker change \(new ranker / reranker\), "
                                           r"refused: candidate_set: baseline '5 pairs over 2 "
                                           r"queries .*\(1 of 2 queries' candidate sets differ\)"):
        verdict("ranker", "base", "other")
    assert verdict(None, "base", "other") == []  # no kind declared: the general ones only


def test_a_ranker_reading_other_document_fields_is_refused():
    assert fields_read("hybrid", STATS) == ("title", "text")
    assert fields_read("prod", STATS) is None
    with pytest.raises(Uncontrolled, match=r"feature_snapshot: baseline 'corpus [0-9a-f]{12}; "
                                           r"fields title, text' ≠ candidate 'corpus "
                                           r"[0-9a-f]{12}; fields text'"):
        verdict("ranker", "base", "narrow")


def test_a_diversity_reranker_must_keep_the_base_scores():
    kept = RUNS["base"].assign(system="div", base_score=RUNS["base"]["score"],
                               score=[0.1, 0.9, 0.5, 0.2, 0.3])
    ev = evidence(runs={**RUNS, "div": kept}, stats={**STATS, "div": BM25},
                  per_query=per_query((*RUNS, "div")))
    assert verdict("diversity", "base", "div", ev) == []
    moved = kept.assign(base_score=kept["base_score"] + [0, 0, 0, 0, 1])
    ev = dataclasses.replace(ev, runs={**RUNS, "div": moved})
    with pytest.raises(Uncontrolled, match=r"base_scores: .*\(1 of 2 queries' base scores "
                                           r"differ\)"):
        verdict("diversity", "base", "div", ev)


def test_a_new_route_must_be_pooled_and_keep_the_budget():
    assert pooled("hybrid", POOL, STATS) and not pooled("unpooled", POOL, STATS)
    assert verdict("route", "base", "wide") == []
    with pytest.raises(Uncontrolled, match=r"for a route change .*labelling: baseline 'pool "
                                           r"pool-x \(depth 10, guideline g1\); pooled' ≠ "
                                           r"candidate '.*; not pooled'"):
        verdict("route", "base", "unpooled")
    ev = evidence(stats={**STATS, "wide": {**STATS["wide"], "depth": 5}})
    assert verdict("route", "base", "wide", ev, allow=True) == [
        "budget: baseline 3 ≠ candidate 5"]

    # the dataset's own qrels: no pool was judged, none is claimed, and pooling cannot differ
    own = evidence(labels_source="dataset")
    assert verdict("route", "base", "unpooled", own) == []
    held = conditions_of("route", "base", "unpooled", own)
    assert held["base"]["labelling"] == "the dataset's own qrels (no pool judged)"


def test_a_training_signal_needs_an_independent_set_and_judged_labels():
    ev = evidence(per_query=per_query(ids=("q1", "q2", "q3")))
    with pytest.raises(Uncontrolled, match=r"independent_eval \(base\): 1 of 3 evaluated "
                                           r"queries in the training split; independent_eval "
                                           r"\(other\): 1 of 3"):
        verdict("training_signal", "base", "other", ev)
    assert verdict("training_signal", "base", "other") == []
    dataset = evidence(labels_source="dataset", qrels=qrels("dataset"))
    diffs = verdict("training_signal", "base", "other", dataset, allow=True)
    assert diffs == ["explicit_labels (base): the labels are the dataset's own, not judged",
                     "explicit_labels (other): the labels are the dataset's own, not judged"]
    mixed = evidence(qrels=qrels().assign(pool_id=["pool-x", "dataset", "pool-x", "pool-x",
                                                   "pool-x", "pool-x"]))
    with pytest.raises(Uncontrolled, match=r"explicit_labels \(base\): 1 relevant labels are "
                                           r"not judged"):
        verdict("training_signal", "base", "other", mixed)


def test_the_block_lists_what_is_held_with_both_values():
    ev = evidence()
    held = conditions_of("route", "base", "wide", ev)
    out = change_block("route", held, subject("base", "wide", ev))
    assert (out["kind"], out["label"]) == ("route", "new retrieval source / route")
    assert [f["condition"] for f in out["holds_fixed"]] == ["budget", "time_window",
                                                            "labelling"]
    assert out["holds_fixed"][0] == {
        "condition": "budget", "what": "the total candidate budget: the depth of the window "
        "handed on", "baseline": 3, "candidate": 3, "same": True}
    assert list(out["inspections"]) == ["unique_relevant", "coverage", "latency"]
    assert change_block(None, held, subject("base", "wide", ev))["inspections"] == {}


def test_an_unknown_kind_or_also_pair_is_rejected_by_params():
    with pytest.raises(InputError, match=r"compare\.change"):
        parse_params({"compare": {"change": "teleport"}})
    with pytest.raises(InputError, match=r"compare\.also\.0\.candidate: 'nope' is not a "
                                         r"system"):
        parse_params({"compare": {"also": [{"baseline": "bm25", "candidate": "nope"}]}})
    with pytest.raises(InputError, match=r"compare\.also\.0: baseline and candidate are both "
                                         r"'bm25'"):
        parse_params({"compare": {"also": [{"baseline": "bm25", "candidate": "bm25"}]}})
    p = Params.model_validate({"compare": {"change": "ranker", "also": [
        {"baseline": "bm25", "candidate": "dense", "change": "route"}]}})
    assert (p.compare.change, p.compare.also[0].measures) == ("ranker", None)


# --- inspections ------------------------------------------------------------------------


def test_unique_relevant_and_coverage():
    sub = subject("base", "wide")
    assert look.unique_relevant(sub)["rows"] == [
        {"relevant documents": "in wide's window only (added)", "count": 2, "queries": 2},
        {"relevant documents": "in base's window only (lost)", "count": 1, "queries": 1}]
    shares = [(r["window"], r["share"]) for r in look.coverage(sub)["rows"]]
    assert shares == [("base", 0.5), ("wide", 0.75), ("base ∪ wide", 1.0)]


def test_latency_and_cost():
    sub = subject("base", "wide", costs={"base": Cost(per_query=0.5, per_candidate=0.2,
                                                      unit="EUR")})
    found = look.latency(sub)  # measured: shown from health.json, never in comparison.json
    assert found["rows"] == [] and found["measured"] == ["base", "wide"]
    from releval.documents.comparison import Inspection
    from releval.report.change import _measured
    from tests.documents import health, read_health
    measured = read_health(health({"base": {"latency_p50_ms": 1.0, "latency_p95_ms": 2.0,
                                            "latency_p99_ms": 3.0}}))
    assert _measured(Inspection.model_validate(found), measured) == [
        {"system": "base", "p50 ms": 1.0, "p95 ms": 2.0, "p99 ms": 3.0},
        {"system": "wide", "p50 ms": None, "p95 ms": None, "p99 ms": None}]
    found = look.cost(sub)
    assert found["rows"][0] == {"system": "base", "candidates per query": 2.5,
                                "cost per query": pytest.approx(1.0), "unit": "EUR"}
    assert found["rows"][1]["cost per query"] == "not given"
    assert found["delta"] is None


def test_ordering_keeps_the_measures_a_reordering_can_change():
    assert [is_ordering(m, 100) for m in ("R@100", "R@10", "nDCG@10", "AP", "P@100", "Judged@10")
            ] == [False, True, True, True, False, True]
    rows = [{"measure": m, "n": 2, "mean_diff": 0.1, "ci_low": 0.0, "ci_high": 0.2,
             "p_holm": 0.5, "verdict": "inconclusive"} for m in ("nDCG@10", "R@100", "P@3")]
    found = look.ordering(subject("base", "rerank", paired=rows))
    assert [r["measure"] for r in found["rows"]] == ["nDCG@10"]  # depth 3: R@100, P@3 are sets
    assert "left out: R@100, P@3" in found["definition"]


def test_calibration_is_the_ece_of_min_max_normalised_scores():
    # base's judged pairs: (q1, d1) score 3 relevant, (q1, d5) 1 not, (q2, d2) 1 relevant
    run = RUNS["base"].assign(score=[3.0, 2.5, 1.0, 2.0, 1.5])
    value, n = score_ece(run, qrels(), 1)
    assert n == 3
    assert value == pytest.approx((0 + 0 + abs(1 - 0.5)) / 3)  # s' = 1, 0, 0.5
    assert np.isnan(score_ece(run.assign(score=1.0), qrels(), 1)[0])  # scores do not vary
    rows = look.calibration(subject("base", "rerank"))["rows"]
    assert [r["judged pairs"] for r in rows] == [3, 3]


def test_topic_coverage_and_repetition():
    sub = subject("base", "wide", top_k=2)
    found = look.topic_coverage(sub)
    assert [r["distinct sources"] for r in found["rows"]] == [1.0, 2.0]
    assert found["delta"] == 1.0
    found = look.repetition(subject("base", "wide", top_k=3))
    # base: q1 d2 repeats d1's source, q2 d1 repeats d2's; wide: q1 d4 repeats d3's text
    assert [(r["entries"], r["repeats"]) for r in found["rows"]] == [(5, 2), (5, 1)]
    assert found["delta"] == pytest.approx(0.2 - 0.4)


def test_leakage_rows():
    rows = look.leakage(subject("base", "other"))["rows"]
    assert rows == [{"check": "base: evaluated queries in the training split", "count": 0},
                    {"check": "other: evaluated queries in the training split", "count": 0},
                    {"check": "shared_sources: count", "count": 3},
                    {"check": "shared_sources: test queries affected", "count": 2},
                    {"check": "duplicate_texts: count", "count": 1}]


def test_slices_and_negative_transfer():
    ids = [f"q{i:02d}" for i in range(24)]
    base = pd.DataFrame({"system": "a", "query_id": ids, "measure": "nDCG@10", "value": 0.8})
    cand = base.assign(system="b", value=[0.3] * 12 + [0.8] * 12)  # worse on slice A only
    labels = pd.concat([
        pd.DataFrame({"query_id": ids, "dimension": "kind", "slice": ["A"] * 12 + ["B"] * 12}),
        pd.DataFrame({"query_id": ids, "dimension": "tag", "slice": "x"}),
        pd.DataFrame({"query_id": ids, "dimension": "length", "slice": "short"})])
    ev = evidence(per_query=pd.concat([base, cand], ignore_index=True))
    sub = Subject("a", "b", [], ev, labels,
                  Settings(["nDCG@10"], 0.01, strata="kind", dimensions=("tag",), min_n=5,
                           resamples=200))
    rows = look.slices(sub)["rows"]
    assert [(r["slice"], r["verdict"]) for r in rows] == [("A", "regressed"),
                                                          ("B", "no consequential change")]
    assert rows[0]["mean_diff"] == pytest.approx(-0.5)
    worse = look.negative_transfer(sub)
    assert [(r["dimension"], r["slice"]) for r in worse["rows"]] == [("kind", "A"), ("tag", "x")]
    assert worse["tested"] == 4  # all, kind A, kind B, tag x: length is not asked for
