"""Automatic judges: a labels file read or refused in one line, the dense-similarity judge's
thresholds, its cross-fitted labels and their roles, the encoder's cosine through its cache."""

import hashlib
import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from releval.errors import InputError
from releval.judging.agreement_auto import agreement, kappa
from releval.judging.automatic import (
    LABEL_COLUMNS,
    fit_thresholds,
    grades_of,
    pair_similarity,
    read_labels,
    similarity_judge,
    split_human,
    unmatched,
    unmatched_note,
)
from releval.retrieval.dense import DenseRetriever
from releval.retrieval.embeddings import Encoder

TRUE = np.array([0.3, 0.55, 0.8])


def test_a_trec_qrels_file_and_a_table_read_as_labels(tmp_path):
    trec = tmp_path / "umbrela.qrels"
    trec.write_text("q1 0 d1 2\nq1 0 d2 0\nq2 Q0 d1 3\n")
    labels = read_labels(trec, judge="umbrela", model="llama-3.1-8b", max_grade=3)
    assert list(labels.columns) == list(LABEL_COLUMNS)
    assert labels[["query_id", "doc_id", "grade"]].values.tolist() == [
        ["q1", "d1", 2], ["q1", "d2", 0], ["q2", "d1", 3]]
    assert set(labels["judge"]) == {"umbrela"} and labels["confidence"].isna().all()
    table = tmp_path / "labels.csv"
    table.write_text("query_id,doc_id,grade,judge,model,confidence\n"
                     "q1,d1,2,ce,minilm,0.9\nq1,d1,2,ce,minilm,0.9\nq1,d1,1,llm,gpt,\n")
    labels = read_labels(table, max_grade=3)
    assert labels[["judge", "grade", "confidence"]].values.tolist() == [
        ["ce", 2, 0.9], ["llm", 1, pytest.approx(np.nan, nan_ok=True)]]  # the repeat dropped
    parquet = tmp_path / "labels.parquet"
    pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "grade": [1], "model": ["m"]}).to_parquet(
        parquet)
    assert read_labels(parquet, judge="ce", max_grade=1)["judge"].tolist() == ["ce"]


