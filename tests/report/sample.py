"""A small hand-made report: every input of the HTML page, with names that need escaping."""

import math
import typing

import pandas as pd

from releval.data import contracts as S
from releval.decision.over_time import NOTE
from releval.diagnosis.worksheet import WORKSHEET_COLUMNS
from releval.documents.run_stats import RunStats
from releval.report.inputs import ReportInputs
from tests.documents import under

BASE, CAND = "bm25", 'hy<b>&"brid'  # the candidate's name needs escaping everywhere
MEASURE = "nDCG@10"
DIGEST = "0123456789abcdef" * 4


def entry(value, n=40, undefined=2):
    return {"value": value, "n": n, "undefined": undefined, "empty": 1, "applicable": True,
            "level": "query"}


SUMMARY = {
    "splits": ["test"], "queries": 42, "skipped": ["empty_sys"], "depth": 100,
    "qrels": "hand-made", "unjudged": 7,
    "systems": {BASE: {MEASURE: entry(0.5), "R@100": entry(None), "P@10": entry(0.4),
                       "AP": entry(0.25), "Judged@10": entry(0.875, 42, 0),
                       "HardNeg@10": entry(0.125, 42, 0)},
                CAND: {MEASURE: entry(0.61234), "R@100": entry(0.7), "P@10": entry(0.45),
                       "AP": entry(0.3), "Judged@10": entry(0.9, 42, 0),
                       "HardNeg@10": entry(0.0625, 42, 0)}},
    "no_answer_left_out": 0,
    "judgments": {"evaluated": 40, "invisible_left_out": 3,
                  "relevant_invisible_left_out": 1},
    "route_hits": {"bm25|dense": {"bm25-only": 4, "both": 9, "dense-only": 2, "neither": 1}},
}
SPLIT = {"method": "quantiles", "temporal": True, "cuts": ["2025-01-01", "2025-02-01"],
         "rule": "by time",
         "counts": {"train": 30, "test": 12}, "counts_by_tag": {"test": {"typo": 2}},
         "leakage": {"shared_sources": {"count": 1, "test_queries_affected": 2,
                                        "sources": [{"source_id": "kb-1", "train_queries": 1,
                                                     "test_queries": 2}]},
                     "duplicate_texts": {"count": 0, "examples": []}}}
STATS = {  # each system's run_stats.json
    BASE: {"system": BASE, "route": "bm25", "depth": 100, "n_queries": 42,
           "status": {"ok": 42},
           "candidates_per_query": {"mean": 64.25, "min": 0, "max": 100, "empty": 3},
           "latency_ms": {"p50": 0.25, "p95": 0.5, "p99": None}},
    CAND: {"system": CAND, "route": "hybrid", "depth": 100, "n_queries": 42,
           "status": {"ok": 42},
           "candidates_per_query": {"mean": 80.0, "min": 60, "max": 100, "empty": 0},
           "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0},
           "fusion": {"method": "rrf", "k": 10}, "tuning": "tuned on 5 queries"},
    "prod": {"system": "prod", "route": "external", "depth": 100, "n_queries": 42,
             "status": {"ok": 42},
             "candidates_per_query": {"mean": 90.0, "min": 80, "max": 100, "empty": 0},
             "latency_ms": {"p50": None, "p95": None, "p99": None}}}
INGEST = {"qrels": "hand-made", "source": "files",
          "rows_in": 5, "accepted_new": 3, "already_accepted": 1,
          "quarantined": 1, "by_reason": {"grade missing": 1},
          "hard_negatives": {"marked": 9, "kept": 5, "added": 3, "overruled": 1}}
AGREEMENT = {"judges": 2, "mean_pairwise_kappa_weighted": 0.5, "low_agreement": []}



def _ci(value, low, high):
    return {"value": value, "ci_low": low, "ci_high": high, "undefined_resamples": 0}


def _ppi(estimate):
    interval = {"estimate": estimate, "ci_low": estimate - 0.05, "ci_high": estimate + 0.05}
    return {"ppi": interval, "ppi_tuned": interval | {"lambda": 0.5},
            "automatic_only": interval, "human_only": interval, "n_labelled": 20,
            "n_unlabelled": 20, "excluded_labelled": 0, "excluded_unlabelled": 0,
            "alpha": 0.05, "heldout_human": estimate}


