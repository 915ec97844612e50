"""The gate on files and several systems on files, through the real command: ``releval gate
--comparison FILE --rules FILE``, ``releval compare … --gate FILE``, ``releval compare A B C``
(a leaderboard and the family) and ``--test``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from releval.cli import app
from releval.documents.decision import Decision
from tests import documents

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


def _rules(path, body: str) -> str:
    path.write_text(body)
    return str(path)


def _compare(files, baseline: str, candidate: str, *more: str) -> str:
    """``releval compare --format json`` of two runs over the qrels, written to a file."""
    done = runner.invoke(app, ["compare", str(files / baseline), str(files / candidate),
                               "--qrels", str(files / "qrels.txt"), "--resamples", "300",
                               "--format", "json", *more])
    assert done.exit_code == 0, done.output
    path = files / f"{baseline}-{candidate}.json"
    path.write_text(done.stdout)
    return str(path)


def _gate(comparison: str, rules: str, *more: str):
    return runner.invoke(app, ["gate", "--comparison", comparison, "--rules", rules, *more])


PASSING = ("- {rule: no_regression, measure: nDCG@10, max_drop: 0.05}\n"
           "- {rule: latency, percentile: p95, max_ms: 10}\n")


def test_a_better_candidate_passes_and_a_pipeline_rule_is_na_with_its_reason(files):
    done = _gate(_compare(files, "base.run", "better.run"), _rules(files / "r.yaml", PASSING),
                 "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    Decision.model_validate(doc)
    assert doc["passed"] and doc["failed"] == [] and doc["not_applicable"] == ["latency"]
    checked = next(r for r in doc["rules"] if r["rule"] == "no_regression")
    assert checked["applicable"] and checked["value"] > 0
    latency = next(r for r in doc["rules"] if r["rule"] == "latency")
    assert latency["reason"].startswith("needs a pipeline run: it reads the runs' measured "
                                        "latency") and latency["applicable"] is False
    # compare --gate's JSON carries the decision beside the comparison, and gates alike
    gated = _compare(files, "base.run", "better.run", "--gate", str(files / "r.yaml"))
    assert json.loads(Path(gated).read_text())["gate"] == doc
    assert json.loads(_gate(gated, str(files / "r.yaml"), "--json").stdout) == doc


def test_a_rules_list_names_the_comparisons_systems_not_a_projects(files):
    rules = _rules(files / "r.yaml", "- {rule: health, system: better, max: {error_rate: 0.1}}"
                   "\n- {rule: no_regression, measure: nDCG@10, max_drop: 0.05}\n")
    done = _gate(_compare(files, "base.run", "better.run"), rules, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["not_applicable"] == ["health"]


def test_a_worse_candidate_fails_with_exit_1_on_the_table_and_through_compare_gate(files):
    rules = _rules(files / "r.yaml", PASSING)
    done = _gate(_compare(files, "better.run", "base.run"), rules)
    assert done.exit_code == 1, done.output
    assert "FAIL (1 failed: no_regression nDCG@10 @ all)" in done.stdout
    assert "needs a pipeline run" in done.stdout  # latency: n/a, listed, not failed
    reverse = runner.invoke(app, ["compare", str(files / "better.run"), str(files / "base.run"),
                                  "--qrels", str(files / "qrels.txt"), "--resamples", "300",
                                  "--gate", rules])
    assert reverse.exit_code == 1 and "FAIL" in reverse.stdout


@pytest.mark.parametrize("form", [
    "{rules}",
    "rules:\n{indented}",
    "gate:\n  rules:\n{indented2}",
])
def test_every_form_of_a_rules_file_gives_the_same_decision(files, form):
    indented = "".join(f"  {line}\n" for line in PASSING.splitlines())
    body = form.format(rules=PASSING, indented=indented,
                       indented2="".join(f"  {line}\n" for line in indented.splitlines()))
    comparison = _compare(files, "base.run", "better.run")
    listed = json.loads(_gate(comparison, _rules(files / "list.yaml", PASSING), "--json").stdout)
    done = _gate(comparison, _rules(files / "form.yaml", body), "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == listed


def test_a_params_file_serves_its_slices_and_if_applicable_guards_are_na(files):
    params = _rules(files / "params.yaml", """\
evaluate: {measures: [nDCG@10, P@10]}
slices: {dimensions: [tag]}
gate:
  rules:
    - {rule: no_regression, measure: nDCG@10, max_drop: 0.05, slices: [tag=hard]}
    - rule: guarded
      primary: nDCG@10
      guards:
        - {measure: P@10, tolerance: 0.5}
        - {measure: HardNeg@10, tolerance: 0.0, if_applicable: true}
    - {rule: safety}
