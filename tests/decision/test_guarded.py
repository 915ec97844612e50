"""Gate rule ``guarded``: a primary's gain may not be bought with its guards. Unit tests of the
rule at its boundaries and on missing evidence, then a widened matcher on the demo data: real
retrieval, evaluated by the engine, whose recall gain the guards catch."""

import math
import re

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.decision.compare import compare
from releval.decision.gate import decide
from releval.decision.gate.evidence import Evidence
from releval.decision.gate.guarded import check
from releval.demo.generator import generate
from releval.errors import InputError
from releval.metrics.engine import evaluate_systems, missing
from releval.params import Params
from releval.params.rules import Guard, Guarded, NoRegression
from releval.retrieval.bm25 import BM25Retriever
from stages.gate import directions
from tests import documents

BETTER = {"R@100": "higher", "P@10": "higher", "HardNeg@10": "lower", "nDCG@10": "higher",
          "RR@10": "higher"}


def entry(value, **extra):
    return documents.entry(value, **{"n": 50, **extra})


# HardNeg@10 as the evaluation writes it for qrels that mark no hard negative
UNMARKED = entry(None, n=0, undefined=50, applicable=False, missing=missing("HardNeg@10"))


def evidence(baseline: dict, candidate: dict, latency=None, better=BETTER) -> Evidence:
    """Evidence of bm25 (baseline) against wide (candidate) from their summary values."""
    summary = {system: {m: v if isinstance(v, dict) else entry(v) for m, v in values.items()}
               for system, values in (("bm25", baseline), ("wide", candidate))}
    return documents.evidence(baseline="bm25", candidate="wide", summary=summary,
                              latency=latency or {}, better=better)


def rule(primary="R@100", *guards, min_gain=0.0) -> Guarded:
    return Guarded(primary=primary, min_gain=min_gain,
                   guards=[Guard(measure=m, tolerance=t) for m, t in guards or [("P@10", 0.01)]])


@pytest.mark.parametrize(("recall", "precision", "passed"), [
    (0.70, 0.2899, False),  # recall up, precision down by more than 0.01
    (0.6001, 0.20, False),  # any gain engages the guard
    (0.70, 0.2901, True),  # down by 0.0099: within the tolerance
    (0.70, 0.29, True),  # down by exactly the tolerance: not beyond it
    (0.60, 0.20, True),  # recall unchanged: the guard is not engaged
    (0.55, 0.20, True),  # recall down: no_regression's business, not the guard's
    (0.70, 0.35, True),  # both up
])
def test_fails_iff_the_primary_improves_and_the_guard_worsens_beyond_its_tolerance(
        recall, precision, passed):
    ev = evidence({"R@100": 0.60, "P@10": 0.30}, {"R@100": recall, "P@10": precision})
    (outcome,) = check(rule(), ev)
    assert outcome.passed is passed and outcome.name == "guarded R@100 ↔ P@10"
    assert outcome.value == pytest.approx(precision - 0.30) and outcome.threshold == -0.01


def test_a_failed_guard_names_both_numbers():
    ev = evidence({"R@100": 0.5759, "P@10": 0.2685}, {"R@100": 0.6432, "P@10": 0.25})
    (outcome,) = check(rule(), ev)
    assert outcome.reason == (
        "R@100 improved (Δ +0.0673: bm25 0.5759 → wide 0.6432, higher is better) while P@10 "
        "worsened beyond its tolerance (Δ -0.0185: bm25 0.2685 → wide 0.2500, higher is "
        "better; tolerance 0.01): the gain is bought with P@10")