# autojudge/agreement_auto.json: the dense judge against people, two systems
AUTOMATIC = {
    "configured": True, "note": None,
    "judge": {"kind": "built-in", "name": "dense-similarity", "model": "minilm",
              "encoder_of": "dense", "thresholds": [0.2, 0.4], "weak": "A weak judge.",
              "labelled": 90, "asked": 90},
    "sample": {"validation_share": 0.5, "seed": 0, "evaluated": 40, "judged": 40,
               "validation": 20, "heldout": 20,
               "pairs": {"validation": 40, "heldout": 40, "hole": 10}},
    "labels": {name: {"human": h, "automatic": a, "automatic_share": a / (h + a),
                      "describes": name} for name, h, a in (("human", 80, 0),
                                                          ("automatic", 0, 90),
                                                          ("both", 80, 10))},
    "judged": {"measure": "Judged@10", "queries": 40,
               "systems": {s: {"human": 0.8, "automatic": 0.9, "both": 0.9}
                           for s in (BASE, CAND)}},
    "agreement": {"on": "the held-out queries' pairs both judged", "pairs": 40,
                  "queries": 20, "max_grade": 1, "human_only_pairs": 0,
                  "automatic_only_pairs": 0, "resamples": 500, "ci_alpha": 0.05, "seed": 0,
                  "exact": 0.75,
                  "mean_difference": 0.1,
                  "confusion": {"grades": [0, 1], "rows": "human", "columns": "automatic",
                                "counts": [[20, 6], [4, 10]]},
                  "kappa": {"linear": _ci(0.43, 0.2, 0.6), "quadratic": _ci(0.43, 0.2, 0.6)},
                  "alpha": {"ordinal": _ci(0.42, 0.2, 0.6), "interval": _ci(0.42, 0.2, 0.6)},
                  "per_query": {"figure": "kappa_quadratic", "queries": 20, "undefined": 3,
                                "quartiles": [0.1, 0.4, 0.7], "lowest": []}},
    "systems": {"on": "the held-out queries", "queries": 20, "measures": {}},
    "ranking": {"on": "the held-out queries", "labels": ["human", "automatic"],
                "measures": {MEASURE: {
                    "systems": 2, "queries": 20, "higher_is_better": True, "left_out": [],
                    "tau": _ci(-1.0, -1.0, 1.0),
                    "tau_ap": _ci(-1.0, -1.0, 1.0),
                    "rankings": [{"system": CAND, "mean_human": 0.61, "mean_automatic": 0.5,
                                  "rank_human": 1, "rank_automatic": 2},
                                 {"system": BASE, "mean_human": 0.5, "mean_automatic": 0.55,
                                  "rank_human": 2, "rank_automatic": 1}],
                    "flips": [{"system_a": BASE, "system_b": CAND, "diff_human": 0.11,
                               "ci_low_human": 0.02, "ci_high_human": 0.2,
                               "significant_human": True, "diff_automatic": -0.05,
                               "ci_low_automatic": -0.1, "ci_high_automatic": 0.01,
                               "significant_automatic": False, "flip": "human only"}],
                    "resamples": 500, "alpha": 0.05, "seed": 0}}},
    "ppi": {"labelled": "the validation queries' human values",
            "unlabelled": "every other judged query's automatic values",
            "measures": {MEASURE: {BASE: _ppi(0.5), CAND: _ppi(0.61)}}},
    "difference": {},
    "holes": {"filled": 10, "fill_holes": True, "relevant": 3, "queries": 8}}
PAIRED = {"measure": MEASURE, "slice": "all", "unit": "query", "n": 40, "excluded": 0,
          "mean_baseline": 0.5, "mean_candidate": 0.61234, "mean_diff": 0.11234,
          "median_diff": 0.1, "ci_low": 0.01, "ci_high": 0.2, "wins": 20, "ties": 15,
          "losses": 5, "p_value": 0.004, "p_holm": math.nan, "min_effect": 0.02,
          "verdict": "improved", "resamples": 500, "seed": 3, "units": 40, "alpha": 0.05,
          "sd": 0.2, "power": 0.8, "mde": 0.0916, "needed_queries": 787}
