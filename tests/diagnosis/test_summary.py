"""Failure summaries: safety violations as failures, counts by layer and slice, changes."""

import json

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.safety import violations
from releval.diagnosis.layers import FAILURE_COLUMNS, LAYERS
from releval.diagnosis.summary import (
    CHANGE_COLUMNS,
    SUMMARY_COLUMNS,
    changes,
    safety_failures,
    summary,
)
from tests.frames import doc, documents, queries, query


def run(*doc_ids, query_id="q1") -> pd.DataFrame:
    """A window: doc_ids at ranks 1..n, scores descending."""
    n = len(doc_ids)
    return pd.DataFrame({S.QUERY_ID: query_id, S.DOC_ID: list(doc_ids),
                         S.RANK: np.arange(1, n + 1), S.SCORE: np.arange(n, 0, -1, dtype=float)})


def test_safety_failures_from_real_violations():
    docs = documents(doc("ok"), doc("secret", acl=["hr"]), doc("gone", status="draft"))
    qs = queries(query("q1"))
    runs = {"ext": run("secret", "ok", "gone"), "lex": run("ok", "secret")}
    found = violations(runs, qs, docs, pd.DataFrame(columns=[S.QUERY_ID, S.DOC_ID, S.REASON]),
                       top_k=1)
    out = safety_failures(found, ["ext"])
    assert list(out.columns) == list(FAILURE_COLUMNS)
    assert out[S.DOC_ID].tolist() == ["secret", "gone"] and set(out[S.SYSTEM]) == {"ext"}
    assert (out["kind"] == "safety").all() and (out["layer"] == "filter").all()
    assert out[S.GRADE].isna().all() and (out["unjudged_in_top_k"] == 0).all()
    assert [json.loads(e) for e in out["evidence"]] == [
        {"reasons": ["acl"], "route": "ext", "in_top_k": True},
        {"reasons": ["status"], "route": "ext", "in_top_k": False}]
    assert out[S.RANK].tolist() == [1.0, 3.0]
    assert len(safety_failures(found, ["ext", "lex"])) == 3
    assert safety_failures(found, ["nobody"]).empty


def test_a_pair_breaking_two_rules_is_one_safety_failure_with_both_reasons():
    docs = documents(doc("ok"), doc("secret", acl=["hr"]))
    qs = queries(query("q1"))
    banned = pd.DataFrame({S.QUERY_ID: ["q1"], S.DOC_ID: ["secret"], S.REASON: ["hr only"]})
    found = violations({"ext": run("secret", "ok")}, qs, docs, banned, top_k=1)
    assert len(found) == 2  # acl and must_not_return
    out = safety_failures(found, ["ext"])
    assert len(out) == 1
    assert sorted(json.loads(out["evidence"].iloc[0])["reasons"]) == ["acl", "must_not_return"]


def failures_frame(rows) -> pd.DataFrame:
    return pd.DataFrame([{S.SYSTEM: s, S.QUERY_ID: q, S.DOC_ID: "d", S.GRADE: 1.0, "kind": kind,
                          "layer": layer, "evidence": "{}", "unjudged_in_top_k": 0,
                          S.RANK: np.nan} for s, q, kind, layer in rows])


FAILURES = failures_frame([("base", "q1", "relevance", "ranking"),
                           ("base", "q2", "relevance", "ranking"),
                           ("base", "q2", "relevance", "fusion"),
                           ("cand", "q1", "relevance", "corpus"),
                           ("cand", "q1", "safety", "filter"),
                           ("cand", "q2", "relevance", "ranking")])
LABELS = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q2"], "dimension": ["tag", "tag", "tenant"],
                       "slice": ["head", "paraphrase", "acme"]})


def test_summary_counts_overall_and_by_slice():
    out = summary(FAILURES, LABELS)
    assert list(out.columns) == list(SUMMARY_COLUMNS)
    overall = out[out["dimension"] == "all"]
    assert (overall["slice"] == "all").all()
    assert overall[[S.SYSTEM, "kind", "layer", "count"]].values.tolist() == [
        ["base", "relevance", "fusion", 1], ["base", "relevance", "ranking", 2],
        ["cand", "relevance", "corpus", 1], ["cand", "relevance", "ranking", 1],
        ["cand", "safety", "filter", 1]]
    sliced = out[out["dimension"] != "all"].set_index(
        [S.SYSTEM, "kind", "layer", "dimension", "slice"])["count"]
    assert sliced[("base", "relevance", "ranking", "tag", "head")] == 1
    assert sliced[("base", "relevance", "ranking", "tag", "paraphrase")] == 1
    assert sliced[("base", "relevance", "ranking", "tenant", "acme")] == 1
    assert sliced[("cand", "safety", "filter", "tag", "head")] == 1
    assert len(sliced) == 9  # (system, kind, layer) × the labels of the failure's query
    assert summary(FAILURES).equals(overall.reset_index(drop=True))


def test_changes_by_layer():
    out = changes(FAILURES, "base", "cand")
    assert list(out.columns) == list(CHANGE_COLUMNS)
    assert out["layer"].tolist() == list(LAYERS)
    got = out.set_index("layer")
    assert got.loc["ranking"].tolist() == [2, 1, -1]
    assert got.loc["fusion"].tolist() == [1, 0, -1]
    assert got.loc["corpus"].tolist() == [0, 1, 1]
    assert got.loc["filter"].tolist() == [0, 0, 0]  # the safety row is another kind
    assert changes(FAILURES, "base", "cand", kind=None).set_index("layer").loc[
        "filter"].tolist() == [0, 1, 1]
    assert changes(FAILURES, "base", "nobody")["candidate"].sum() == 0


