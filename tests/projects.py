"""A copy of releval's code and DAG in a fresh folder, for the tests that run the pipeline's
stages in a project of their own."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CACM = ROOT.parent / "shared" / "data" / "cacm"
GIT = ["git", "-c", "user.email=ci@releval", "-c", "user.name=releval"]
CODE = ("releval", "stages", "flows", "examples")  # examples: params name examples/fixture
# a test project's self-test: every relation, but fewer trials, and the differential against
# the oracle that needs no compile step (tests/selftest compares every oracle)
SELFTEST = {"trials": 20, "oracles": ["pytrec_eval"], "cases": 90}
# Prefect's temporary test server may take long to start while the suite loads both cores
HARNESS_S = 120


def copy_code(dest: Path) -> Path:
    """The code folders (without bytecode), the examples (the pinned fixture), dvc.yaml and
    .gitignore under ``dest``."""
    for item in CODE:
        shutil.copytree(ROOT / item, dest / item, ignore=shutil.ignore_patterns("__pycache__"))
    for item in ("dvc.yaml", ".gitignore"):
        shutil.copy(ROOT / item, dest)
    return dest


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


def lexical_only(params: dict) -> dict:
    """The repo's params with two lexical routes (no model to load) fused as hybrid, and
    nothing that names the demo's other systems (the team runs' comparison, seed rules and
    cost models)."""
    params["candidates"] = {"depth": params["candidates"]["depth"], "systems": {
        "bm25": {"route": "bm25", "k1": 1.2},
        "bm25_plain": {"route": "bm25", "stemmer": None, "stopwords": None}}}
    params["fusion"]["systems"]["hybrid"] |= {"lexical": "bm25", "dense": "bm25_plain"}
    params["pool"]["systems"] = ["bm25", "bm25_plain"]
    params["compare"]["also"] = []
    params["health"]["cost"] = {}
    params["gate"]["rules"] = [r for r in params["gate"]["rules"] if r["rule"] != "seeds"]
    return params


def git_project(base: Path, params: dict) -> Path:
    """releval's code with ``params`` in a fresh git + DVC repository with the project's
    default local remote, committed."""
    copy_code(base)
    (base / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    subprocess.run(["git", "init", "-q"], cwd=base, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=base, check=True)
    shutil.copy(ROOT / ".dvc" / "config", base / ".dvc" / "config")
    shutil.copy(ROOT / ".dvcignore", base / ".dvcignore")
    subprocess.run(["git", "add", "-A"], cwd=base, check=True)
    subprocess.run([*GIT, "commit", "-qm", "project"], cwd=base, check=True)
    return base