FAMILY = {"systems": [BASE, CAND, "team"], "left_out_systems": [], "family": "baseline",
          "correction": "holm", "test": "t",
          "query_set": {"choice": "judged", "rule": "every judged query", "judged": 40,
                        "compared": 40, "missing": {BASE: 0, CAND: 0, "team": 0},
                        "missing_either": 0, "left_out": 0, "complete": True,
                        "known": {BASE: True, CAND: True, "team": True},
                        "label": "all 40 judged queries, answered by every run"},
          "measures": [{"measure": MEASURE, "family": "baseline", "correction": "holm",
                        "test": "t", "alpha": 0.05, "resamples": 500, "seed": 3, "n": 40,
                        "left_out": 0,
                        "leaderboard": [
                            {"system": CAND, "mean": 0.61, "n": 40, "group": "a", "rank": 1,
                             "ci_low": 0.55, "ci_high": 0.67},
                            {"system": "team", "mean": 0.55, "n": 40, "group": "ab",
                             "rank": 2, "ci_low": 0.49, "ci_high": 0.6},
                            {"system": BASE, "mean": 0.5, "n": 40, "group": "b", "rank": 3,
                             "ci_low": 0.44, "ci_high": 0.56}],
                        "pairs": [
                            {"baseline": BASE, "candidate": CAND, "n": 40, "mean_baseline": 0.5,
                             "mean_candidate": 0.61, "mean_diff": 0.11, "ci_low": 0.03,
                             "ci_high": 0.19, "p_value": 0.004, "effect_size": 0.45,
                             "share_improved": 0.5, "p_adjusted": 0.008, "verdict": "improved",
                             "differ": True},
                            {"baseline": BASE, "candidate": "team", "n": 40,
                             "mean_baseline": 0.5, "mean_candidate": 0.55, "mean_diff": 0.05,
                             "ci_low": -0.01, "ci_high": 0.11, "p_value": 0.09,
                             "effect_size": 0.2, "share_improved": 0.4, "p_adjusted": 0.09,
                             "verdict": "inconclusive", "differ": False}]}]}
COMPARISON = {"baseline": BASE, "candidate": CAND, "controlled": False,
              "differences": ["budget: 100 vs <50>"], "measures": [MEASURE], "unit": "query",
              "strata": "kind",
              "conditions": {BASE: {"budget": 100, "qrels": "abc"},
                             CAND: {"budget": 50, "qrels": "abc"}},
              "paired": [PAIRED], "family": FAMILY,
              "note": "UNCONTROLLED: conditions differ", "unpaired": [], "aggregates": {},
              "composition": {}, "training": [],
              "change": {"kind": None, "label": "not declared: the general conditions only",
                         "holds_fixed": [], "inspections": {}}}
SLICES = pd.DataFrame({
    S.DIMENSION: ["all", "kind", "kind"], S.SLICE: ["all", "typo", "error_code"],
    S.MEASURE: [MEASURE] * 3, "n": [40, 25, 3], f"mean_{BASE}": [0.5, 0.4, math.nan],
    f"mean_{CAND}": [0.61, 0.55, math.nan], "too_small": [False, False, True],
    "mean_diff": [0.11, 0.15, math.nan], "ci_low": [0.01, -0.02, math.nan],
    "ci_high": [0.2, 0.3, math.nan], "p_holm": [0.01, 0.2, math.nan],
    "verdict": ["improved", "inconclusive", "too small"], "min_effect": [0.02] * 3})
SAFETY = {"top_k": 10,
          "systems": {BASE: {"routes": ["bm25"], "violations": 0, "own": 0, "by_reason": {},
                             "below_top_k": 0, "queries_affected": 0},
                      CAND: {"routes": ["hybrid", "bm25"], "violations": 3, "own": 3,
                             "by_reason": {"acl": 2, "deleted": 1}, "below_top_k": 2,
                             "queries_affected": 2}},
          "no_answer": {BASE: {"no_answer_queries": 4, "correct_refusals": 2,
                               "correct_refusal_rate": 0.5, "answerable_queries": 40,
                               "no_result": 1, "no_result_rate": 0.025, "threshold": None},
                        CAND: {"no_answer_queries": 4, "correct_refusals": 1,
                               "correct_refusal_rate": 0.25, "answerable_queries": 40,
                               "no_result": 2, "no_result_rate": 0.05, "threshold": None}},
          "skipped": []}
FAILURES = {"baseline": BASE, "candidate": CAND, "k": 10, "deep_k": 1000, "queries": 40,
            "chunk_map": False, "layers": ["corpus", "fusion", "ranking"],
            "by_layer": [{"layer": "corpus", "baseline": 1, "candidate": 1, "difference": 0},
                         {"layer": "fusion", "baseline": 0, "candidate": 2, "difference": 2},
                         {"layer": "ranking", "baseline": 9, "candidate": 4,
                          "difference": -5}],
            "safety": {BASE: 0, CAND: 3}, "review": None}
