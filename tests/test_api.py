"""The Python API (docs/api.md): its examples run as written, its numbers are the commands'
(``releval metrics``, ``releval compare``, ``releval gate`` on the same files), ``import
releval`` imports none of it, and ``releval.flows.evaluate_project`` is a Prefect flow running
the pipeline flow in the project's folder."""

from __future__ import annotations

import contextlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import releval
from releval.cli import app
from releval.decision.missing import MissingQueries
from releval.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"
CACM_QRELS = ROOT.parent / "shared" / "data" / "cacm" / "qrels" / "test.tsv"
RUNS = ROOT / "examples" / "runs" / "cacm"
runner = CliRunner()


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture(scope="module")
def cacm():
    if not CACM_QRELS.exists():
        pytest.fail(f"shared test data missing: {CACM_QRELS}")
    return CACM_QRELS, RUNS / "bm25.trec", RUNS / "tuned.trec"


def test_every_python_block_of_docs_api_runs_in_order(cacm, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "docs_api"}  # a block's ``if __name__ == "__main__"`` stays out
    for i, block in enumerate(blocks()):
        exec(compile(block, f"{DOC}: python block {i + 1}", "exec"), namespace)
    assert namespace["decision"].passed and "PASS" in capsys.readouterr().out


def test_the_first_example_evaluates_compares_and_gates_cacm_in_under_fifteen_lines():
    first = blocks()[0]
    lines = [line for line in first.splitlines() if line.strip()]
    assert len(lines) < 15
    for needed in ("../shared/data/cacm/qrels", "examples/runs/cacm", "releval.read_qrels",
                   "releval.read_run", "releval.evaluate", "releval.compare", "releval.gate"):
        assert needed in first


def _cli_json(*args) -> dict:
    done = runner.invoke(app, [*map(str, args)])
    assert done.exit_code in (0, 1), done.output
    return json.loads(done.stdout)


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (a is None and b is None) or (a is not None and b is not None
                                             and (math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
                                                  or (math.isnan(a) and math.isnan(b))))
    return a == b


@pytest.mark.parametrize("query_set", ["judged", "common"])
def test_evaluate_equals_releval_metrics_on_the_same_files(cacm, tmp_path, query_set):
    qrels, bm25, tuned = cacm
    short = tmp_path / "short.trec"  # a run missing judged queries: counted, scored 0
    short.write_text("".join(line for line in tuned.read_text().splitlines(keepends=True)
                             if line.split()[0] not in {"10", "25"}))
    measures = ["nDCG@10", "R@100", "AP", "P@5", "Judged@10"]
    for path in (bm25, short):
        run = releval.read_run(path)
        api = releval.evaluate(releval.read_qrels(qrels), run, measures, query_set=query_set)
        cli = _cli_json("metrics", qrels, path, *(x for m in measures for x in ("-m", m)),
                        "--format", "json", "-q",
                        *(["--common-only"] if query_set == "common" else []))
        assert api.counts[run.name] == cli["counts"]
        got = api.to_dict()["systems"][run.name]["measures"]
        for name, entry in cli["measures"].items():
            assert {k: got[name][k] for k in entry} == pytest.approx(entry, abs=1e-12), name
        mine = {(r.query_id, r.measure): r.value for r in api.per_query.itertuples()}
        theirs = {(r["query_id"], r["measure"]): r["value"] for r in cli["per_query"]}
        assert mine.keys() == theirs.keys()
        assert all(_same(mine[k], theirs[k]) for k in theirs)
    assert (api.summary["missing"] == (2 if query_set == "judged" else 0)).all()


def test_compare_equals_releval_compare_on_the_same_files(cacm, tmp_path):
    qrels, bm25, tuned = cacm
    options = ["--resamples", "2000", "--seed", "7", "--test", "t"]
    cli = _cli_json("compare", "--qrels", qrels, bm25, tuned, "--format", "json", *options)
    from_runs = releval.compare({"bm25": bm25, "tuned": tuned}, "bm25", "tuned", qrels=qrels,
                                test="t", resamples=2000, seed=7)
    assert json.loads(from_runs.to_json()) == cli
    results = releval.evaluate(qrels, [releval.read_run(bm25), releval.read_run(tuned)],
                               ["nDCG@10", "R@100", "RR@10"])
    from_results = releval.compare(results, "bm25", "tuned", test="t", resamples=2000, seed=7)
    assert json.loads(from_results.to_json()) == cli
    assert {r["measure"] for r in cli["paired"]} == {"nDCG@10", "R@100", "RR@10"}


def test_gate_equals_releval_gate_on_the_same_comparison(cacm, tmp_path):
    qrels, bm25, tuned = cacm
    comparison = releval.compare({"bm25": bm25, "tuned": tuned}, "bm25", "tuned", qrels=qrels,
                                 resamples=2000)
    (tmp_path / "comparison.json").write_text(comparison.to_json())
    (tmp_path / "rules.yaml").write_text(
        "- {rule: no_regression, measure: nDCG@10, max_drop: 0.01}\n"
        "- {rule: not_worse, measure: R@100}\n- {rule: safety}\n")
    cli = _cli_json("gate", "--comparison", tmp_path / "comparison.json", "--rules",
                    tmp_path / "rules.yaml", "--json")
    decision = releval.gate(comparison, tmp_path / "rules.yaml")
    assert json.loads(decision.to_json()) == cli
    listed = releval.gate(comparison, [{"rule": "no_regression", "measure": "nDCG@10",
                                        "max_drop": 0.01},
                                       {"rule": "not_worse", "measure": "R@100"},
                                       {"rule": "safety"}])
    assert listed.doc == decision.doc
    assert not decision and decision.failed == ["no_regression nDCG@10 @ all"]
    assert decision.to_frame()["applicable"].tolist() == [True, True, False]


