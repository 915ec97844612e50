"""releval compare: the composition example, the refusal, and a paired comparison."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from releval.cli import app

runner = CliRunner()


def table(path, ids, values, measure="nDCG@10"):
    pd.DataFrame({"query_id": ids, "measure": measure, "value": values}).to_csv(path,
                                                                                index=False)
    return path


@pytest.fixture()
def two_samples(tmp_path):
    """Groups A (0.8) and B (0.2): 20/80 queries last week, 80/20 this week."""
    before_ids = [f"w1-a{i}" for i in range(20)] + [f"w1-b{i}" for i in range(80)]
    after_ids = [f"w2-a{i}" for i in range(80)] + [f"w2-b{i}" for i in range(20)]
    before = table(tmp_path / "before.csv", before_ids, [0.8] * 20 + [0.2] * 80)
    after = table(tmp_path / "after.csv", after_ids, [0.8] * 80 + [0.2] * 20)
    slices = tmp_path / "slices.csv"
    pd.DataFrame({"query_id": before_ids + after_ids,
                  "slice": [i.split("-")[1][0].upper() for i in before_ids + after_ids]}
                 ).to_csv(slices, index=False)
    return before, after, slices


def test_composition_example_comes_out_exactly_and_is_flagged(two_samples):
    before, after, slices = two_samples
    result = runner.invoke(app, ["compare", str(before), str(after), "--slices", str(slices),
                                 "--allow-uncontrolled", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["controlled"] is False
    row = doc["uncontrolled"][0]
    assert row["before"] == pytest.approx(0.32, abs=1e-12)
    assert row["after"] == pytest.approx(0.68, abs=1e-12)
    assert row["rate"] == pytest.approx(0.0, abs=1e-12)
    assert row["mix"] == pytest.approx(0.36, abs=1e-12)
    assert row["equal_slice_before"] == pytest.approx(0.5) == row["equal_slice_after"]
    assert row["mix_shift"] is True
    shown = runner.invoke(app, ["compare", str(before), str(after), "--slices", str(slices),
                                "--allow-uncontrolled"])
    assert "UNCONTROLLED" in shown.stdout and "FLAGGED (composition)" in shown.stdout


def test_an_uncontrolled_comparison_is_refused_with_its_differences(two_samples):
    before, after, _ = two_samples
    result = runner.invoke(app, ["compare", str(before), str(after)])
    assert result.exit_code == 2
    assert "not a controlled comparison" in result.stderr
    assert "100 queries only in the baseline" in result.stderr


def test_paired_comparison_gives_ci_p_value_and_verdict(tmp_path):
    rng = np.random.default_rng(1)
    ids = [f"q{i}" for i in range(300)]
    base = rng.uniform(0.2, 0.6, 300)
    a = table(tmp_path / "a.csv", ids, base)
    b = table(tmp_path / "b.csv", ids, np.clip(base + 0.1 + rng.normal(0, 0.05, 300), 0, 1))
    doc = json.loads(runner.invoke(app, ["compare", str(a), str(b), "--format", "json",
                                         "--resamples", "2000", "--min-effect", "0.02"]).stdout)
    row = doc["paired"][0]
    assert doc["controlled"] and row["n"] == 300 and row["verdict"] == "improved"
    assert 0.02 < row["ci_low"] < row["mean_diff"] < row["ci_high"] and row["p_value"] < 0.01