def test_passing_outcomes_say_why():
    held = check(rule(), evidence({"R@100": 0.6, "P@10": 0.3}, {"R@100": 0.7, "P@10": 0.295}))
    assert held[0].passed and held[0].reason.startswith("R@100 improved (Δ +0.1000")
    assert "and P@10 held within its tolerance (Δ -0.0050" in held[0].reason
    idle = check(rule(), evidence({"R@100": 0.6, "P@10": 0.3}, {"R@100": 0.6, "P@10": 0.1}))
    assert idle[0].passed and idle[0].reason.startswith(
        "R@100 did not improve (Δ 0.0000: bm25 0.6000 → wide 0.6000, higher is better): the "
        "guard is not engaged; P@10 worsened beyond its tolerance (Δ -0.2000")


def test_a_lower_is_better_guard_fails_when_it_rises_beyond_its_tolerance():
    guards = (("P@10", 0.01), ("HardNeg@10", 0.002))
    ev = evidence({"R@100": 0.60, "P@10": 0.30, "HardNeg@10": 0.010},
                  {"R@100": 0.65, "P@10": 0.30, "HardNeg@10": 0.013})
    precision, hard = check(rule("R@100", *guards), ev)
    assert precision.passed and not hard.passed
    assert hard.name == "guarded R@100 ↔ HardNeg@10" and hard.threshold == 0.002
    assert "HardNeg@10 worsened beyond its tolerance (Δ +0.0030: bm25 0.0100 → wide 0.0130, " \
           "lower is better; tolerance 0.002)" in hard.reason
    fewer = evidence({"R@100": 0.60, "HardNeg@10": 0.010}, {"R@100": 0.65, "HardNeg@10": 0.0})
    assert check(rule("R@100", ("HardNeg@10", 0.0)), fewer)[0].passed


def test_a_gain_within_min_gain_engages_no_guard():
    ev = evidence({"RR@10": 0.50, "nDCG@10": 0.40}, {"RR@10": 0.505, "nDCG@10": 0.30})
    assert check(rule("RR@10", ("nDCG@10", 0.0), min_gain=0.01), ev)[0].passed
    (outcome,) = check(rule("RR@10", ("nDCG@10", 0.0), min_gain=0.004), ev)
    assert not outcome.passed and "higher is better; min_gain 0.004)" in outcome.reason


def test_latency_as_primary_and_as_guard():
    fast = {"bm25": {"p50": 10.0, "p95": 40.0}, "wide": {"p50": 5.0, "p95": 25.0}}
    ev = evidence({"nDCG@10": 0.40}, {"nDCG@10": 0.38}, latency=fast)
    (outcome,) = check(rule("latency p95", ("nDCG@10", 0.01)), ev)
    assert not outcome.passed and outcome.name == "guarded latency p95 ↔ nDCG@10"
    assert outcome.reason.startswith("latency p95 improved (Δ -15.0: bm25 40.0 ms → wide 25.0 "
                                     "ms, lower is better) while nDCG@10 worsened")
    slow = {"bm25": fast["wide"], "wide": fast["bm25"]}
    assert check(rule("latency p95", ("nDCG@10", 0.01)), evidence(
        {"nDCG@10": 0.40}, {"nDCG@10": 0.38}, latency=slow))[0].passed
    better = evidence({"nDCG@10": 0.38}, {"nDCG@10": 0.40}, latency=slow)
    (guard,) = check(rule("nDCG@10", ("latency p95", 10.0)), better)
    assert not guard.passed and guard.value == 15.0 and guard.threshold == 10.0
    assert "latency p95 worsened beyond its tolerance (Δ +15.0: bm25 25.0 ms → wide 40.0 ms, " \
           "lower is better; tolerance 10)" in guard.reason


