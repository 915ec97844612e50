"""Pinned inputs and reproduction on real data: a BEIR folder outside the project (a slice
of CACM) is changed in place, the pipeline notices, and `reproduce` tells exactly what."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from prefect.testing.utilities import prefect_test_harness

from flows.pipeline import pipeline
from flows.reproduce import reproduce
from tests.projects import SELFTEST, copy_code

ROOT = Path(__file__).resolve().parents[2]
CACM = ROOT.parent / "shared" / "data" / "cacm"
GIT = ["git", "-c", "user.email=ci@releval", "-c", "user.name=releval"]


def tiny_beir(folder: Path, n_queries: int = 30, extra_docs: int = 150) -> Path:
    """CACM's first queries, their judged documents and some others, in BEIR layout."""
    lines = (CACM / "qrels" / "test.tsv").read_text().splitlines()
    qrels = [line for line in lines[1:] if int(line.split("\t")[0]) <= n_queries]
    judged = {line.split("\t")[1] for line in qrels}
    docs = [d for i, d in enumerate((CACM / "corpus.jsonl").read_text().splitlines())
            if json.loads(d)["_id"] in judged or i < extra_docs]
    queries = [q for q in (CACM / "queries.jsonl").read_text().splitlines()
               if int(json.loads(q)["_id"]) <= n_queries]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(docs) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n")
    (folder / "qrels" / "test.tsv").write_text("\n".join([lines[0], *qrels]) + "\n")
    return folder


def git_project(base: Path, beir: Path) -> Path:
    """releval's code in a fresh git + DVC repository with its default local remote."""
    copy_code(base)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["prepare"] |= {"source": "beir", "path": str(beir)}
    params["candidates"] = {"depth": 20, "systems": {  # two lexical routes: no model to load
        "bm25": {"route": "bm25"}, "bm25_plain": {"route": "bm25", "stemmer": None,
                                                  "stopwords": None}}}
    params["fusion"]["systems"]["hybrid"] |= {"lexical": "bm25", "dense": "bm25_plain"}
    params["pool"]["systems"] = ["bm25", "bm25_plain"]
    params["compare"]["resamples"] = 500
    params["selftest"] |= SELFTEST
    (base / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    subprocess.run(["git", "init", "-q"], cwd=base, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=base, check=True)
    shutil.copy(ROOT / ".dvc" / "config", base / ".dvc" / "config")
    shutil.copy(ROOT / ".dvcignore", base / ".dvcignore")
    subprocess.run(["git", "add", "-A"], cwd=base, check=True)
    subprocess.run([*GIT, "commit", "-qm", "project"], cwd=base, check=True)
    return base


def run_flow(root: Path) -> dict:
    cwd = Path.cwd()
    os.chdir(root)
    try:
        state = pipeline("params.yaml", return_state=True)
    finally:
        os.chdir(cwd)
    assert state.is_completed(), state.message
    return dict(state.result())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run 1 (receipt kept), half the qrels deleted in the BEIR folder, run 2."""
    from prefect.settings import PREFECT_API_URL

    base = tmp_path_factory.mktemp("reproduce")
    beir = tiny_beir(base / "cacm")
    root = git_project(base / "project", beir)
    with prefect_test_harness(), pytest.MonkeyPatch.context() as env:
        env.setenv("PREFECT_API_URL", PREFECT_API_URL.value())  # reproduce's flow uses it too
        first = run_flow(root)
        receipt_1 = base / "receipt-1.json"
        shutil.copy(root / "reports/receipt.json", receipt_1)
        metrics_1 = json.loads((root / "data/evaluate/metrics.json").read_text())
        qrels = beir / "qrels" / "test.tsv"
        lines = qrels.read_text().splitlines()
        qrels.write_text("\n".join(lines[: len(lines) // 2]) + "\n")  # half deleted in place
        second = run_flow(root)
        yield {"root": root, "beir": beir, "first": first, "second": second,
               "receipt_1": receipt_1, "metrics_1": metrics_1}


def test_a_changed_input_in_place_reruns_its_stages_and_changes_the_numbers(runs):
    assert runs["first"]["prepare"] == "ran"
    second = runs["second"]
    assert second["inputs"] == "ran" and second["prepare"] == "ran"
    assert second["evaluate"] == "ran"
    metrics_2 = json.loads((runs["root"] / "data/evaluate/metrics.json").read_text())
    assert metrics_2["bm25"]["nDCG@10"] != runs["metrics_1"]["bm25"]["nDCG@10"]
    kept = sorted((runs["root"] / "reports/runs").glob("*.json"))
    assert len(kept) == 2  # the ledger keeps both runs


def test_reproducing_the_last_run_from_the_dvc_cache_is_identical_byte_for_byte(runs):
    root = runs["root"]
    out = reproduce(root / "reports/receipt.json", root, pinned_only=True,
                    progress=lambda _: None)
    assert out.identical, out.differences
    assert any("restored from the DVC cache" in note for note in out.notes)
    assert out.digests > 100 and out.metrics >= 12
    new = json.loads((root / "reports/reproduced.json").read_text())
    old = json.loads((root / "reports/receipt.json").read_text())
    assert new["sha256"] == old["sha256"]  # the hashed part is byte-identical


def test_reproducing_a_run_whose_input_changed_names_it_and_the_metrics_that_moved(runs):
    out = reproduce(runs["receipt_1"], runs["root"], progress=lambda _: None)
    assert not out.identical
    assert out.differences[0].startswith("input data/input/prepare: ")
    moved = [line for line in out.differences if line.startswith("metric bm25 nDCG@10: ")]
    assert moved == [f"metric bm25 nDCG@10: {runs['metrics_1']['bm25']['nDCG@10']:.6g} → "
                     + moved[0].rsplit(" → ", 1)[1]]



@pytest.mark.slow
def test_the_demo_in_a_fresh_clone_reproduces_identically(tmp_path):
    """README's promise, as a new user runs it: clone, `releval demo`, `releval reproduce`."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone)}
    demo = subprocess.run([sys.executable, "-m", "releval.cli", "demo"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "receipt: " in demo.stdout
    again = subprocess.run([sys.executable, "-m", "releval.cli", "reproduce",
                            "reports/receipt.json"], cwd=clone, env=env, capture_output=True,
                           text=True, timeout=900)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "reproduced: identical (" in again.stdout
