"""The Prefect flow over real DVC stages on a tiny demo project (a copy of this one)."""

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from prefect.testing.utilities import prefect_test_harness

from flows.pipeline import dvc_stages, pipeline
from releval.params import load_params
from tests.projects import HARNESS_S, SELFTEST, copy_code, lexical_only

ROOT = Path(__file__).resolve().parents[2]
TINY = {"prepare": {"n_docs": 400, "n_queries": 80}, "candidates": {"depth": 20},
        "selftest": SELFTEST}


def make_project(base: Path, overrides: dict = TINY, params: str = "params.yaml") -> Path:
    """releval's code, dvc.yaml and ``params`` (shrunk) as params.yaml in a fresh DVC
    repository."""
    copy_code(base)
    params = yaml.safe_load((ROOT / params).read_text())
    for section, values in overrides.items():
        params[section].update(values)
    (base / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=base,
                   check=True)
    shutil.copy(ROOT / ".dvcignore", base / ".dvcignore")
    return base


@pytest.fixture(scope="module")
def harness():
    with prefect_test_harness(HARNESS_S):
        yield


@pytest.fixture(scope="module")
def project(tmp_path_factory, harness):
    root = make_project(tmp_path_factory.mktemp("project"))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        first = pipeline("params.yaml", return_state=True)
        shutil.copytree(root / "data", root.parent / "first-run")  # for the executor test
        second = pipeline("params.yaml", return_state=True)
    finally:
        os.chdir(cwd)
    return root, first, second


def test_flow_runs_every_stage_validates_and_writes_metrics(project):
    root, first, _ = project
    assert first.is_completed(), first.message
    record = dict(first.result())
    assert record.pop("decision") in {"PASS", "FAIL"}
    assert record.pop("receipt") == json.loads(
        (root / "reports/receipt.json").read_text())["sha256"][:12]
    assert record == {s: "ran" for s in ("inputs", "prepare", "split", "candidates",
                                         "selftest", "pool", "judgments", "fuse", "fixture",
                                         "evaluate", "autojudge", "compare", "slices", "safety",
                                         "health", "failures", "offpolicy", "gate", "report")}
    fixture = json.loads((root / "data/fixture/fixture.json").read_text())
    assert set(fixture["systems"]) == {"bm25", "dense", "hybrid"}  # examples/fixture
    assert "replays a run file" in fixture["not_applicable"]["prod_v2"]
    checked = json.loads((root / "data/selftest/selftest.json").read_text())
    assert checked["ok"] and checked["reached"] > 0 and checked["failed"] == 0
    metrics = json.loads((root / "data/evaluate/metrics.json").read_text())
    assert set(metrics) == {"bm25", "dense", "prod_v2", "prod_v3", "hybrid"}
    assert all(0 < metrics[s]["nDCG@10"] <= 1 for s in metrics)
    stats = json.loads((root / "data/fused/hybrid/run_stats.json").read_text())
    assert stats["fusion"]["method"] in {"rrf", "linear"} and stats["depth"] == 20
    flags = json.loads((root / "data/candidates/prod_v2/run_stats.json").read_text())
    assert flags["visibility"]["forbidden"] > 0  # the simulated team run ignores the ACLs
    reports = sorted(p.name for p in (root / "data/validation").rglob("*.json"))
    assert "documents.documents.json" in reports and "bm25.run.json" in reports
    assert all(json.loads(p.read_text())["success"]
               for p in (root / "data/validation").rglob("*.json"))
    page = (root / "reports/summary.md").read_text()
    assert (root / "dvc.lock").exists() and "simulated judges (demo simulation)" in page
    ingest = json.loads((root / "data/judgments/ingest.json").read_text())
    assert ingest["rows_in"] == (ingest["accepted_new"] + ingest["already_accepted"]
                                 + ingest["quarantined"]) and ingest["quarantined"] > 0
    agreement = json.loads((root / "data/judgments/agreement.json").read_text())
    assert 0 < agreement["mean_pairwise_kappa_weighted"] <= 1
    export = (root / "data/pool/judging.csv").read_text()
    assert "bm25" not in export and "doc_id" not in export.splitlines()[0]