def test_the_query_set_refuse_and_a_narrower_evaluation_are_refused(cacm, tmp_path):
    qrels, bm25, tuned = cacm
    frame = releval.read_run(tuned).frame
    short = releval.read_run(frame[frame["query_id"] != "10"], name="short")
    with pytest.raises(MissingQueries, match="1 of 52 judged queries are missing"):
        releval.evaluate(qrels, [releval.read_run(bm25), short], query_set="refuse")
    common = releval.evaluate(qrels, [releval.read_run(bm25), short], "nDCG@10",
                              query_set="common")
    assert common.summary["n"].tolist() == [51, 51]
    with pytest.raises(InputError, match="evaluated over the query set 'common'"):
        releval.compare(common, "bm25", "short", query_set="judged")
    assert releval.compare(common, "bm25", "short", resamples=500).row("nDCG@10")["n"] == 51


def test_readers_take_frames_and_folders_with_the_readers_errors(cacm):
    qrels = releval.read_qrels(cacm[0])
    folder = releval.read_qrels(cacm[0].parents[1])
    assert folder.frame.reset_index(drop=True).equals(qrels.frame.reset_index(drop=True))
    framed = releval.read_qrels(qrels.frame.rename(columns={"grade": "score",
                                                             "doc_id": "corpus-id"}))
    assert framed.queries == qrels.queries and len(framed) == len(qrels)
    with pytest.raises(InputError, match=r"^run <DataFrame>: missing column\(s\) doc_id"):
        releval.read_run(pd.DataFrame({"query_id": ["1"], "score": [1.0]}))
    with pytest.raises(InputError, match=r"run <DataFrame>:row 2: score must be a number"):
        releval.read_run(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
                                       "score": ["1", "x"]}))
    with pytest.raises(InputError, match="the run holds 2 systems"):
        releval.read_run(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
                                       "score": [1.0, 2.0], "system": ["s", "t"]}))
    both = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 2.0],
                         "system": ["s", "t"]})
    assert releval.read_run(both, system="t").frame["doc_id"].tolist() == ["b"]
    assert releval.read_run(cacm[1]).name == "bm25"


def test_each_result_shows_as_a_table_and_as_json(cacm):
    qrels, bm25, tuned = cacm
    results = releval.evaluate(qrels, {"a": bm25, "b": tuned}, ["nDCG@10", "R@100"])
    comparison = releval.compare(results, "a", "b", resamples=500)
    decision = releval.gate(comparison, [{"rule": "not_worse", "measure": "nDCG@10"}])
    plan = releval.plan(results, "a", "b", min_effect={"nDCG@10": 0.02, "R@100": 0.05})
    for shown in (results, comparison, decision, plan):
        assert shown._repr_html_().startswith('<table class="releval">')
        assert isinstance(shown.to_frame(), pd.DataFrame) and len(shown.to_frame())
        json.loads(shown.to_json())
    assert "<td>0.4994</td>" in results._repr_html_()
    assert sorted(plan.to_frame()["measure"]) == ["R@100", "nDCG@10"]
    with pytest.raises(InputError, match="zero for R@100"):
        releval.plan(results, "a", "b", min_effect={"nDCG@10": 0.02, "R@100": 0})


def test_import_releval_imports_no_api_and_no_flow():
    code = ("import releval, sys; assert 'releval.api' not in sys.modules; "
            "assert 'flows' not in sys.modules; assert 'prefect' not in sys.modules; "
            "assert {'evaluate', 'compare', 'gate', 'plan', 'flows'} <= set(dir(releval))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        releval.nothing  # noqa: B018
    assert set(releval.__all__) >= {"read_qrels", "read_run", "Qrels", "Run", "Results",
                                    "Comparison", "Decision", "Plan", "__version__"}


def test_evaluate_project_is_a_flow_running_the_pipeline_flow_in_the_project(tmp_path,
                                                                           monkeypatch):
    from prefect import Flow

    import flows.project as project

    assert releval.flows.evaluate_project is project.evaluate_project
    assert isinstance(project.evaluate_project, Flow)
    calls = []

    class Done:
        def is_completed(self):
            return True

        def result(self):
            return {"inputs": "skipped", "decision": "PASS"}

    def pipeline(params_path, **options):
        calls.append((Path.cwd(), params_path, options))
        return Done()

    @contextlib.contextmanager
    def on_executor(params_path):
        yield pipeline, {"executor": "local", "workers": 1}

    monkeypatch.setattr(project, "on_executor", on_executor)
    monkeypatch.setattr(project, "get_run_logger", lambda: __import__("logging").getLogger())
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    here = Path.cwd()
    record = project.evaluate_project.fn(tmp_path, params="mine.yaml", force=True)
    assert record == {"inputs": "skipped", "decision": "PASS"}
    assert calls == [(tmp_path.resolve(), "mine.yaml",
                      {"force": True, "executed": {"executor": "local", "workers": 1},
                       "return_state": True})]
    assert Path.cwd() == here and (tmp_path / ".dvc" / "tmp" / "releval.lock").exists()  # held
    refused = project.evaluate_project.fn(tmp_path / "nothing")
    assert refused.is_failed() and "not a releval project" in refused.message