GATE = {"passed": False, "baseline": BASE, "candidate": CAND, "controlled": False,
        "differences": ["budget: 100 vs <50>"],
        "failed": [f"safety {CAND}"], "not_applicable": [], "note": None, "rollback": [],
        "rules": [{"rule": "safety", "name": f"safety {CAND}", "passed": False, "value": 3,
                   "threshold": 0,
                   "reason": "3 violation(s) > max 0 <acl>"},
                  {"rule": "latency", "name": "latency p95", "passed": True,
                   "value": 0.123456,
                   "threshold": 50.0, "reason": "fast"}]}
SHEET = pd.DataFrame([{c: "" for c in WORKSHEET_COLUMNS}
                      | {"system": BASE, "query_id": "q1", "query_text": "reset | password",
                         "doc_id": "d1", "kind": "relevance", "grade": "2",
                         "automatic_layer": "ranking"}])
PER_QUERY_DIFF = pd.DataFrame({
    S.QUERY_ID: ["q1", "q2", "q3", "q4", "q1"],
    S.MEASURE: [MEASURE] * 4 + ["R@100"],
    "baseline": [0.5, 0.2, math.nan, 0.9, 0.1],
    "candidate": [0.75, 0.2, math.nan, 0.4, 0.3],
    "diff": [0.25, 0.0, math.nan, -0.5, 0.2]})
CURVES = pd.DataFrame(
    [(system, family, k, f"{family}@{k}", value, 40)
     for system, shift in ((BASE, 0.0), (CAND, 0.1))
     for family in ("R", "nDCG", "Judged")
     for k, value in ((1, 0.2), (10, 0.5), (100, 0.7))
     for value in [min(value + shift, 1.0)]],
    columns=["system", "family", "k", S.MEASURE, S.VALUE, "n"])
VIOLATIONS = pd.DataFrame({S.SYSTEM: [CAND] * 3, S.QUERY_ID: ["q1", "q1", "q2"],
                           S.RANK: [1, 15, 120], S.REASON: ["acl", "acl", "deleted"]})
FAILURE_ROWS = pd.DataFrame({S.SYSTEM: [BASE, BASE, BASE, CAND, CAND],
                             S.QUERY_ID: ["q4", "q4", "q4", "q4", "q1"],
                             "layer": ["ranking", "ranking", "corpus", "fusion", "ranking"]})
QUERIES = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3", "q4"],
                        S.TEXT: ["<script>alert(1)</script>", "two", "three", "four"],
                        S.TAGS: [["typo", "a&b"], [], ["no_answer"], ["head"]]})
RECEIPT = {"receipt": {}, "sha256": DIGEST, "run": {}}


def _estimate(estimator, position, value, low, high, n, covers):
    return {"estimator": estimator, "position": position, "value": value, "ci_low": low,
            "ci_high": high, "n": n, "clip": None, "covers": covers}


OFFPOLICY = {  # offpolicy.json: a uniform candidate on a 3-slot log, with a reference
    "applicable": True, "reason": None,
    "log": {"path": "logs/bts", "rows": 1000, "contexts": 1000, "actions": 80, "positions": 3,
            "window": ["2025-01-01T00:00:00+00:00", "2025-01-07T00:00:00+00:00"],
            "evaluated_rows": 500,
            "evaluated_window": ["2025-01-04T00:00:00+00:00", "2025-01-07T00:00:00+00:00"]},
    "policy": {"kind": "uniform", "description": "uniform <over> the actions: 1/80 per item"},
    "estimators": ["ips", "dr"], "clip": None,
    "reward_model": {"model": "logistic", "train_share": 0.5, "train_rows": 500,
                     "window": ["2025-01-01T00:00:00+00:00", "2025-01-04T00:00:00+00:00"]},
    "resamples": 1000, "alpha": 0.05, "cluster": "row",
    "on_policy": {"value": 0.0042, "ci_low": 0.003, "ci_high": 0.0055, "n": 1000},
    "reference": {"value": 0.0038, "ci_low": 0.0026, "ci_high": 0.0051, "n": 1000,
                  "path": "logs/random"},
    "estimates": [_estimate("ips", "all", 0.0024, 0.001, 0.0042, 1000, True),
                  _estimate("ips", "1", 0.003, 0.0002, 0.0079, 333, True),
                  _estimate("dr", "all", 0.0013, -0.0001, 0.0029, 500, False)],
    "diagnostics": {"ess": 340.4, "ess_share": 0.034, "max_weight": 277.8, "mean_weight": 1.01,
                    "unsupported_share": 0.0, "mass_off_support": 0.0042, "min_ess": 100.0,
                    "passed": False, "reasons": ["0.42% of the candidate's probability mass is "
                                                 "on (item, position) pairs the log never "
                                                 "shows"]}}
