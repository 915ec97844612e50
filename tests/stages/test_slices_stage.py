"""Stage ``slices``: run() on a small frame set, and main() on parquet files."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from releval.errors import InputError
from releval.params import Params
from stages import slices as stage
from stages.common import main

IDS = [f"q{i:02d}" for i in range(30)]
BIG, SMALL = IDS[:25], IDS[25:]


@pytest.fixture
def per_query():
    """bm25 random; hybrid = bm25 + 0.3 on BIG, − 0.1 on SMALL; dense has no SMALL rows."""
    base = np.random.default_rng(1).random(30) * 0.5
    lift = np.where(np.isin(IDS, BIG), 0.3, -0.1)
    frames = [pd.DataFrame({"system": "bm25", "query_id": IDS, "measure": "nDCG@10",
                            "value": base}),
              pd.DataFrame({"system": "hybrid", "query_id": IDS, "measure": "nDCG@10",
                            "value": base + lift}),
              pd.DataFrame({"system": "dense", "query_id": BIG, "measure": "nDCG@10",
                            "value": 0.2})]
    return pd.concat(frames, ignore_index=True)


@pytest.fixture
def slice_labels():
    return pd.DataFrame({
        "query_id": [*IDS, "q99"],
        "dimension": "kind",
        "slice": ["big"] * 25 + ["small"] * 5 + ["unevaluated"],
    })


@pytest.fixture
def queries():
    return pd.DataFrame({"query_id": IDS, "user_id": [f"u{i % 10}" for i in range(30)]})


def params(**compare):
    return Params.model_validate({
        "slices": {"min_n": 20},
        "compare": {"measures": ["nDCG@10"], "resamples": 200, **compare}})


def test_run_tests_big_slices_and_reports_changes_after_holm(per_query, slice_labels):
    result = stage.run(params(), stage.Inputs(per_query, slice_labels, None))
    table, report = result.table, result.summary
    assert list(table["slice"]) == ["all", "big", "small", "unevaluated"]
    assert {"mean_bm25", "mean_dense", "mean_hybrid"} <= set(table.columns)
    assert list(table["too_small"]) == [False, False, True, True]
    unevaluated = table.iloc[3]
    assert (unevaluated["n"], unevaluated["n_queries"]) == (0, 1)
    assert table.iloc[1]["mean_dense"] == pytest.approx(0.2)
    assert report["baseline"] == "bm25" and report["candidate"] == "hybrid"
    assert (report["family"], report["tested"], report["too_small"]) == (2, 2, 2)
    assert report["slices"] == 4
    assert [(c["slice"], c["verdict"]) for c in report["changed"]] == [
        ("all", "improved"), ("big", "improved")]
    assert report["changed"][1]["mean_diff"] == pytest.approx(0.3)
    json.dumps(report)


def test_run_clusters_by_user_when_asked(per_query, slice_labels, queries):
    result = stage.run(params(cluster="user_id"), stage.Inputs(per_query, slice_labels, queries))
    table, report = result.table, result.summary
    assert report["unit"] == "cluster"
    assert set(table.loc[~table["too_small"], "unit"]) == {"cluster"}


def test_run_rejects_a_missing_candidate(per_query, slice_labels):
    with pytest.raises(InputError, match="hybrid"):
        stage.run(params(), stage.Inputs(per_query[per_query["system"] != "hybrid"], slice_labels,
                                         None))


def write_inputs(tmp_path, per_query, slice_labels, **compare):
    (tmp_path / "data/evaluate").mkdir(parents=True)
    per_query.to_parquet(tmp_path / "data/evaluate/per_query.parquet", index=False)
    slice_labels.to_parquet(tmp_path / "data/evaluate/labels.parquet", index=False)
    config = {"slices": {"min_n": 20},
              "compare": {"measures": ["nDCG@10"], "resamples": 200, **compare}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(config))


def test_main_writes_the_table_and_summary(tmp_path, per_query, slice_labels, queries,
                                           monkeypatch, capsys):
    write_inputs(tmp_path, per_query, slice_labels, cluster="user_id")
    (tmp_path / "data/raw").mkdir()
    queries.to_parquet(tmp_path / "data/raw/queries.parquet", index=False)
    monkeypatch.chdir(tmp_path)
    main("slices", [])
    table = pd.read_parquet(tmp_path / "data/slices/slices.parquet")
    summary = json.loads((tmp_path / "data/slices/slices.json").read_text())
    assert list(table["slice"]) == ["all", "big", "small", "unevaluated"]
    assert table["unit"].iloc[0] == "cluster"
    assert summary["family"] == 2
    assert capsys.readouterr().out.startswith("slices: bm25 vs hybrid: 2 tested")


def test_main_bad_input_exits_2_with_one_line(tmp_path, per_query, slice_labels):
    write_inputs(tmp_path, per_query, slice_labels, cluster="user_id")  # no queries
    done = subprocess.run([sys.executable, "-m", "stages", "slices", "--params", "params.yaml"],
                          capture_output=True, text=True, cwd=tmp_path,
                          env=os.environ | {"PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 2
    assert "queries.parquet: file not found" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data/slices").exists()