@pytest.mark.parametrize(("baseline", "candidate", "latency", "words"), [
    ({"R@100": 0.6, "P@10": 0.3}, {"R@100": 0.7}, None,
     "no P@10 for wide in the evaluation summary: cannot check the guard P@10"),
    ({"R@100": 0.6, "P@10": 0.3}, {"R@100": 0.7, "P@10": entry(None, applicable=False)}, None,
     "P@10 is not applicable to wide: the evaluation lacks what it needs"),
    ({"R@100": 0.6, "HardNeg@10": UNMARKED}, {"R@100": 0.7, "HardNeg@10": UNMARKED}, None,
     "HardNeg@10 is not applicable to wide: the qrels mark no hard negatives; HardNeg@10 is "
     "not applicable to bm25: the qrels mark no hard negatives: cannot check the guard"),
    ({"R@100": entry(math.nan, n=0, undefined=50), "P@10": 0.3}, {"R@100": 0.7, "P@10": 0.3},
     None, "R@100 of bm25 is undefined (n=0, undefined=50): cannot tell whether R@100 "
     "improved"),
    ({"nDCG@10": 0.4}, {"nDCG@10": 0.3}, {"bm25": {"p95": 40.0}, "wide": {"p95": None}},
     "latency p95 not measured for wide: cannot tell whether latency p95 improved"),
])
def test_missing_evidence_never_passes(baseline, candidate, latency, words):
    primary = "latency p95" if latency else "R@100"
    guard = next(m for m in (*baseline, *candidate) if m != primary)
    (outcome,) = check(rule(primary, (guard, 1.0)), evidence(baseline, candidate, latency))
    assert not outcome.passed and outcome.value is None and words in outcome.reason


def test_a_measure_of_unknown_direction_fails():
    ev = evidence({"R@100": 0.6, "P@10": 0.3}, {"R@100": 0.7, "P@10": 0.2}, better={})
    (outcome,) = check(rule(), ev)
    assert not outcome.passed
    assert outcome.reason == ("the direction of R@100 (higher or lower is better) is unknown: "
                              "cannot tell whether R@100 improved")


def test_params_model_and_the_directions_the_stage_looks_up():
    p = Params.model_validate({"gate": {"rules": [
        {"rule": "guarded", "primary": "R@100",
         "guards": [{"measure": "P@10", "tolerance": 0.01}, {"measure": "HardNeg@10"}]},
        {"rule": "guarded", "primary": "latency p95", "guards": [{"measure": "nDCG@10"}]}]}})
    assert p.gate.rules[0] == rule("R@100", ("P@10", 0.01), ("HardNeg@10", 0.0))
    assert directions(p.gate.rules) == {"R@100": "higher", "P@10": "higher",
                                        "HardNeg@10": "lower", "nDCG@10": "higher"}
    for bad, word in (({"primary": "R@100", "guards": []}, "guards"),
                      ({"primary": "R@100"}, "guards"),
                      ({"guards": [{"measure": "P@10"}]}, "primary"),
                      ({"primary": "R@100", "guards": [{"measure": "P@10", "tolerance": -1}]},
                       "tolerance"),
                      ({"primary": "R@100", "guards": [{"measure": "P@10", "tol": 0.1}]},
                       "tol")):
        with pytest.raises(ValueError, match=word):
            Params.model_validate({"gate": {"rules": [{"rule": "guarded", **bad}]}})
    with pytest.raises(InputError, match="nope"):
        directions([rule("R@100", ("nope@3", 0.0))])


# --- a widened matcher on the demo data -----------------------------------------------------

MEASURES = ["R@100", "P@10", "HardNeg@10"]


def trigrams(text: str) -> str:
    """Each word as its character trigrams (a word shorter than three characters whole)."""
    return " ".join(w[i:i + 3] for w in re.findall(r"\w+", text.lower())
                    for i in range(max(1, len(w) - 2)))


def fuzzy(frame: pd.DataFrame, columns) -> pd.DataFrame:
    return frame.assign(**{c: frame[c].fillna("").map(trigrams) for c in columns})