def test_flow_compares_slices_counts_safety_and_decides(project):
    root, first, _ = project
    comparison = json.loads((root / "data/compare/comparison.json").read_text())
    assert comparison["controlled"] and comparison["differences"] == []
    assert {r["measure"] for r in comparison["paired"]} == {"nDCG@10", "R@100", "RR@10"}
    slices = pd.read_parquet(root / "data/slices/slices.parquet")
    assert {"tag", "length", "tenant", "role"} <= set(slices["dimension"])
    safety = json.loads((root / "data/safety/safety.json").read_text())
    assert safety["systems"]["prod_v2"]["violations"] > 0  # it ignores the ACLs
    assert safety["systems"]["hybrid"]["violations"] == 0
    decision = json.loads((root / "data/gate/decision.json").read_text())
    assert decision["passed"] == (first.result()["decision"] == "PASS")
    assert "## Release gate: " in (root / "reports/decision.md").read_text()


def test_the_decision_shows_the_change_seeds_health_rollback_and_query_set(project):
    root = project[0]
    comparison = json.loads((root / "data/compare/comparison.json").read_text())
    assert comparison["change"]["kind"] == "route"
    assert [f["condition"] for f in comparison["change"]["holds_fixed"]] == [
        "budget", "time_window", "labelling"]
    [also] = comparison["also"]
    assert (also["candidate"], also["change"]["kind"]) == ("prod_v3", "training_signal")
    training = {r["measure"]: r for r in also["training"]}
    assert [s["seed"] for s in training["nDCG@10"]["seeds"]] == [1, 2, 3]
    seeds = pd.read_parquet(root / "data/evaluate/seeds.parquet")
    assert set(seeds["seed"]) == {1, 2, 3} and set(seeds["system"]) == {"prod_v3"}
    health = json.loads((root / "data/health/health.json").read_text())["systems"]
    assert health["hybrid"]["error_rate"] == 0 and health["prod_v2"]["error_rate"] is None
    assert health["prod_v3"]["deletion_propagation_max_days"] > 0  # it ignores deletions
    decision = json.loads((root / "data/gate/decision.json").read_text())
    rules = {o["rule"] for o in decision["rules"]}
    assert {"seeds", "health", "coverage"} <= rules
    assert {r["metric"] for r in decision["rollback"]} >= {"error_rate", "nDCG@10"}
    split = json.loads((root / "data/split/split_report.json").read_text())
    assert split["query_set"]["categories"]["no_answer"]["count"] > 0
    page = (root / "reports/decision.md").read_text()
    for part in ("## Change: route", "## Training variance: prod_v3 vs prod_v2 (3 seeds)",
                 "## System health", "### Freshness", "### Rollback thresholds",
                 "## Query set"):
        assert part in page, part


def test_failures_are_traced_to_layers_and_a_review_overrides_them(project, tmp_path):
    root, _, _ = project
    failures = pd.read_parquet(root / "data/failures/failures.parquet")
    assert set(failures["system"]) <= {"bm25", "hybrid", "dense"}
    assert set(failures.loc[failures["kind"] == "relevance", "system"]) == {"bm25", "hybrid"}
    assert len(set(failures["layer"])) >= 2 and "representation" in set(failures["layer"])
    report = json.loads((root / "data/failures/failures.json").read_text())
    by_layer = {r["layer"]: r for r in report["by_layer"]}
    assert sum(r["baseline"] for r in by_layer.values()) == int(
        ((failures["system"] == "bm25") & (failures["kind"] == "relevance")).sum())
    sheet = pd.read_csv(root / "data/failures/worksheet.csv", keep_default_na=False)
    assert len(sheet) == len(failures) and (sheet["reviewer_layer"] == "").all()

    reviewed = sheet.copy()
    reviewed.loc[0, "reviewer_layer"] = "qrels" if sheet.loc[0, "automatic_layer"] != "qrels" \
        else "ranking"  # a reviewer disagrees
    reviewed.loc[1, "reviewer_layer"] = sheet.loc[1, "automatic_layer"]  # and one agrees
    reviewed.loc[2, "reviewer_layer"] = "gremlins"  # a bad verdict: quarantined
    review = tmp_path / "reviewed.csv"
    reviewed.to_csv(review, index=False)
    from stages import failures as stage
    from stages.common import read_inputs

    (tmp_path / "input/review").mkdir(parents=True)  # the review as the inputs stage pins it
    shutil.copy(review, tmp_path / "input/review" / review.name)
    p = load_params(root / "params.yaml")
    p = p.model_copy(update={"failures": p.failures.model_copy(update={"review": str(review)})})
    cwd = Path.cwd()
    os.chdir(root)
    try:
        inputs = read_inputs(stage.Inputs, p)
    finally:
        os.chdir(cwd)
    result = stage.run(p, replace(inputs, pinned=tmp_path / "input"))
    counts = result.report["review"]
    assert (counts["reviewed"], counts["quarantined"]) == (2, 1)
    assert counts["rows_in"] == counts["reviewed"] + counts["unreviewed"] + counts["quarantined"]
    assert counts["disagreement_rate"] == 0.5
    assert result.quarantine["reason"].tolist() == ["reviewer_layer not in LAYERS"]
    overridden = result.failures[result.failures["layer_source"] == "reviewer"]
    assert len(overridden) == 2


