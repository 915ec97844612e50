"""Stage ``autojudge``: the built-in judge on a tiny corpus whose vectors sit in the embedding
cache (the model never loads), a labels file that copies people, and the n/a path."""

import json

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.documents.agreement_auto import AgreementAuto
from releval.judging.automatic import read_labels
from releval.judging.similarity import retriever
from releval.params import Params
from stages import autojudge as stage
from tests.frames import doc, documents, queries, query

N_QUERIES, N_DOCS, DIM, MAX_GRADE = 24, 30, 6, 3
CUTS = np.array([0.0, 0.35, 0.7])  # people's grade = #cuts the cosine reaches
RNG = np.random.default_rng(7)
Q_VEC = RNG.normal(size=(N_QUERIES, DIM))
D_VEC = RNG.normal(size=(N_DOCS, DIM))
Q_VEC /= np.linalg.norm(Q_VEC, axis=1, keepdims=True)
D_VEC /= np.linalg.norm(D_VEC, axis=1, keepdims=True)
COSINE = Q_VEC @ D_VEC.T
DOCS = documents(*(doc(f"d{i}") for i in range(N_DOCS)))
QUERIES = queries(*(query(f"q{i}", text=f"query {i}") for i in range(N_QUERIES)))
SPLIT = pd.DataFrame({S.QUERY_ID: QUERIES[S.QUERY_ID], S.SPLIT: "test"})


def ranked(name: str, noise: float) -> pd.DataFrame:
    """Each query's top 10 by cosine plus seeded noise."""
    score = COSINE + np.random.default_rng(len(name)).normal(scale=noise, size=COSINE.shape)
    rows = [(f"q{q}", f"d{d}", r + 1, float(score[q, d]))
            for q in range(N_QUERIES) for r, d in enumerate(np.argsort(-score[q])[:10])]
    frame = pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE])
    return frame.assign(**{S.SYSTEM: name, S.ROUTE: name})[list(S.RUN_COLUMNS)]


RUNS = {"bm25": ranked("bm25", 0.6), "dense": ranked("dense1", 0.05),
        "hybrid": ranked("hybrid", 0.3)}
# people judged each query's 12 best documents by cosine; the pool adds every top 5
JUDGED = [(q, d) for q in range(N_QUERIES) for d in np.argsort(-COSINE[q])[:12]]
QRELS = pd.DataFrame({S.QUERY_ID: [f"q{q}" for q, _ in JUDGED],
                      S.DOC_ID: [f"d{d}" for _, d in JUDGED],
                      S.GRADE: [int((COSINE[q, d] >= CUTS).sum()) for q, d in JUDGED]})
POOL = pd.concat([r[r[S.RANK] <= 5][[S.QUERY_ID, S.DOC_ID]] for r in RUNS.values()]
                 ).drop_duplicates()


def params(tmp_path, **automatic) -> Params:
    return Params.model_validate({
        "prepare": {"max_grade": MAX_GRADE},
        "candidates": {"systems": {"bm25": {"route": "bm25"}, "dense": {
            "route": "dense", "cache_dir": str(tmp_path)}}},
        "judgments": {"automatic": {"judge": "dense"} | automatic},
        "compare": {"baseline": "bm25", "candidate": "dense", "measures": ["nDCG@10", "AP"]}})


@pytest.fixture()
def cached(tmp_path):
    """The corpus' vectors stored in the dense system's embedding cache."""
    r = retriever(params(tmp_path).candidates.systems["dense"])
    for cache, texts, vectors in ((r.document_cache, r.document_texts(DOCS), D_VEC),
                                  (r.query_cache, QUERIES[S.TEXT].tolist(), Q_VEC)):
        table = dict(zip(texts, vectors.astype(np.float32), strict=True))
        cache.encode(texts, lambda batch, table=table: np.stack([table[t] for t in batch]))
    return tmp_path


def test_the_built_in_judge_labels_the_pool_and_is_validated_on_held_out_queries(cached):
    out = stage.run(params(cached), stage.Inputs(RUNS, POOL, QRELS, DOCS, QUERIES, SPLIT))
    auto, r = out.automatic, out.report
    AgreementAuto.check(r)
    json.dumps(r, allow_nan=False)
    assert list(auto.columns) == ["query_id", "doc_id", "grade", "judge", "model",
                                  "confidence", "role"]
    assert not auto.duplicated([S.QUERY_ID, S.DOC_ID]).any()
    holes = POOL.merge(QRELS, how="left", on=[S.QUERY_ID, S.DOC_ID])[S.GRADE].isna().sum()
    assert r["sample"]["pairs"] == {"validation": 144, "heldout": 144, "hole": int(holes)}
    assert r["holes"]["filled"] == holes > 0
    assert r["sample"]["validation"] == r["sample"]["heldout"] == 12
    # the labels file the both set reads: people's grades plus the holes
    assert r["labels"]["both"]["human"] == len(QRELS)
    assert r["labels"]["both"]["automatic"] == holes
    # a judge that sees the cosine people graded by agrees with them well
    assert r["agreement"]["kappa"]["quadratic"]["value"] > 0.8
    assert r["agreement"]["pairs"] == 144  # the held-out pairs only
    assert sum(map(sum, r["agreement"]["confusion"]["counts"])) == 144
    ranking = r["ranking"]["measures"]["nDCG@10"]
    assert ranking["systems"] == 3 and ranking["queries"] == 12
    ppi = r["ppi"]["measures"]["AP"]["dense"]
    assert ppi["n_labelled"] + ppi["excluded_labelled"] == 12
    assert ppi["ppi"]["ci_low"] <= ppi["ppi"]["estimate"] <= ppi["ppi"]["ci_high"]
    assert set(r["difference"]) == {"nDCG@10", "AP"}
    assert set(out.per_query["labels"]) == {"human", "automatic", "both"}