@pytest.fixture(scope="module")
def widened():
    """BM25 on the demo data (its qrels mark the deliberately close near misses and the
    near-duplicates as hard negatives), and the same route with its matcher widened to fuzzy
    matching: a query word matches every document word that shares a character trigram with
    it, not only itself. Both searched to depth 100 under the visibility rule, evaluated by
    the engine."""
    data = generate(n_docs=1000, n_queries=300)
    qrels = data.ground_truth
    assert qrels[S.HARD_NEGATIVE].sum() > 20
    visibility = Visibility(data.documents)
    runs = {}
    for name, docs, queries, kw in (
            ("bm25", data.documents, data.queries, {}),
            ("wide", fuzzy(data.documents, [S.TITLE, S.TEXT]), fuzzy(data.queries, [S.TEXT]),
             {"stemmer": None, "stopwords": None})):
        retriever = BM25Retriever(**kw)
        retriever.index(docs)
        runs[name] = retriever.search(queries, 100, visibility).run
    systems = evaluate_systems(runs, qrels, MEASURES)
    per_query = {s: systems.per_query[systems.per_query[S.SYSTEM] == s].drop(columns=S.SYSTEM)
                 for s in runs}
    comparison = compare(per_query["bm25"], per_query["wide"], MEASURES, resamples=2000)
    return documents.evidence(baseline="bm25", candidate="wide", comparison=documents.comparison(
        *comparison["paired"], baseline="bm25", candidate="wide", measures=MEASURES),
        summary=systems.summary, better=directions([rule(
                        "R@100", ("P@10", 0.0), ("HardNeg@10", 0.0))]))


def test_a_widened_matcher_buys_recall_with_precision_and_hard_negatives(widened):
    means = {s: {m: widened.summary[s][m].value for m in MEASURES} for s in ("bm25", "wide")}
    assert means["wide"]["R@100"] > means["bm25"]["R@100"]  # it matches more
    assert means["wide"]["P@10"] < means["bm25"]["P@10"]  # more of it wrong
    assert means["wide"]["HardNeg@10"] > means["bm25"]["HardNeg@10"]  # near misses let in
    recall_only = decide([NoRegression(measure="R@100")], widened)
    assert recall_only["passed"]  # the plain recall gate would ship it
    guarded = rule("R@100", ("P@10", 0.01), ("HardNeg@10", 0.0))
    decision = decide([guarded], widened)
    assert not decision["passed"]
    assert decision["failed"] == ["guarded R@100 ↔ P@10", "guarded R@100 ↔ HardNeg@10"]
    for outcome, measure in zip(decision["rules"], ("P@10", "HardNeg@10"), strict=True):
        bm25, wide = means["bm25"][measure], means["wide"][measure]
        assert f"R@100 improved (Δ +{means['wide']['R@100'] - means['bm25']['R@100']:.4f}" \
               in outcome["reason"]
        assert f"{measure} worsened beyond its tolerance (Δ {wide - bm25:+.4f}: bm25 " \
               f"{bm25:.4f} → wide {wide:.4f}" in outcome["reason"]


def test_an_if_applicable_guard_passes_only_where_its_measure_does_not_apply_to_the_data():
    unmarked = UNMARKED
    ev = evidence({"R@100": 0.6, "HardNeg@10": unmarked}, {"R@100": 0.7, "HardNeg@10": unmarked})
    optional = Guarded(primary="R@100", guards=[Guard(measure="HardNeg@10", if_applicable=True)])
    (outcome,) = check(optional, ev)
    assert outcome.passed and outcome.reason.endswith(
        "the guard HardNeg@10 does not apply to this data (if_applicable)")
    assert not outcome.applicable  # listed apart as n/a, never as a pass
    undefined = evidence({"R@100": 0.6, "HardNeg@10": entry(math.nan, n=0, undefined=50)},
                         {"R@100": 0.7, "HardNeg@10": 0.1})
    assert not check(optional, undefined)[0].passed  # undefined is missing evidence: fails
    worse = evidence({"R@100": 0.6, "HardNeg@10": 0.01}, {"R@100": 0.7, "HardNeg@10": 0.05})
    assert not check(optional, worse)[0].passed  # where it applies, it guards as any other
    assert check(optional, worse)[0].applicable