OFFPOLICY_ESTIMATES = pd.DataFrame(
    [{"kind": "estimate", **e} for e in OFFPOLICY["estimates"]]
    + [{"kind": kind, "estimator": kind, "position": "all", "clip": None, "covers": None,
        **{k: OFFPOLICY[doc][k] for k in ("value", "ci_low", "ci_high", "n")}}
       for kind, doc in (("on_policy", "on_policy"), ("reference", "reference"))])
OFFPOLICY_WEIGHTS = pd.DataFrame({"low": [0.0, 0.01, 0.1, 1.0, 10.0],
                                  "high": [0.0, 0.1, 1.0, 10.0, 300.0],
                                  "rows": [0, 200, 500, 280, 20]}).assign(
    share=lambda f: f["rows"] / 1000)


SOURCE = {"source": "hand-made <data>", "qrels": "hand-made", "documents": 100, "queries": 42,
          "judgments": 120, "hard_negatives": 9, "must_not_return": 3}


def inputs(**changes) -> ReportInputs:
    """The sample's inputs, every optional one given, with ``changes``; a document given as a
    dict (part of one: completed with the sample's) is read as its model (``model``)."""
    fields = dict(summary=SUMMARY, stats=STATS, comparison=COMPARISON, slices=SLICES,
                  safety=SAFETY, failures=FAILURES, sheet=SHEET, gate=GATE,
                  split_report=SPLIT, source=SOURCE, ingest=INGEST,
                  agreement=AGREEMENT, measure=MEASURE, min_n=20,
                  per_query_diff=PER_QUERY_DIFF, curves=CURVES, violations=VIOLATIONS,
                  failure_rows=FAILURE_ROWS, queries=QUERIES, receipt=RECEIPT,
                  automatic=AUTOMATIC, selftest=SELFTEST,
                  offpolicy=OFFPOLICY, offpolicy_estimates=OFFPOLICY_ESTIMATES,
                  offpolicy_weights=OFFPOLICY_WEIGHTS)
    return ReportInputs(**{name: model(name, value) for name, value in (fields | changes).items()})


# the sample's whole document of each ReportInputs field a test may give in part
WHOLE = {"summary": lambda: SUMMARY, "comparison": lambda: COMPARISON,
         "safety": lambda: SAFETY, "failures": lambda: FAILURES, "gate": lambda: GATE,
         "split_report": lambda: SPLIT, "source": lambda: SOURCE, "ingest": lambda: INGEST,
         "selftest": lambda: SELFTEST}


def _model_of(annotation):
    """The document model of a ReportInputs field's annotation (``X | None``: X)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return _model_of(args[0]) if args else annotation


def model(field: str, value):
    """``value`` of the ReportInputs ``field`` as the report stage reads it: a document given
    as a dict validated into its model (a part completed with the sample's whole document,
    ``WHOLE``); ``stats``: each system's ``RunStats``; anything else as it is."""
    if not isinstance(value, dict) or field == "history":
        return value
    if field == "stats":
        return {s: v if isinstance(v, RunStats) else RunStats.model_validate(
            under(STATS.get(s, STATS[BASE]) | {"system": s}, v)) for s, v in value.items()}
    whole = WHOLE.get(field)
    doc = whole() | value if whole else value
    return _model_of(typing.get_type_hints(ReportInputs)[field]).model_validate(doc)


# --- a recommendation evaluation: users as queries --------------------------------------

def rec_entry(value, n=40, undefined=2, level="query", applicable=True):
    return {"value": value, "n": n, "undefined": undefined, "empty": 0, "level": level,
            "applicable": applicable}