def test_second_run_with_nothing_changed_skips_every_stage(project):
    root, _, second = project
    assert second.is_completed(), second.message
    record = dict(second.result())
    record.pop("decision")
    receipt = record.pop("receipt")
    assert record.pop("inputs") == "ran"  # always: it re-reads every input's content
    # the receipt's content is the first run's (the same sha256): the page already shows it
    assert record.pop("report") == "skipped"
    assert set(record.values()) == {"skipped"}
    page = (root / "reports/index.html").read_text(encoding="utf-8")
    assert f"<code>{receipt}</code>" in page  # the page shows the receipt of this run


@pytest.mark.slow  # the whole pipeline again on a LocalCluster; in `make test-all` (the
# executor, the sharded searches, the blocked evaluation and bootstrap are in the default
# suite: tests/test_executor.py, tests/retrieval/test_*_shards.py, tests/decision/)
def test_the_same_project_on_a_dask_cluster_gives_byte_identical_metrics(project, tmp_path):
    """executor: dask on a LocalCluster of 2 workers, documents in shards of 150 and queries
    in blocks of 25 (the tiny corpus needs small shards to have several): the sharded
    BM25 and dense windows equal the single-index ones, so metrics.json is byte-identical;
    the receipt records the executor, the cluster size and each shard layout. The stages
    after compare read nothing the executor changes and are left out (kept)."""
    root, first, _ = project
    assert first.is_completed(), first.message
    local = root.parent / "first-run"
    copy = shutil.copytree(root, tmp_path / "dask", symlinks=True)
    params = yaml.safe_load((copy / "params.yaml").read_text())
    params["base"] |= {"executor": "dask", "shards": {"documents": 150, "queries": 25}}
    (copy / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    done = subprocess.run(  # as `releval run` starts it: the flow module as __main__
        [sys.executable, "-m", "flows.pipeline", "--params", "params.yaml",
         *(f"--skip={s}" for s in ("fixture", "slices", "safety", "health", "failures",
                                   "gate"))],
        cwd=copy, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                   f"{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "candidates   ran" in done.stdout
    assert ((copy / "data/evaluate/metrics.json").read_bytes()
            == (local / "evaluate/metrics.json").read_bytes())
    for system in ("bm25", "dense"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(copy / f"data/candidates/{system}/run.parquet"),
            pd.read_parquet(local / f"candidates/{system}/run.parquet"))
    ran = json.loads((copy / "reports/receipt.json").read_text())["run"]["executor"]
    assert (ran["executor"], ran["cluster"], ran["workers"]) == ("dask", "local", 2)
    assert ran["task_runner"] == "dask"  # the validations ran on the same cluster
    docs = len(pd.read_parquet(copy / "data/raw/documents.parquet"))
    assert ran["sharded"]["bm25"]["document_shards"] == -(-docs // 150) > 1
    assert ran["sharded"]["dense"]["query_blocks"] > 1


@pytest.mark.slow  # re-runs every stage's main(); in `make test-all`
def test_every_stage_lists_every_params_key_it_reads(project, tmp_path, monkeypatch):
    """Each stage runs again, in a copy of the project, with params that record every key
    read; dvc.yaml must list each key, or a section holding it."""
    import shlex

    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    from stages import common
    from tests.dag import recording

    root, _, _ = project
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".dvc", ".git"))
    monkeypatch.chdir(copy)
    with Repo(str(root)) as repo:
        stages = [(s.name, s.cmd, [k for d in s.deps if isinstance(d, ParamsDependency)
                                   for k in d.params]) for s in repo.index.stages]
    unlisted = {}
    for name, cmd, listed in stages:
        argv = shlex.split(cmd)  # python -m stages <stage> --params params.yaml [--system …]
        proxy, reads = recording(load_params(copy / "params.yaml"))
        monkeypatch.setattr(common, "params_of", lambda _args, proxy=proxy: proxy)
        common.main(argv[3], argv[4:])
        if reads.missing(listed):
            unlisted[name] = reads.missing(listed)
        assert reads.values, f"{name}: no params read at all (the recorder saw nothing)"
    assert unlisted == {}, f"dvc.yaml misses params: {unlisted}"


def test_editing_a_shared_stage_module_makes_dvc_report_the_stages_changed(project):
    root, _, _ = project
    common = root / "stages/common.py"
    text = common.read_text()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def status() -> dict:
        done = subprocess.run([sys.executable, "-m", "dvc", "status", "--json"], cwd=root,
                              capture_output=True, text=True, check=True, env=env)
        return json.loads(done.stdout)

    assert set(status()) == {"inputs"}  # always re-run; nothing else is stale
    try:
        common.write_text(text + "\n# a change\n")
        changed = status()
    finally:
        common.write_text(text)
    assert {"prepare", "split", "pool", "evaluate", "compare", "gate", "report",
            "candidates@bm25", "fuse@hybrid"} <= set(changed)
    assert changed["split"] == [{"changed deps": {"stages/common.py": "modified"}}]
    assert set(status()) == {"inputs"}


def run_changed(root: Path, change) -> object:
    """The flow once with ``change(params)`` applied to the project's params, then restored."""
    params = yaml.safe_load((root / "params.yaml").read_text())
    change(params)
    good = (root / "params.yaml").read_text()
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        return pipeline("params.yaml", return_state=True)
    finally:
        os.chdir(cwd)
        (root / "params.yaml").write_text(good)


def test_a_run_with_nothing_to_do_is_known_and_any_change_undoes_it(project, tmp_path):
    """``unchanged``: after the fixture's second run, the last receipt; a gate rule's
    wording changed in params, or a stage's output removed, and the run has work again."""
    from flows.pipeline import unchanged

    root = project[0]
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    cwd = Path.cwd()
    os.chdir(copy)
    try:
        last = unchanged("params.yaml")
        assert last is not None and last["sha256"] == json.loads(
            (copy / "reports/receipt.json").read_text())["sha256"]
        params = yaml.safe_load((copy / "params.yaml").read_text())
        params["compare"]["min_effect"] = 0.0123
        (copy / "changed.yaml").write_text(yaml.safe_dump(params))
        shutil.copy(copy / "params.yaml", copy / "kept.yaml")
        shutil.copy(copy / "changed.yaml", copy / "params.yaml")
        assert unchanged("params.yaml") is None  # compare's params moved
        shutil.copy(copy / "kept.yaml", copy / "params.yaml")
        assert unchanged("params.yaml") is not None
        (copy / "data/gate/decision.json").unlink()
        assert unchanged("params.yaml") is None  # an output is gone
    finally:
        os.chdir(cwd)


def test_bad_rows_stop_the_flow_at_validation_before_later_stages(project, tmp_path):
    root, _, _ = project
    raw = root / "data/raw"
    tables = tmp_path / "tables"
    tables.mkdir()
    docs = pd.read_parquet(raw / "documents.parquet")
    pd.concat([docs, docs.iloc[[3]]], ignore_index=True).to_parquet(tables / "documents.parquet")
    shutil.copy(raw / "queries.parquet", tables)
    shutil.copy(raw / "judgments.parquet", tables)
    later = root / "data/split/split.parquet"
    before = later.stat().st_mtime_ns
    def tables_source(p: dict) -> None:  # the demo's team runs exist only in its own data
        lexical_only(p)
        p["prepare"].update(source="tables", path=str(tables))

    state = run_changed(root, tables_source)
    assert state.is_failed()
    assert "stage prepare" in state.message and "doc_id" in state.message
    assert "unique" in state.message
    assert later.stat().st_mtime_ns == before  # split never ran on the bad data


def test_an_uncontrolled_comparison_stops_the_flow_with_its_differences(project, capfd):
    root, _, _ = project
    # an external run does not enforce the visibility rule the baseline enforces
    state = run_changed(root, lambda p: p["compare"].update(candidate="prod_v2"))
    assert state.is_failed()
    err = capfd.readouterr().err
    assert "is not a controlled comparison for a route change" in err and "refused: " in err
    assert "visibility: baseline 'enforced by the route' ≠ candidate 'not enforced" in err


def test_releval_run_is_a_quiet_console(project):
    """One line per stage, the table, the decision and the report's path; DVC's notes,
    Prefect's logs and the stages' own output only in reports/run.log. Run again at once,
    nothing has changed: no stage runs and no flow run is recorded (``unchanged``)."""
    root = project[0]
    piped = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # xdist's workers set it
    done = subprocess.run([sys.executable, "-m", "releval.cli", "run"], cwd=root,
                          capture_output=True, text=True, timeout=600, env=piped)
    assert done.returncode == 0, done.stderr[-2000:]
    console = done.stdout + done.stderr
    for column in ("nDCG@10", "R@100", "RR@10", "Judged@10", "undefined", "dense", "hybrid",
                   "release gate: hybrid against bm25", "rules failed",
                   "(every rule: reports/decision.md)", "coverage", "FAIL"):
        assert column in " ".join(done.stdout.split())  # a long title wraps
    lines = console.splitlines()
    for stage in dvc_stages(root):
        marked = [line for line in lines if line[:1] in "✓·✗" and line.split()[1:2] == [stage]]
        assert len(marked) == 1, stage
    for noise in ("didn't change", "INFO", "Traceback", "ERROR", "telemetry", "stage worker"):
        assert noise not in console
    # the stages' warm worker started, served and was stopped, its last line in the log only
    assert re.search(r"stage worker: ran \d+ stage command", (root / "reports/run.log").read_text())
    failed = json.loads((root / "data/gate/decision.json").read_text())["failed"]
    assert len(lines) < 45 + 3 * len(failed)  # the failed rules' rows wrap onto 2-3 lines
    assert "report: reports/index.html" in done.stdout and (root / "reports/index.html").exists()
    assert "receipt: " in done.stdout and (root / "reports/receipt.json").exists()
    # at once again: nothing changed, so no flow run and every stage's line skipped
    again = subprocess.run([sys.executable, "-m", "releval.cli", "run"], cwd=root,
                           capture_output=True, text=True, timeout=600, env=piped)
    assert again.returncode == 0, again.stderr[-2000:]
    console = again.stdout + again.stderr
    assert "nothing changed since the run that finished" in console
    marked = [line for line in console.splitlines() if line[:1] in "✓·✗"]
    assert len(marked) == len(dvc_stages(root)) and all(m.startswith("·") for m in marked)
    assert "FAIL" in again.stdout and "Traceback" not in console  # the decision still shown


def test_the_report_page_renders_offline_in_a_real_browser(project):
    """reports/index.html of the run, opened from disk in headless Chromium with the network
    off: the verdict, every plot as a drawn SVG, the per-query table (sortable, filterable),
    no console error; a full-page screenshot is kept under reports/."""
    from tests.browser.cdp import Browser, png_size

    root = project[0]
    with Browser() as browser, browser.open(root / "reports/index.html") as page:
        verdict = page.eval("document.querySelector('.verdict').textContent")
        assert "FAIL" in verdict or "PASS" in verdict
        plots = page.eval("""[...document.querySelectorAll('figure[id^="plot-"]')].map(f => {
            const s = f.querySelector('svg'); const r = s && s.getBoundingClientRect();
            return [f.id, s ? s.querySelectorAll('path,rect,line,circle,text').length : 0,
                    r ? r.width * r.height : 0]; })""")
        assert len(plots) >= 8
        # all drawn, non-empty; but the automatic judge's, which the demo does not configure
        assert [p[0] for p in plots if p[1] < 5 or p[2] <= 0] == ["plot-automatic"]
        assert page.eval("document.querySelector('#plot-automatic p.absent').textContent") \
            == "No automatic judge configured (judgments.automatic)."
        rows = page.eval("document.querySelectorAll('#qtable tbody tr').length")
        assert rows > 0
        shot = root / "reports" / "index.png"
        width, height = png_size(page.screenshot(shot))
        assert width >= 1000 and height > 3000  # the whole page, not one screen
        first = page.eval("document.querySelector('#qtable tbody tr').textContent")
        page.eval("document.querySelector('#qtable thead th').click()")
        page.eval("document.querySelector('#qtable thead th').click()")
        assert page.eval("document.querySelector('#qtable tbody tr').textContent") != first
        query = page.eval("document.querySelector('#qtable tbody tr td').textContent")
        page.eval(f"const f = document.querySelector('#qfilter'); f.value = {query!r};"
                  "f.dispatchEvent(new Event('input'))")
        shown = page.eval("[...document.querySelectorAll('#qtable tbody tr')]"
                          ".filter(r => !r.hidden && r.offsetHeight > 0).length")
        assert 1 <= shown < rows
        assert page.errors == [] and page.failed_requests == []
    kept = ROOT / "reports"
    if kept.is_dir():  # keep the picture where the project's reports are, to look at
        shutil.copy(shot, kept / "index-tiny.png")