def test_the_judge_never_reads_the_held_out_grades(cached):
    first = stage.run(params(cached), stage.Inputs(RUNS, POOL, QRELS, DOCS, QUERIES, SPLIT))
    held = first.automatic[first.automatic["role"] == "heldout"]
    changed = QRELS.merge(held[[S.QUERY_ID, S.DOC_ID]], how="left", indicator=True)
    flipped = QRELS.assign(**{S.GRADE: np.where(changed["_merge"] == "both",
                                                MAX_GRADE - QRELS[S.GRADE], QRELS[S.GRADE])})
    second = stage.run(params(cached), stage.Inputs(RUNS, POOL, flipped, DOCS, QUERIES, SPLIT))
    pd.testing.assert_frame_equal(first.automatic, second.automatic)
    assert (second.report["agreement"]["kappa"]["quadratic"]["value"]
            < first.report["agreement"]["kappa"]["quadratic"]["value"])


def test_a_labels_file_that_copies_people_agrees_perfectly(cached):
    path = cached / "labels.csv"
    QRELS.assign(judge="copy", model="people").to_csv(path, index=False)
    p = params(cached, judge="copy", labels=str(path))
    labels = read_labels(path, judge="copy", max_grade=MAX_GRADE)
    r = stage.run(p, stage.Inputs(RUNS, POOL, QRELS, DOCS, QUERIES, SPLIT, labels)).report
    assert r["judge"] | {"labels": None} == {
        "kind": "file", "name": "copy", "model": "people", "labels": None,
        "labelled": len(QRELS), "asked": r["judge"]["asked"],
        "unmatched": {"labels": len(QRELS), "unknown_queries": 0, "unknown_documents": 0,
                      "first_unknown_query": None, "first_unknown_document": None}}
    a = r["agreement"]
    assert a["kappa"]["linear"]["value"] == a["kappa"]["quadratic"]["value"] == 1
    assert a["alpha"]["ordinal"]["value"] == a["alpha"]["interval"]["value"] == 1
    for x in r["ranking"]["measures"].values():
        assert x["tau"]["value"] == x["tau_ap"]["value"] == 1 and x["flips"] == []
    assert r["holes"]["filled"] == 0


def test_labels_naming_nothing_of_the_data_are_counted_and_said(cached):
    """Labels of a query and of a document the data lacks label no pair: they are not read,
    and the stage's line and the report's judge line count them, naming the first of each."""
    path = cached / "labels.csv"
    extra = pd.DataFrame({S.QUERY_ID: ["x1", "q0", "q1"], S.DOC_ID: ["d0", "zz", "zz"],
                          S.GRADE: [1, 2, 0]})
    pd.concat([QRELS, extra]).assign(judge="copy", model="people").to_csv(path, index=False)
    p = params(cached, judge="copy", labels=str(path))
    labels = read_labels(path, judge="copy", max_grade=MAX_GRADE)
    out = stage.run(p, stage.Inputs(RUNS, POOL, QRELS, DOCS, QUERIES, SPLIT, labels))
    counts = out.report["judge"]["unmatched"]
    assert (counts["unknown_queries"], counts["unknown_documents"]) == (1, 2)
    line = stage.line(p, out)
    assert (f"of {len(QRELS) + 3:,} labels, 1 name a query not in the data (first: x1/d0) and "
            "2 a document not in the data (first: q0/zz): not read") in line
    from releval.report.automatic import _labels
    doc = AgreementAuto.model_validate(json.loads(json.dumps(out.report, default=str)))
    assert "Labels file: of" in _labels(doc)[0]


def test_without_an_automatic_judge_the_stage_says_so(tmp_path):
    p = Params.model_validate({})
    out = stage.run(p, stage.Inputs(RUNS, POOL, QRELS, DOCS, QUERIES, SPLIT))
    assert out.report == {"configured": False,
                          "note": "no automatic judge configured (judgments.automatic)"}
    assert out.automatic.empty and list(out.automatic.columns)[-1] == "role"
    assert out.per_query.empty


def test_one_scored_system_leaves_the_ranking_undefined_with_the_reason(cached):
    """Empty runs are not scored: with one system left there is no ranking to compare (said,
    not an error) and no compared pair for the gate's PPI difference."""
    empty = RUNS["dense"].iloc[:0]
    out = stage.run(params(cached), stage.Inputs(RUNS | {"dense": empty, "hybrid": empty}, POOL,
                                                 QRELS,
                    DOCS, QUERIES, SPLIT))
    r = out.report
    ranking = r["ranking"]["measures"]["AP"]
    assert ranking["systems"] == 1 and "tau" not in ranking
    assert ranking["undefined"].startswith("1 system(s) with a defined value")
    assert r["difference"] == {}
    assert set(r["ppi"]["measures"]["AP"]) == {"bm25"}
    AgreementAuto.check(r)
