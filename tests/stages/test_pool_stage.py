"""Stage pool: run() on tiny runs, incrementally, and main() on the files earlier stages write."""

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.judging.pooling import EXPORT_COLUMNS
from releval.params import Params
from stages.common import main
from stages.pool import Inputs, run

DOCS = pd.DataFrame({S.DOC_ID: [f"d{i}" for i in range(1, 7)],
                     S.TITLE: [f"Title {i}" for i in range(1, 7)],
                     S.TEXT: [f"Text {i}" for i in range(1, 7)]})
QUERIES = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3"],
                        S.TEXT: ["vpn drops", "reset password", "printer jam"]})
SPLIT = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3"], S.SPLIT: ["train", "validation", "test"]})


def ranked(**queries) -> pd.DataFrame:
    """A run from ``query_id=[doc_id, ...]`` listed best first."""
    rows = [(q, d, i) for q, docs in queries.items() for i, d in enumerate(docs, 1)]
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.RANK])


RUNS = {"bm25": ranked(q1=["d1", "d2"], q2=["d3", "d4", "d5"], q3=["d6"]),
        "dense": ranked(q1=["d3"], q2=["d4", "d1"], q3=["d6", "d2"])}
PARAMS = {"base": {"seed": 5}, "pool": {"depth": 2, "systems": ["bm25", "dense"]}}


def pairs(frame: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(frame[S.QUERY_ID], frame[S.DOC_ID], strict=True))


def test_run_pools_the_top_of_the_pooled_splits_and_exports_them_blind():
    result = run(Params.model_validate(PARAMS), Inputs(RUNS, DOCS, QUERIES, SPLIT, None))
    assert pairs(result.pool) == {("q2", "d3"), ("q2", "d4"), ("q2", "d1"), ("q3", "d6"),
                                  ("q3", "d2")}  # q1 is train: not pooled
    assert result.identity["guideline"] == "relevance-v1" and result.identity["depth"] == 2
    assert result.identity["pool_id"] == result.pool[S.POOL_ID].iloc[0]
    assert list(result.judging.columns) == list(EXPORT_COLUMNS)
    assert set(result.judging[S.BLIND_ID]) == set(result.pool[S.BLIND_ID])
    assert [t["data"]["blind_id"] for t in result.tasks] == result.judging[S.BLIND_ID].tolist()
    assert {t["data"]["guideline"] for t in result.tasks} == {"relevance-v1"}
    config = ET.fromstring(result.label_config)
    assert [c.get("value") for c in config.iter("Choice")] == ["0", "1", "2", "3"]


def test_run_adds_a_new_systems_pairs_as_a_round_and_exports_only_those():
    p = Params.model_validate(PARAMS)
    first = run(p, Inputs(RUNS, DOCS, QUERIES, SPLIT, None))
    grown = Params.model_validate({**PARAMS, "candidates": {"systems": {
        "bm25": {"route": "bm25"}, "dense": {"route": "dense"}, "late": {"route": "bm25"}}},
        "pool": {"depth": 2, "systems": ["bm25", "dense", "late"]}})
    second = run(grown, Inputs(RUNS | {"late": ranked(q2=["d5", "d3"], q3=["d1"])}, DOCS,
                               QUERIES, SPLIT, first.pool))
    assert pairs(second.pool) - pairs(first.pool) == {("q2", "d5"), ("q3", "d1")}
    assert second.identity["rounds"][-1] == {"round": 2, "systems": ["late"], "pairs": 2}
    new = second.pool[second.pool[S.ROUND] == 2]
    assert set(second.judging[S.BLIND_ID]) == set(new[S.BLIND_ID]) and len(second.tasks) == 2
    reseeded = Params.model_validate({**PARAMS, "base": {"seed": 6}})
    fresh = run(reseeded, Inputs(RUNS, DOCS, QUERIES, SPLIT, first.pool))  # another pool: afresh
    assert fresh.identity["pool_id"] != first.identity["pool_id"]
    assert set(fresh.pool[S.ROUND]) == {1} and len(fresh.judging) == len(first.pool)


def test_in_recommendation_mode_the_pool_starts_afresh_as_user_queries_change():
    rec = Params.model_validate({**PARAMS, "prepare": {"source": "interactions", "path": "x"}})
    first = run(rec, Inputs(RUNS, DOCS, QUERIES, SPLIT, None))
    fewer = QUERIES[QUERIES[S.QUERY_ID] != "q2"]  # e.g. a shorter horizon: q2 is gone
    second = run(rec, Inputs(RUNS, DOCS, fewer, SPLIT[SPLIT[S.QUERY_ID] != "q2"], first.pool))
    assert set(second.pool[S.ROUND]) == {1} and "q2" not in set(second.pool[S.QUERY_ID])


@pytest.fixture()
def project(tmp_path, monkeypatch):
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(PARAMS))
    for folder in ("data/raw", "data/split"):
        (tmp_path / folder).mkdir(parents=True)
    DOCS.to_parquet(tmp_path / "data/raw/documents.parquet", index=False)
    QUERIES.to_parquet(tmp_path / "data/raw/queries.parquet", index=False)
    SPLIT.to_parquet(tmp_path / "data/split/split.parquet", index=False)
    for name, frame in RUNS.items():
        (tmp_path / "data/candidates" / name).mkdir(parents=True)
        frame.to_parquet(tmp_path / "data/candidates" / name / "run.parquet", index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_main_writes_the_pool_and_what_judges_see(project, capsys):
    main("pool", [])
    out = project / "data/pool"
    pool = pd.read_parquet(out / "pool.parquet")
    identity = json.loads((out / "identity.json").read_text())
    assert len(pool) == 5 and identity["guideline"] == "relevance-v1"
    judging = pd.read_csv(out / "judging.csv", dtype=str, keep_default_na=False)
    assert list(judging.columns) == list(EXPORT_COLUMNS) and len(judging) == 5
    tasks = json.loads((out / "label_studio_tasks.json").read_text(encoding="utf-8"))
    assert [t["data"]["blind_id"] for t in tasks] == judging[S.BLIND_ID].tolist()
    assert ET.parse(out / "label_config.xml").getroot().tag == "View"
    assert capsys.readouterr().out.strip() == (f"pool {identity['pool_id']}: 5 pairs "
                                               '({"1": 5} per round)')
    main("pool", [])  # the same systems again: the pool persists, no round is opened
    assert pd.read_parquet(out / "pool.parquet").equals(pool)