@pytest.mark.parametrize(("name", "text", "given", "message"), [
    ("a.qrels", "q1 0 d1 2\nq1 0 d2 4\n", {"judge": "j", "model": "m"},
     "a.qrels:line 2: grade must be an integer in 0..3, got 4"),
    ("a.qrels", "q1 0 d1 2\n", {"model": "m"},
     "a.qrels: no judge named: the file has no judge column and none was given"),
    ("a.csv", "query_id,doc_id,grade,judge,model\nq1,d1,-1,j,m\n", {},
     "a.csv:line 2: grade must be an integer in 0..3, got -1"),
    ("a.csv", "query_id,doc_id,grade,judge,model\nq1,,1,j,m\n", {},
     "a.csv:line 2: doc_id is missing"),
    ("a.csv", "query_id,doc_id,grade,judge,model\nq1,d1,1,j,m\nq2,d1,1,j,m\nq1,d1,2,j,m\n", {},
     "a.csv:line 4: pair ('q1', 'd1') graded 2 here and 1 at line 2 by the same judge and model"),
    ("a.csv", "query_id,doc_id,grade,judge,model\nq1,d1,1,j,\n", {},
     "a.csv:line 2: model is missing"),
    ("a.csv", "query_id,doc_id,grade,judge,model\nq1,d1,1,j,m\n", {"judge": "k"},
     "a.csv:line 2: judge 'j' differs from the judge given, 'k'"),
    ("a.csv", "query_id,doc_id,grade,judge,model,confidence\nq1,d1,1,j,m,high\n", {},
     "a.csv:line 2: confidence must be a number, got 'high'"),
    ("a.csv", "query_id,grade\nq1,1\n", {}, "missing column(s) doc_id"),
])
def test_bad_labels_are_refused_in_one_line(tmp_path, name, text, given, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_labels(path, max_grade=3, **given)
    assert message in str(error.value) and "\n" not in str(error.value)


def generated(n: int = 3000, noise: float = 0.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0, 1, size=n)
    return s, grades_of(s + rng.normal(0, noise, size=n), TRUE)


def test_the_fit_recovers_known_thresholds():
    s, g = generated()
    fitted = fit_thresholds(s, g, 3)
    assert np.all(np.abs(fitted - TRUE) < 0.005)
    assert (grades_of(s, fitted) == g).all()  # κ = 1 on the sample
    noisy_s, noisy_g = generated(noise=0.05, seed=1)
    assert np.all(np.abs(fit_thresholds(noisy_s, noisy_g, 3) - TRUE) < 0.03)
    # a grade nobody gave: its threshold sits above every similarity
    assert fit_thresholds(s, np.minimum(g, 2), 3)[2] > s.max()
    with pytest.raises(InputError, match="one grade only"):
        fit_thresholds(s, np.zeros_like(g), 3)


@pytest.mark.parametrize("seed", range(5))
def test_the_fit_finds_the_best_thresholds_of_an_exhaustive_search(seed):
    rng = np.random.default_rng(seed)
    s = rng.uniform(size=40)
    g = np.clip((3 * s + rng.normal(0, 0.8, size=40)).astype(int), 0, 2)
    candidates = np.concatenate([np.sort(s), [2.0]])  # every distinct split of the sample
    pairs = np.array(list(itertools.combinations_with_replacement(candidates, 2)))
    predicted = (s[None, :, None] >= pairs[:, None, :]).sum(-1)  # (pairs, samples)
    tables = np.zeros((len(pairs), 3, 3))
    np.add.at(tables, (np.arange(len(pairs))[:, None], g[None, :], predicted), 1)
    best = np.nanmax(kappa(tables, "quadratic"))  # kappa: equal to scikit-learn's (its test)
    fitted = cohen_kappa_score(g, grades_of(s, fit_thresholds(s, g, 2)), weights="quadratic",
                               labels=[0, 1, 2])
    assert fitted == pytest.approx(best, abs=1e-12)


def pool(queries: int = 40, per_query: int = 30, seed: int = 0):
    s, g = generated(queries * per_query, noise=0.05, seed=seed)
    pairs = pd.DataFrame({"query_id": [f"q{i // per_query}" for i in range(len(s))],
                          "doc_id": [f"d{i % per_query}" for i in range(len(s))]})
    return pairs, s, pairs.assign(grade=g)


def test_pairs_get_roles_and_validation_labels_are_cross_fitted():
    pairs, s, human = pool()
    judged = human[human["query_id"].str[1:].astype(int) < 30]  # q30..q39: holes
    validation, heldout = split_human(judged, share=0.5, seed=2)
    assert validation["query_id"].nunique() == heldout["query_id"].nunique() == 15
    out = similarity_judge(pairs, s, validation, max_grade=3, model="minilm", folds=3, seed=5,
                           heldout=heldout)
    assert out["role"].value_counts().to_dict() == {"validation": 450, "heldout": 450,
                                                     "hole": 300}
    assert set(out["judge"]) == {"dense-similarity"} and set(out["model"]) == {"minilm"}
    assert out["human_grade"].isna().tolist() == (out["role"] == "hole").tolist()
    assert ((out["fold"] >= 0) == (out["role"] == "validation")).all()
    thresholds = np.array(out.attrs["thresholds"])
    rest = out[out["role"] != "validation"]
    assert (rest["grade"] == grades_of(rest["similarity"], thresholds)).all()
    for k in range(3):  # fold k's grades come from the other folds' fit
        mine = out[out["fold"] == k]
        others = out[(out["fold"] >= 0) & (out["fold"] != k)]
        fitted = fit_thresholds(others["similarity"], others["human_grade"].astype(int), 3)
        assert (mine["grade"] == grades_of(mine["similarity"], fitted)).all()
        assert np.allclose(mine["confidence"], np.abs(
            mine["similarity"].to_numpy()[:, None] - fitted).min(axis=1))
    # changing fold 0's human grades leaves fold 0's automatic grades as they were
    fold0 = validation.set_index(["query_id", "doc_id"]).index.isin(
        out[out["fold"] == 0].set_index(["query_id", "doc_id"]).index)
    flipped = validation.assign(grade=np.where(fold0, 3 - validation["grade"],
                                               validation["grade"]))
    again = similarity_judge(pairs, s, flipped, max_grade=3, model="minilm", folds=3, seed=5,
                             heldout=heldout)
    assert again.loc[out["fold"] == 0, "grade"].equals(out.loc[out["fold"] == 0, "grade"])
    assert not again.loc[out["fold"] == 1, "grade"].equals(out.loc[out["fold"] == 1, "grade"])


def test_a_judge_whose_similarity_orders_the_grades_agrees_fully():
    pairs, _, human = pool(seed=3)
    copy = human["grade"] + np.random.default_rng(0).uniform(0, 0.5, size=len(human))
    out = similarity_judge(pairs, copy, human, max_grade=3, model="copy")
    assert (out["grade"] == human["grade"]).all()
    report = agreement(human, out, max_grade=3, resamples=100)
    assert report["kappa"]["quadratic"]["value"] == report["alpha"]["ordinal"]["value"] == 1.0


def test_the_judge_refuses_what_it_cannot_label():
    pairs, s, human = pool(queries=4)
    with pytest.raises(InputError, match="not among the pairs to label"):
        similarity_judge(pairs.iloc[1:], s[1:], human, max_grade=3, model="m")
    with pytest.raises(InputError, match="exceeds the validation queries"):
        similarity_judge(pairs, s, human, max_grade=3, model="m", folds=5)
    with pytest.raises(InputError, match="both in the validation sample and held out"):
        similarity_judge(pairs, s, human, max_grade=3, model="m", heldout=human.iloc[:2])
    with pytest.raises(InputError, match="finite numbers"):
        similarity_judge(pairs, np.where(np.arange(len(s)) == 3, np.nan, s), human,
                         max_grade=3, model="m")


def fake_vectors(self, texts):
    """Deterministic, text-keyed vectors standing in for the model (no model is loaded)."""
    seeds = [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) for t in texts]
    return np.stack([np.random.default_rng(x).normal(size=8) for x in seeds]).astype(np.float32)