NOT_APPLICABLE = rec_entry(None, n=0, undefined=0, level="system", applicable=False)
REC_SUMMARY = SUMMARY | {
    "qrels": "purchases",
    "systems": {
        BASE: {"HR@10": rec_entry(0.25), "nDCG@10": rec_entry(0.5), "AUC": rec_entry(0.7),
               "GAUC": rec_entry(0.68, n=38, level="system"),
               "LogLoss": NOT_APPLICABLE, "ECE(bins=10)": NOT_APPLICABLE,
               "Coverage@10": rec_entry(0.125, n=40, undefined=0, level="system"),
               "Novelty@10": rec_entry(None, n=0, undefined=40)},
        CAND: {"HR@10": rec_entry(0.375), "nDCG@10": rec_entry(0.61234),
               "AUC": rec_entry(0.75), "GAUC": rec_entry(0.72, n=38, level="system"),
               "LogLoss": rec_entry(0.4321, n=40, undefined=0, level="system"),
               "ECE(bins=10)": rec_entry(0.0456, n=40, undefined=0, level="system"),
               "Coverage@10": rec_entry(0.25, n=40, undefined=0, level="system"),
               "Novelty@10": rec_entry(7.5)}},
    "recommendation": {"horizon_days": 30, "exclude_seen": True, "negatives": "sample",
                       "n_negatives": 100, "users": 42,
                       "users_with_positives_in_horizon": 41, "users_scored": 40,
                       "users_only_unpublished_positives": 1, "undefined_users": 2,
                       "serendipity_expected": "popularity", "ild_embeddings": None,
                       "probabilities": [CAND], "not_applicable": {BASE: ["LogLoss"]},
                       "held_out_users": 5},
}
REC_SPLIT = SPLIT | {"random_split": {  # the shape of releval.retrieval.leakage
    "protocol": "a seeded random 80/20 split of the same log",
    "cut": "2011-10-01T00:00:00+00:00", "issued_at": "2011-10-31T00:00:00+00:00",
    "horizon_days": 30, "seed": 7, "interactions": 1000, "held_out": 200, "share": 0.2,
    "queries": 40, "systems": {"popularity": {"route": "popularity",
                               "forward": {"HR@10": 0.2, "nDCG@10": 0.1, "n": 40},
                               "random": {"HR@10": 0.3, "nDCG@10": 0.125, "n": 38},
                               "inflation": {"HR@10": 0.1, "nDCG@10": 0.025},
                               "ratio": {"HR@10": 1.5, "nDCG@10": 1.25}}}}}
RELIABILITY = pd.DataFrame(
    [(CAND, binning, b, b / 4, (b + 1) / 4, n, (b + 0.5) / 4, observed)
     for binning, bins in (("width", ((0, 30, 0.1), (1, 20, 0.3), (2, 0, None),
                                      (3, 5, 0.9))),
                           ("mass", ((0, 14, 0.05), (1, 14, 0.35), (2, 14, 0.6), (3, 13, 0.8))))
     for b, n, observed in bins],
    columns=["system", "binning", "bin", "lo", "hi", "n", "mean_predicted", "observed"])
RELIABILITY.loc[RELIABILITY["n"] == 0, "mean_predicted"] = math.nan


HORIZONS = {"days": [7, 28], "rows": [
    {"horizon_days": d, "measure": MEASURE, "n": n, "baseline": 0.2, "candidate": 0.2 + delta,
     "delta": delta, "ci_low": delta - 0.01, "ci_high": delta + 0.01, "p_holm": 0.01,
     "verdict": verdict} for d, n, delta, verdict in ((7, 300, 0.05, "improved"),
                                                     (28, 800, 0.01, "too small"))],
    "novelty": [{"measure": MEASURE, "short_days": 7, "long_days": 28, "delta_short": 0.05,
                 "ci_short": [0.04, 0.06], "delta_long": 0.01, "ci_long": [0.0, 0.02],
                 "gain_short": 0.05, "gain_long": 0.01, "shrink": 0.04, "min_effect": 0.01,
                 "novelty": True}]}
REC_COMPARISON = COMPARISON | {"horizons": HORIZONS}


def rec_inputs(**changes) -> ReportInputs:
    """The sample as a recommendation evaluation, with ``changes``."""
    return inputs(**({"summary": REC_SUMMARY, "split_report": REC_SPLIT,
                      "reliability": RELIABILITY, "comparison": REC_COMPARISON} | changes))


# --- the self-test (data/selftest/) ---------------------------------------------------------
SELFTEST_ROWS = pd.DataFrame({
    "system": ["bm25", "bm25", "team"], "route": ["bm25", "bm25", "external"],
    "relation": ["term_permutation", "doc_rename", "doc_rename"],
    "statement": ["same ranking", "renamed results", "renamed results"],
    "precondition": ["bag of words", "a scorer", "a scorer"],
    "trials": [50, 50, 0], "reached": [48, 50, 0], "passed": [48, 50, 0], "failed": [0, 0, 0],
    "ok": pd.array([True, True, pd.NA], dtype="boolean"),
    "status": ["passed", "passed", "not_applicable"],
    "example": ["", "", "a team's run file has no scorer to re-run"]})
