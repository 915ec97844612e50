"""The gate on files and several systems on files, through the real command: ``releval gate
--comparison FILE --rules FILE``, ``releval compare … --gate FILE``, ``releval compare A B C``
(a leaderboard and the family) and ``--test``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from releval.cli import app

runner = CliRunner()


def _write_run(path, rng: np.random.Generator, shift: float, queries: int = 30) -> None:
    lines = []
    for q in range(queries):
        order = np.argsort(-(rng.random(20) + shift * (np.arange(20) % 4 == 0)))
        lines += [f"q{q} Q0 d{d} {r + 1} {20 - r} x\n" for r, d in enumerate(order)]
    path.write_text("".join(lines))


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: whole lines
    (tmp_path / "qrels.txt").write_text("".join(
        f"q{q} 0 d{d} {int(d % 4 == 0)}\n" for q in range(30) for d in range(20)))
    rng = np.random.default_rng(0)
    for name, shift in (("base", 0.0), ("better", 0.8), ("same", 0.0)):
        _write_run(tmp_path / f"{name}.run", rng, shift)
    return tmp_path


def _rules(path, body: str):
    path.write_text(body)
    return str(path)


def test_a_passing_and_a_failing_gate_on_a_compare_json(files):
    compared = runner.invoke(app, ["compare", str(files / "base.run"), str(files / "better.run"),
                                   "--qrels", str(files / "qrels.txt"), "--resamples", "300",
                                   "--format", "json"])
    assert compared.exit_code == 0, compared.output
    (files / "cmp.json").write_text(compared.stdout)
    passing = _rules(files / "pass.yaml", "- {rule: no_regression, measure: nDCG@10, "
                     "max_drop: 0.05}\n- {rule: latency, percentile: p95, max_ms: 10}\n")
    done = runner.invoke(app, ["gate", "--comparison", str(files / "cmp.json"), "--rules",
                               passing, "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert doc["passed"] and doc["not_applicable"] == ["latency"]
    latency = next(r for r in doc["rules"] if r["rule"] == "latency")
    assert "needs a pipeline run" in latency["reason"] and latency["applicable"] is False
    reverse = runner.invoke(app, ["compare", str(files / "better.run"), str(files / "base.run"),
                                  "--qrels", str(files / "qrels.txt"), "--resamples", "300",
                                  "--gate", passing])
    assert reverse.exit_code == 1 and "FAIL" in reverse.stdout


def test_a_bad_rules_file_or_comparison_is_one_line_naming_it(files):
    bad = _rules(files / "bad.yaml", "rules:\n  - {rule: no_regression, measure: nDCG@10, "
                 "max_drop: x}\n")
    (files / "cmp.json").write_text(json.dumps({"paired": "no"}))
    for args, words in ((["--rules", bad], "bad.yaml:gate.rules.0"),
                        (["--rules", _rules(files / "ok.yaml", "- {rule: no_regression, "
                                            "measure: nDCG@10}\n")], "not a comparison")):
        done = runner.invoke(app, ["gate", "--comparison", str(files / "cmp.json"), *args])
        assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.output
        assert words in done.stderr and "Traceback" not in done.output
    alone = runner.invoke(app, ["gate", "--comparison", str(files / "cmp.json")])
    assert alone.exit_code == 2 and "go together" in alone.stderr


def test_three_runs_give_a_leaderboard_groups_and_the_named_test(files):
    args = ["compare", *(str(files / f"{n}.run") for n in ("base", "better", "same")),
            "--qrels", str(files / "qrels.txt"), "-m", "nDCG@10", "--resamples", "300"]
    doc = json.loads(runner.invoke(app, [*args, "--family", "all_pairs", "--test", "t",
                                         "--format", "json"]).stdout)
    family = doc["families"][0]
    assert family["test"] == "t" and len(family["pairs"]) == 3
    board = {r["system"]: r["group"] for r in family["leaderboard"]}
    assert board["better"] == "a" and board["base"] == board["same"] == "b"
    table = runner.invoke(app, [*args, "--test", "wilcoxon"])
    assert table.exit_code == 0 and "Wilcoxon signed-rank test" in table.stdout
    assert "groups (a shared letter" in table.stdout


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign", "randomization", "bootstrap"])
def test_compare_on_per_query_tables_prints_the_named_tests_p(files, test):
    from scipy import stats as sp

    rng = np.random.default_rng(1)
    base = rng.uniform(0, 1, 60)
    cand = np.clip(base + rng.normal(0.05, 0.1, 60), 0, 1)
    for name, values in (("a.csv", base), ("b.csv", cand)):
        (files / name).write_text("query_id,measure,value\n" + "".join(
            f"q{i},AP,{v}\n" for i, v in enumerate(values)))
    done = runner.invoke(app, ["compare", str(files / "a.csv"), str(files / "b.csv"),
                               "--test", test, "--resamples", "500", "--format", "json"])
    row = json.loads(done.stdout)["paired"][0]
    assert row["test"] == test
    expected = {"t": lambda: sp.ttest_rel(cand, base).pvalue,
                "wilcoxon": lambda: sp.wilcoxon(cand - base, method="approx",
                                                correction=True).pvalue,
                "sign": lambda: sp.binomtest(int((cand > base).sum()),
                                             int((cand != base).sum())).pvalue}
    if test in expected:
        assert row["p_value"] == pytest.approx(expected[test](), abs=1e-9)
    else:
        assert 0 < row["p_value"] <= 1