def test_pair_similarity_is_the_cosine_through_the_embedding_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(Encoder, "__call__", fake_vectors)
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["reset password", "vpn"]})
    documents = pd.DataFrame({"doc_id": ["a", "b", "c"], "title": ["", "", "VPN"],
                              "text": ["password help", "printer", "from home"]})
    pairs = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "c", "a"]})
    retriever = DenseRetriever(cache_dir=tmp_path)
    similarity = pair_similarity(pairs, queries, documents, retriever)
    q = fake_vectors(None, ["reset password", "reset password", "vpn", "vpn"])
    d = fake_vectors(None, [" password help", " printer", "VPN from home", " password help"])
    expected = (q * d).sum(1) / np.linalg.norm(q, axis=1) / np.linalg.norm(d, axis=1)
    assert similarity == pytest.approx(expected, abs=1e-6)
    assert (retriever.document_cache.encoded, retriever.query_cache.encoded) == (3, 2)
    warm = DenseRetriever(cache_dir=tmp_path)
    assert pair_similarity(pairs, queries, documents, warm) == pytest.approx(similarity)
    assert (warm.document_cache.encoded, warm.document_cache.hits) == (0, 3)
    with pytest.raises(InputError, match="1 judged document ids are not in the document table"):
        pair_similarity(pairs.assign(doc_id=["a", "b", "c", "z"]), queries, documents, retriever)


def test_labels_naming_unknown_queries_or_documents_are_counted_not_dropped_silently(tmp_path):
    path = tmp_path / "labels.qrels"
    path.write_text("q1 0 d1 2\nq1 0 zz 1\nx9 0 d2 0\nx9 0 zz 1\nq2 0 d2 1\n")
    labels = read_labels(path, judge="j", model="m", max_grade=3)
    queries = pd.DataFrame({"query_id": ["q1", "q2"]})
    documents = pd.DataFrame({"doc_id": ["d1", "d2"]})
    counts = unmatched(labels, queries, documents)
    assert counts == {"labels": 5, "unknown_queries": 2, "unknown_documents": 2,
                      "first_unknown_query": "x9/d2", "first_unknown_document": "q1/zz"}
    assert unmatched_note(counts) == ("of 5 labels, 2 name a query not in the data (first: "
                                      "x9/d2) and 2 a document not in the data (first: "
                                      "q1/zz): not read")
    clean = unmatched(labels[labels["query_id"] != "x9"].iloc[[0, 2]], queries, documents)
    assert clean["unknown_queries"] == clean["unknown_documents"] == 0
    assert unmatched_note(clean) == ""
    runs_only = unmatched(labels, queries, documents.iloc[:0])  # no documents: not counted
    assert runs_only["unknown_documents"] is None
    assert unmatched_note(runs_only).startswith("of 5 labels, 2 name a query not in the data")