""")
    comparison = _compare(files, "base.run", "better.run", "-m", "nDCG@10", "-m", "P@10")
    done = _gate(comparison, params, "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    reasons = {r["name"]: r["reason"] for r in doc["rules"]}
    assert set(doc["not_applicable"]) == {"no_regression @ tag=hard",
                                          "guarded nDCG@10 ↔ HardNeg@10", "safety"}
    assert "reads the slices stage's comparison of tag=hard" in reasons[
        "no_regression @ tag=hard"]
    assert "not in the comparison (releval compare -m HardNeg@10)" in reasons[
        "guarded nDCG@10 ↔ HardNeg@10"]
    assert "P@10 held within its tolerance" in reasons["guarded nDCG@10 ↔ P@10"]
    # a guard without if_applicable on a measure the comparison lacks fails, saying so
    lacking = _compare(files, "base.run", "better.run", "-m", "nDCG@10")
    failed = json.loads(_gate(lacking, params, "--json").stdout)
    assert failed["failed"] == ["guarded nDCG@10 ↔ P@10"]
    assert "P@10 is not applicable to better: not in the comparison" in failed["rules"][1][
        "reason"]


def _training(low: float) -> dict:
    seed = {"seed": 1, "n": 150, "mean_candidate": 0.43, "mean_diff": 0.03, "ci_low": 0.01,
            "ci_high": 0.05}
    return {"measure": "nDCG@10", "n_seeds": 3, "seeds": [seed], "n": 150,
            "mean_baseline": 0.4, "mean_candidate": 0.43, "mean_diff": 0.03, "ci_low": 0.01,
            "ci_high": 0.05, "training_sd": 0.01, "training_low": low, "training_high": 0.05,
            "seed_min": 0.02, "seed_max": 0.04, "resamples": 1000, "alpha": 0.05, "seed": 0}


@pytest.mark.parametrize(("low", "exit_code"), [(0.02, 0), (-0.01, 1)])
def test_a_pipeline_comparison_json_is_read_by_the_same_rules(files, low, exit_code):
    path = files / "comparison.json"
    path.write_text(json.dumps(documents.comparison(documents.paired(ci_low=-0.01),
                                                    training=[_training(low)])))
    rules = _rules(files / "r.yaml", "- {rule: no_regression, measure: nDCG@10, max_drop: 0.02}"
                   "\n- {rule: seeds, measure: nDCG@10, require: mean}\n")
    done = _gate(str(path), rules, "--json")
    assert done.exit_code == exit_code, done.output
    doc = json.loads(done.stdout)
    assert doc["baseline"] == "bm25" and doc["candidate"] == "hybrid"
    assert doc["failed"] == ([] if exit_code == 0 else ["seeds mean nDCG@10 (hybrid)"])


def test_an_uncontrolled_compare_json_is_gated_and_labelled(files):
    rng = np.random.default_rng(2)
    for name, queries, shift in (("a.csv", 30, 0.0), ("b.csv", 20, 0.2)):
        (files / name).write_text("query_id,measure,value\n" + "".join(
            f"q{i},AP,{min(1.0, v + shift)}\n" for i, v in enumerate(rng.uniform(0, 0.8,
                                                                             queries))))
    compared = runner.invoke(app, ["compare", str(files / "a.csv"), str(files / "b.csv"),
                                   "--allow-uncontrolled", "--format", "json"])
    (files / "u.json").write_text(compared.stdout)
    done = _gate(str(files / "u.json"), _rules(files / "r.yaml", "- {rule: not_worse, "
                                               "measure: AP}\n"), "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert doc["controlled"] is False
    assert doc["rules"][0]["reason"].startswith("UNCONTROLLED: AP of b ")


def test_a_bad_rules_file_or_comparison_is_one_line_naming_it(files):
    bad = _rules(files / "bad.yaml", "rules:\n  - {rule: no_regression, measure: nDCG@10, "
                 "max_drop: x}\n")
    (files / "cmp.json").write_text(json.dumps({"paired": "no"}))
    ok = _rules(files / "ok.yaml", "- {rule: no_regression, measure: nDCG@10}\n")
    comparison = _compare(files, "base.run", "better.run")
    for args, words in (
            ([comparison, bad], "bad.yaml:gate.rules.0.no_regression.max_drop: Input should be "
                                "a valid number"),
            ([comparison, _rules(files / "m.yaml", "- {rule: not_worse, measure: nDGC@10}\n")],
             "m.yaml:gate.rules.0.measure: unknown measure 'nDGC@10'; did you mean nDCG@10?"),
            ([comparison, _rules(files / "e.yaml", "gate: {rules: []}\n")], "e.yaml: no rules"),
            ([str(files / "cmp.json"), ok], "cmp.json: not a comparison")):
        done = _gate(*args)
        assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.output
        assert words in done.stderr and "Traceback" not in done.output
    alone = runner.invoke(app, ["gate", "--comparison", str(files / "cmp.json")])
    assert alone.exit_code == 2 and "go together" in alone.stderr


def test_without_a_decision_gate_says_what_to_give(files, monkeypatch):
    monkeypatch.chdir(files)  # no project here
    missing = runner.invoke(app, ["gate"])
    assert missing.exit_code == 2 and missing.stderr.count("\n") == 1
    assert missing.stderr.startswith("error: data/gate/decision.json: file not found: no decision")
    assert "give --comparison FILE --rules FILE" in missing.stderr
    assert "dvc repro" not in missing.stderr
    comparison = _compare(files, "base.run", "better.run")
    given = runner.invoke(app, ["gate", "--decision", comparison])
    assert given.exit_code == 2
    assert f"not a gate decision but a comparison: give --comparison {comparison}" in given.stderr


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