DIFFERENTIAL = pd.DataFrame({
    "oracle": ["pytrec_eval", "pytrec_eval", "ranx"], "version": ["0.5", "0.5", None],
    "measure": ["P@10", "P@10", "P@10"], "path": ["ordinary", "score_ties", "ordinary"],
    "cases": [40, 12, 0], "agreed": [40, 12, 0],
    "status": ["agree", "agree", "not installed"]})
SELFTEST = {"relations": 3, "trials": 100, "reached": 98, "passed": 98, "failed": 0,
            "not_passed": 0, "not_applicable": 1, "ok": True,
            "systems": {"bm25": {"relations": 2, "trials": 100, "reached": 98, "passed": 98,
                                 "failed": 0, "not_passed": 0, "not_applicable": 0,
                                 "ok": True},
                        "team": {"relations": 1, "trials": 0, "reached": 0, "passed": 0,
                                 "failed": 0, "not_passed": 0, "not_applicable": 1,
                                 "ok": None}},
            "differential": {
                "ok": True, "oracles": {
                    "pytrec_eval": {"version": "0.5", "measures": 1, "paths": 2, "cases": 52,
                                    "agree": 2, "differ": 0},
                    "ranx": {"version": None, "measures": 0, "paths": 0, "cases": 0,
                             "agree": 0, "differ": 0}}}}


# --- the run ledger (reports/runs/): three receipts, oldest first ----------------------------

def figure(mean, low=None, high=None, n=40):
    return {"mean": mean, "ci_low": low, "ci_high": high, "n": n, "n_undefined": 0,
            "slices": []}


def _receipt(finished, headline, figures=None, fixture=None, schedule=None, over_time=None):
    """A valid ledger receipt document (the fields ``releval.project.history.entries``
    reads) and its file name."""
    from releval.project.receipt import digest

    r = {"code": {"commit": "0123456789abcdef", "dirty": False},
         "work": {"queries_evaluated": 40}, "inputs": {"data/input/fixture": "f1"},
         "figures": figures, "fixture": fixture}
    run = {"finished_at": finished, "schedule": schedule, "over_time": over_time,
           "headline": {"measure": MEASURE, "baseline": BASE, "candidate": CAND} | headline}
    doc = {"receipt": r, "sha256": digest(r), "run": run}
    return f"{finished[:19].replace('-', '').replace(':', '')}Z-{doc['sha256'][:12]}.json", doc


def _fixture(base, cand):
    """The pinned fixture's summary as a receipt keeps it (fixture.json)."""
    systems = {s: {MEASURE: {k: v for k, v in figure(*m).items() if k != "slices"}}
               for s, m in ((BASE, base), (CAND, cand))}
    return {"fixture": "data/input/fixture", "systems": systems, "not_applicable": {}}


def _figures(base, cand, recall=None):
    systems = {BASE: {MEASURE: figure(*base)}, CAND: {MEASURE: figure(*cand)}}
    if recall:
        systems[BASE]["R@100"], systems[CAND]["R@100"] = figure(recall[0]), figure(recall[1])
    return {"dimension": "kind", "alpha": 0.05, "systems": systems}


COMPOSITION_CASE = {"before": 0.32, "after": 0.68, "delta": 0.36, "rate": 0.0, "mix": 0.36,
                    "equal_slice_before": 0.5, "equal_slice_after": 0.5, "mix_shift": True,
                    "slices": [], "controlled": False,
                    "note": "different query samples: not a controlled comparison",
                    "macro_before": 0.32, "macro_after": 0.68}
DRIFT_WHY = ("live +0.3600 while the pinned fixture stayed (0.0000): drift of the traffic or "
             "the corpus, to investigate")


