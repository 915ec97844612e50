"""``releval drift A B`` on a real project: a git repository with DVC whose second revision's
corpus has one added document, the pipeline's stages up to the qrels run at each."""

import json
import os
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dvc.repo import Repo
from typer.testing import CliRunner

from releval.cli import app
from releval.project.receipt import digest, lock_digests
from tests.projects import SELFTEST, copy_code, lexical_only

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.email=ci@releval", "-c", "user.name=releval"]
WORDS = ("anchor beacon canyon dagger ember falcon glacier harbor island jungle kettle lantern "
         "meadow nectar orchard pebble quarry raven saddle timber umbrella valley walnut yonder"
         ).split()
SPAM = {"_id": "spam", "title": "anchor beacon", "text": "anchor beacon " * 4}  # outranks d0
STAGES = ("inputs", "prepare", "split", "candidates@bm25", "candidates@bm25_plain", "selftest",
          "pool", "judgments")


def beir(folder: Path) -> Path:
    """12 queries of two words each, each judged relevant to the one document holding them
    (q0..q5 test, q6..q11 dev), for each a document holding its first word only (so every
    ranked list has two rows, as the self-test's split-files relation needs), and 8
    unrelated documents."""
    pairs = [WORDS[2 * i: 2 * i + 2] for i in range(12)]
    docs = [{"_id": f"d{i}", "title": "", "text": f"{a} {b} notes"} for i, (a, b) in
            enumerate(pairs)]
    docs += [{"_id": f"f{i}", "title": "", "text": f"filler page {i}"} for i in range(8)]
    docs += [{"_id": f"p{i}", "title": "", "text": f"{a} page"} for i, (a, _) in enumerate(pairs)]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"_id": f"q{i}", "text": f"{a} {b}"}) + "\n" for i, (a, b) in enumerate(pairs)))
    for name, first in (("test", 0), ("dev", 6)):
        (folder / "qrels" / f"{name}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
            f"q{i}\td{i}\t1\n" for i in range(first, first + 6)))
    return folder


def sh(*cmd: str, cwd: Path) -> str:
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def repro(root: Path) -> None:
    """``STAGES`` by their dvc.yaml commands, in this process (a process each would take most
    of the test's time), then the qrels' stage and those upstream of it recorded in dvc.lock
    and the cache as ``dvc repro`` records them (``dvc commit``)."""
    with Repo(str(root)) as repo:
        commands = {s.name: shlex.split(s.cmd) for s in repo.index.stages}
    for name in STAGES:
        argv = commands[name]
        at = argv.index("-m") + 1
        with pytest.MonkeyPatch.context() as env:
            env.chdir(root)
            env.setattr(sys, "argv", argv[at:])
            runpy.run_module(argv[at], run_name="__main__", alter_sys=False)
    sh(sys.executable, "-m", "dvc", "commit", "-f", "-q", "--with-deps", "judgments", cwd=root)


def commit(root: Path, message: str) -> str:
    sh("git", "add", "-A", cwd=root)
    sh(*GIT, "commit", "-qm", message, cwd=root)
    return sh("git", "rev-parse", "HEAD", cwd=root).strip()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """Revision A: the pipeline up to the qrels over the corpus; revision B: the same after
    one document was added to the corpus (a folder outside the project, pinned by DVC)."""
    base = tmp_path_factory.mktemp("drift")
    data, root = beir(base / "corpus"), base / "project"
    root.mkdir()
    copy_code(root)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["prepare"] |= {"source": "beir", "path": str(data)}
    params["split"]["method"] = "given"
    params = lexical_only(params)  # two lexical routes: no model to load
    params["candidates"]["depth"] = 10
    params["selftest"] = SELFTEST | {"trials": 10}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    sh("git", "init", "-q", cwd=root)
    sh(sys.executable, "-m", "dvc", "init", "-q", cwd=root)
    shutil.copy(ROOT / ".dvcignore", root / ".dvcignore")
    repro(root)
    rev_a = commit(root, "A")
    with (data / "corpus.jsonl").open("a") as corpus:
        corpus.write(json.dumps(SPAM) + "\n")
    repro(root)
    rev_b = commit(root, "B: one more document")
    return root, rev_a, rev_b


def drift(root: Path, *args: str, monkeypatch):
    monkeypatch.chdir(root)
    return CliRunner().invoke(app, ["drift", *args])


def receipt(root: Path, rev: str, edit=lambda r: None) -> str:
    """A receipt of the run at ``rev`` as the flow writes one (its code and params, the
    lock's digests), after ``edit``."""
    lock = yaml.safe_load(sh("git", "show", f"{rev}:dvc.lock", cwd=root))
    inputs, outputs, _ = lock_digests(lock)
    doc = {"code": {"commit": rev, "dirty": False, "diff_sha256": None},
           "params": {"values": yaml.safe_load((root / "params.yaml").read_text())},
           "inputs": inputs, "outputs": outputs}
    edit(doc)
    path = root / "reports" / f"receipt-{rev[:7]}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"receipt": doc, "sha256": digest(doc), "run": {}}))
    return str(path.relative_to(root))


def test_drift_names_the_added_document_that_moved_ndcg(project, monkeypatch):
    root, a, b = project
    result = drift(root, a, b, monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "drift of hybrid nDCG@10 on the test split" in out
    assert "changed documents: 1 added, 0 removed, 0 modified" in out
    assert "reverted one by one: 3 rebuilds for 1 change" in out  # A, B, B less spam
    [row] = [line for line in out.splitlines() if "spam" in line]
    assert "added" in row and "-0.0615" in row and "yes" in row  # q0: d0 first → second
    assert "cause found: reverting it restores A's figure" in out


def test_two_receipts_stand_for_their_revisions(project, monkeypatch):
    root, a, b = project
    result = drift(root, receipt(root, a), receipt(root, b), "--system", "bm25",
                   monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert "drift of bm25 nDCG@10" in result.stdout and "spam" in result.stdout


@pytest.mark.parametrize(("edit", "named"), [
    (lambda r: r["inputs"].update({"releval/retrieval/bm25.py": "0" * 32}),
     "code changed from A to B (releval/retrieval/bm25.py (stages split, candidates@bm25, "
     "candidates@bm25_plain)): drift diagnoses a corpus change"),
    (lambda r: r["params"]["values"]["candidates"]["systems"]["bm25"].update(k1=2.0),
     "params changed from A to B (candidates.systems.bm25.k1: 1.2 → 2.0)"),
])
def test_a_code_or_params_change_is_refused_naming_it(project, monkeypatch, edit, named):
    root, a, b = project
    result = drift(root, a, receipt(root, b, edit), monkeypatch=monkeypatch)
    assert result.exit_code == 2, result.output
    assert named in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_unmoved_figure_exits_1_and_bad_input_2(project, monkeypatch):
    root, a, b = project
    same = drift(root, a, a, monkeypatch=monkeypatch)
    assert same.exit_code == 1, same.output
    assert "the figure did not move" in same.stdout
    for args, said in (([a, "no-such-revision"],
                        "no-such-revision: neither a receipt file nor a git revision"),
                       ([a, b, "--measure", "nDCG@x"], "unknown measure 'nDCG@x'"),
                       ([a, b, "--system", "dense"], "no system 'dense'"),
                       ([a, receipt(root, b, lambda r: r["outputs"].update(
                           {"data/raw/documents.parquet": "ab" * 16}))],
                        f"documents.parquet@reports/receipt-{b[:7]}.json: not in the DVC cache")):
        bad = drift(root, *args, monkeypatch=monkeypatch)
        assert bad.exit_code == 2, bad.output
        assert said in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
