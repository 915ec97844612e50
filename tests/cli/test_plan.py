"""``releval plan``: the needed queries per measure and slice from the project's per-query
values, equal to the analytic plan of the paired differences; a missing pilot refused in one
line."""

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from releval import artifacts
from releval.cli import app
from releval.decision import power

ROOT = Path(__file__).resolve().parents[2]


def _project(tmp_path: Path, monkeypatch) -> np.ndarray:
    """A project folder with the demo's params (hybrid against bm25), no clusters, and
    evaluate's per_query and labels; returns nDCG@10's differences hybrid − bm25."""
    params = (ROOT / "examples" / "demo.yaml").read_text()
    params = params.replace("  cluster: user_id", "  cluster: null")
    (tmp_path / "params.yaml").write_text(params)
    rng = np.random.default_rng(4)
    ids = [f"q{i:03d}" for i in range(80)]
    a = rng.uniform(0, 1, len(ids))
    b = np.clip(a + rng.normal(0.03, 0.15, len(ids)), 0, 1)
    rows = [pd.DataFrame({"system": s, "query_id": ids, "measure": m, "value": v})
            for s, v in (("bm25", a), ("hybrid", b)) for m in ("nDCG@10", "R@100", "RR@10")]
    folder = tmp_path / artifacts.folder("evaluate")
    folder.mkdir(parents=True)
    pd.concat(rows).to_parquet(tmp_path / artifacts.path("evaluate.per_query"))
    pd.DataFrame({"query_id": ids, "dimension": "tag",
                  "slice": ["head" if i % 3 else "tail" for i in range(80)]}).to_parquet(
        tmp_path / artifacts.path("evaluate.labels"))
    monkeypatch.chdir(tmp_path)
    return b - a


def test_plan_prints_the_analytic_plan_of_the_differences(tmp_path, monkeypatch):
    d = _project(tmp_path, monkeypatch)
    result = CliRunner().invoke(app, ["plan", "--json", "--min-effect", "0.02"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    rows = {(r["dimension"], r["slice"], r["measure"]): r for r in doc["plans"]}
    overall = rows["all", "all", "nDCG@10"]
    assert overall["n"] == 80 and doc["power"] == 0.8
    assert overall["needed_queries"] == int(power.needed(0.02, np.std(d, ddof=1), 0.05, 0.8)[0])
    assert overall["needed_queries_low"] <= overall["needed_queries"] <= \
        overall["needed_queries_high"]
    assert overall["needed_queries_simulated"] is not None
    assert rows["tag", "tail", "nDCG@10"]["n"] == 27
    assert rows["tag", "tail", "nDCG@10"]["needed_queries_simulated"] is None
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: the full line, no cell cut
    table = CliRunner().invoke(app, ["plan", "--power", "0.9"])
    assert table.exit_code == 0 and "power 0.9" in table.stdout and "tag=tail" in table.stdout


def test_plan_without_a_pilot_names_the_missing_file(tmp_path, monkeypatch):
    _project(tmp_path, monkeypatch)
    shutil.rmtree(tmp_path / artifacts.folder("evaluate"))
    result = CliRunner().invoke(app, ["plan"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "per_query" in lines[0] and "releval run" in lines[0]


def test_plan_reads_a_past_runs_per_query_values_from_the_dvc_cache(tmp_path, monkeypatch):
    """``--pilot``: the per-query values a receipt or revision recorded, read from the DVC
    cache by the paths dvc.lock writes."""
    from releval.project import revision

    d = _project(tmp_path, monkeypatch)
    outputs, cache = {}, tmp_path / "cache"
    for name in ("evaluate.per_query", "evaluate.labels"):
        data = (tmp_path / artifacts.path(name)).read_bytes()
        md5 = hashlib.md5(data).hexdigest()
        (cache / "files" / "md5" / md5[:2]).mkdir(parents=True, exist_ok=True)
        (cache / "files" / "md5" / md5[:2] / md5[2:]).write_bytes(data)
        outputs[artifacts.at(name)] = md5
    shutil.rmtree(tmp_path / artifacts.folder("evaluate"))  # only the cache holds them now
    past = revision.Revision("v1", "0" * 40, {}, {}, outputs, cache)
    monkeypatch.setattr(revision, "revision", lambda root, ref: past)
    result = CliRunner().invoke(app, ["plan", "--json", "--pilot", "v1", "--min-effect", "0.02"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    overall = next(r for r in doc["plans"] if r["slice"] == "all" and r["measure"] == "nDCG@10")
    assert doc["pilot"].startswith("v1 (commit 000000000000)")
    assert overall["needed_queries"] == int(power.needed(0.02, np.std(d, ddof=1), 0.05, 0.8)[0])


def test_a_zero_effect_is_refused_in_one_line_before_any_work(tmp_path, monkeypatch):
    """No finite number of queries detects a zero effect: refused at once, exit 2."""
    _project(tmp_path, monkeypatch)
    result = CliRunner().invoke(app, ["plan", "--min-effect", "0"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "--min-effect" in result.stderr
    assert "no finite number of queries" in result.stderr and "Traceback" not in result.output


def test_a_plan_that_cannot_be_made_says_why_under_the_table(tmp_path, monkeypatch):
    """Two queries, one in each slice: the whole set has a plan, a slice of one query none;
    its dashes are explained under the table, one line per reason."""
    _project(tmp_path, monkeypatch)
    path = tmp_path / artifacts.path("evaluate.per_query")
    per_query = pd.read_parquet(path)
    per_query[per_query["query_id"].isin(["q000", "q001"])].to_parquet(path)
    labels_path = tmp_path / artifacts.path("evaluate.labels")
    labels = pd.read_parquet(labels_path)
    labels[labels["query_id"].isin(["q000", "q001"])].to_parquet(labels_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    result = CliRunner().invoke(app, ["plan", "--min-effect", "0.02"])
    assert result.exit_code == 0, result.output
    assert ("— in tag=head, tag=tail: 1 query with a value in both systems: σ of the "
            "differences needs at least 2; evaluate more queries") in result.stdout