def ledger_docs() -> list[tuple[str, dict]]:
    """Three runs: an old receipt with neither figures nor fixture (PASS), a scheduled run
    whose over-time comparison is not comparable (FAIL), and one whose candidate moved by the
    query mix alone (a composition case, PASS)."""
    first = _receipt("2026-11-01T08:00:00+00:00",
                     {"systems": {BASE: 0.3, CAND: 0.31}, "decision": "PASS", "failed": []})
    second = _receipt(
        "2026-11-08T08:00:00+00:00",
        {"systems": {BASE: 0.3, CAND: 0.32}, "decision": "FAIL",
         "failed": [f"safety {CAND}"], "controlled": False},
        figures=_figures((0.3, 0.25, 0.35), (0.32, 0.27, 0.37), recall=(0.7, 0.72)),
        fixture=_fixture((0.6, 0.55, 0.65), (0.7, 0.65, 0.75)),
        schedule={"deployment": "weekly", "flow_run": "fr-2", "flow_run_id": "id-2",
                  "scheduled_at": "x",
                  "window": {"prepare.window.start": "2026-11-01"}},
        over_time={"controlled": False, "comparable": False,
                   "why": "the earlier run kept no per-slice figures",
                   "previous": {"sha256": first[1]["sha256"][:12],
                                "finished_at": "2026-11-01T08:00:00+00:00"}})
    third = _receipt(
        "2026-11-15T08:00:00+00:00",
        {"systems": {BASE: 0.45, CAND: 0.68}, "decision": "PASS", "failed": []},
        figures=_figures((0.45, 0.4, 0.5), (0.68, 0.6, 0.75), recall=(0.71, 0.8)),
        fixture=_fixture((0.6, 0.55, 0.65), (0.7, 0.65, 0.75)),
        over_time={"controlled": False, "comparable": True, "dimension": "kind",
                   "note": NOTE,
                   "previous": {"sha256": second[1]["sha256"][:12],
                                "finished_at": "2026-11-08T08:00:00+00:00"},
                   "systems": {CAND: {MEASURE: COMPOSITION_CASE}},
                   "attribution": {CAND: {MEASURE: {"live": 0.36, "fixture": 0.0,
                                                    "verdict": "drift", "why": DRIFT_WHY}}}})
    return [first, second, third]


def write_ledger(folder, runs: int = 3):
    """The first ``runs`` of ``ledger_docs`` as receipt files in ``folder``; the folder."""
    from releval.project.receipt import write

    for name, doc in ledger_docs()[:runs]:
        write(folder / name, doc)
    return folder


def history(folder, runs: int = 3) -> list[dict]:
    """The ledger's rows (``releval.project.history.entries``) of ``write_ledger``."""
    from releval.project.history import entries

    return entries(write_ledger(folder, runs))


# --- a ledger of two lineages: retrieval and recommendation runs in one checkout -------------

RETRIEVAL_PARAMS = {"prepare": {"source": "demo"}}
RECSYS_PARAMS = {"prepare": {"source": "recsys_demo"}}


def lineage_docs() -> list[tuple[str, dict]]:
    """Three runs with params: retrieval (nDCG@10 0.5), recommendation (0.2), retrieval
    again; the figures of the two retrieval runs are comparable, the recommendation run's
    are not."""
    from releval.project.receipt import digest

    out = []
    for i, (params, mean) in enumerate(((RETRIEVAL_PARAMS, 0.5), (RECSYS_PARAMS, 0.2),
                                        (RETRIEVAL_PARAMS, 0.52)), start=1):
        _, doc = _receipt(f"2026-12-0{i}T08:00:00+00:00",
                          {"systems": {BASE: mean, CAND: mean + 0.01}, "decision": "PASS",
                           "failed": []},
                          figures=_figures((mean, mean - 0.05, mean + 0.05),
                                           (mean + 0.01, mean - 0.04, mean + 0.06)))
        doc["receipt"]["params"] = {"values": params}
        doc["sha256"] = digest(doc["receipt"])
        out.append((f"2026120{i}T080000Z-{doc['sha256'][:12]}.json", doc))
    return out


# --- the markdown pages of the sample's documents, read as their models ----------------------

def summary_md(summary=SUMMARY, split_report=SPLIT, source="hand-made <data>", history=None):
    """summary.md (``render_summary``) of the sample with ``summary`` and ``split_report``
    (dicts, read as their models) and the source's name."""
    from releval.report.summary import render_summary

    i = inputs(summary=summary, split_report=split_report, source=SOURCE | {"source": source})
    return render_summary(i.summary, i.split_report, i.source, i.stats, i.ingest, i.agreement,
                          history)


def decision_md(**changes) -> str:
    """decision.md (``render_decision``) of ``inputs(**changes)``, without health or a query
    set section."""
    from releval.report.decision import render_decision

    i = inputs(**changes)
    return render_decision(i.comparison, i.slices, i.safety, i.failures, i.sheet, i.gate,
                           i.min_n, {}, [])
