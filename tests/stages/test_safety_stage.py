"""The safety stage on a small demo set: every split's leaks, fused routes, no-answer rates."""

import json

import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.decision.no_answer import refusals
from releval.demo.generator import generate
from releval.errors import InputError
from releval.params import Params, parse_params
from releval.retrieval.routes import make_retriever
from stages import safety
from stages.common import main

CONFIG = {"candidates": {"depth": 30, "systems": {"bm25": {"route": "bm25"},
                                                  "dense": {"route": "dense"}}},
          "evaluate": {"splits": ["test"]}}


@pytest.fixture(scope="module")
def setup():
    """Demo data, a clean bm25 window, a 'dense' window (bm25's, relabelled) with one
    must_not_return pair leaked at rank 12, a clean hybrid, and a split that puts the leaked
    query in train."""
    data = generate(n_docs=300, n_queries=60, seed=4)
    p = Params.model_validate(CONFIG)
    retriever = make_retriever("bm25")
    retriever.index(data.documents)
    found = retriever.search(data.queries, 30, Visibility(data.documents))
    bm25 = found.run.assign(**{S.SYSTEM: "bm25", S.ROUTE: "bm25"})[list(S.RUN_COLUMNS)]
    sizes = bm25.groupby(S.QUERY_ID).size()
    banned = data.must_not_return
    long = banned[banned[S.QUERY_ID].map(sizes).fillna(0) >= 12]  # a window reaching rank 12
    query_id, doc_id = long.iloc[0][[S.QUERY_ID, S.DOC_ID]]
    dense = bm25.assign(**{S.SYSTEM: "dense", S.ROUTE: "dense"})
    at = (dense[S.QUERY_ID] == query_id) & (dense[S.RANK] == 12)
    dense.loc[at, S.DOC_ID] = doc_id
    hybrid = bm25.assign(**{S.SYSTEM: "hybrid", S.ROUTE: "hybrid"})
    order = data.queries.sort_values(S.ISSUED_AT)[S.QUERY_ID].to_numpy()
    names = ["train"] * 30 + ["validation"] * 10 + ["test"] * (len(order) - 40)
    split = pd.DataFrame({S.QUERY_ID: order, S.SPLIT: names})
    split.loc[split[S.QUERY_ID] == query_id, S.SPLIT] = "train"
    runs = {"bm25": bm25, "dense": dense, "hybrid": hybrid}
    return p, data, runs, split, (query_id, doc_id)


def test_run_counts_leaks_in_every_split_and_for_the_fused_system(setup):
    p, data, runs, split, (query_id, doc_id) = setup
    result = safety.run(p, safety.Inputs(runs, data.queries, data.documents, data.must_not_return,
                                         split))
    found, report = result.violations, result.report
    assert list(found.columns) == [S.SYSTEM, S.ROUTE, S.QUERY_ID, S.DOC_ID, S.RANK, S.REASON,
                                   "in_top_k", S.SPLIT]
    assert found[[S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.RANK, S.REASON, "in_top_k", S.SPLIT]
                 ].values.tolist() == [
        ["dense", query_id, doc_id, 12, "must_not_return", False, "train"],
        ["dense", query_id, doc_id, 12, "acl", False, "train"]]
    assert set(report) == {"top_k", "systems", "no_answer", "skipped"}
    assert report["top_k"] == 10 and report["skipped"] == []
    systems = report["systems"]
    assert systems["hybrid"]["routes"] == ["hybrid", "bm25", "dense"]
    assert systems["bm25"]["routes"] == ["bm25"]
    assert (systems["hybrid"]["violations"], systems["hybrid"]["own"]) == (2, 0)
    assert systems["hybrid"]["below_top_k"] == 2 and systems["hybrid"]["queries_affected"] == 1
    assert systems["dense"]["by_reason"]["must_not_return"] == 1
    assert systems["bm25"]["violations"] == 0
    test = split.loc[split[S.SPLIT] == "test", S.QUERY_ID]
    assert report["no_answer"] == refusals(runs, data.queries, test)
    assert report["no_answer"]["bm25"]["no_answer_queries"] > 0
    json.dumps(report, allow_nan=False)


def test_thresholds_and_tag_come_from_params_and_empty_runs_are_skipped(setup):
    p, data, runs, split, _ = setup
    strict = Params.model_validate(CONFIG | {"no_answer": {"thresholds": {"dense": 1e9}}})
    runs = runs | {"hybrid": runs["hybrid"].iloc[:0]}
    report = safety.run(strict, safety.Inputs(runs, data.queries, data.documents,
                                              data.must_not_return,
                        split)).report
    dense = report["no_answer"]["dense"]
    assert dense["threshold"] == 1e9 and dense["correct_refusal_rate"] == 1.0
    assert dense["no_result"] == dense["answerable_queries"]
    assert report["skipped"] == ["hybrid"] and "hybrid" not in report["no_answer"]
    assert report["systems"]["hybrid"]["violations"] == 2  # its routes still count
    with pytest.raises(InputError, match="no_answer.thresholds.dnse: 'dnse' is not a system"):
        parse_params(CONFIG | {"no_answer": {"thresholds": {"dnse": 0.5}}})


def test_top_k_comes_from_params(setup):
    p, data, runs, split, _ = setup
    wide = Params.model_validate(CONFIG | {"safety": {"top_k": 12}})
    result = safety.run(wide, safety.Inputs(runs, data.queries, data.documents,
                                            data.must_not_return, split))
    assert result.report["top_k"] == 12
    assert result.violations["in_top_k"].tolist() == [True, True]  # the leak sits at rank 12
    assert result.report["systems"]["hybrid"]["below_top_k"] == 0


def test_main_reads_the_stage_folders_and_writes_both_outputs(setup, tmp_path, monkeypatch,
                                                             capsys):
    p, data, runs, split, _ = setup
    raw = tmp_path / "data/raw"
    raw.mkdir(parents=True)
    data.documents.to_parquet(raw / "documents.parquet")
    data.queries.to_parquet(raw / "queries.parquet")
    data.must_not_return.to_parquet(raw / "must_not_return.parquet")
    (tmp_path / "data/split").mkdir(parents=True)
    split.to_parquet(tmp_path / "data/split/split.parquet")
    for name, folder in (("bm25", "candidates"), ("dense", "candidates"), ("hybrid", "fused")):
        (tmp_path / "data" / folder / name).mkdir(parents=True)
        runs[name].to_parquet(tmp_path / "data" / folder / name / "run.parquet")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(CONFIG))
    monkeypatch.chdir(tmp_path)
    main("safety", [])
    assert capsys.readouterr().out.strip() == (
        "safety: 2 violation(s) in 3 system window(s) (dense: 2, hybrid: 2)")
    report = json.loads((tmp_path / "data/safety" / "safety.json").read_text())
    assert report["systems"]["hybrid"]["violations"] == 2
    assert len(pd.read_parquet(tmp_path / "data/safety" / "violations.parquet")) == 2

    (raw / "must_not_return.parquet").unlink()
    with pytest.raises(SystemExit) as stop:
        main("safety", [])
    assert stop.value.code == 2
    assert "must_not_return.parquet: file not found" in capsys.readouterr().err
