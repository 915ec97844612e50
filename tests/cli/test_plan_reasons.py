"""``releval plan`` on a pilot too small to plan from (a two-query project): every figure is
undefined, and each plan says why instead of a bare "—"."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from releval import artifacts
from releval.cli import app
from tests.cli.test_plan import ROOT


def _two_queries(tmp_path, monkeypatch, hybrid: list[float]) -> None:
    params = (ROOT / "examples" / "demo.yaml").read_text().replace("  cluster: user_id",
                                                                     "  cluster: null")
    (tmp_path / "params.yaml").write_text(params)
    ids = ["q1", "q2"]
    rows = [pd.DataFrame({"system": s, "query_id": ids, "measure": m, "value": v})
            for s, v in (("bm25", [0.2, 0.4]), ("hybrid", hybrid))
            for m in ("nDCG@10", "R@100", "RR@10")]
    (tmp_path / artifacts.folder("evaluate")).mkdir(parents=True)
    pd.concat(rows).to_parquet(tmp_path / artifacts.path("evaluate.per_query"))
    pd.DataFrame({"query_id": ids, "dimension": "tag", "slice": ["a", "b"]}).to_parquet(
        tmp_path / artifacts.path("evaluate.labels"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.mark.parametrize(("hybrid", "why"), [
    ([0.3, 0.5], "the 2 queries' differences are all 0.1 (σ 0): nothing varies to plan from"),
    ([0.3, None], "1 query with a value in both systems: σ of the differences needs at "
                  "least 2")])
def test_a_plan_that_cannot_be_made_says_why(tmp_path, monkeypatch, hybrid, why):
    _two_queries(tmp_path, monkeypatch, hybrid)
    result = CliRunner().invoke(app, ["plan", "--json", "--min-effect", "0.02"])
    assert result.exit_code == 0, result.output
    plans = json.loads(result.stdout)["plans"]
    overall = next(p for p in plans if p["dimension"] == "all" and p["measure"] == "nDCG@10")
    assert overall["needed_queries"] is None and overall["mde"] is None
    assert overall["undefined"].startswith(why)
    assert all(p["undefined"] for p in plans)  # each slice's plan says why too
