"""`releval reproduce` refusing a receipt it cannot re-run, in its own words: one line on
stderr naming the receipt, what is missing and what to do, exit status 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from releval.project.receipt import digest, write
from tests.projects import ROOT, git_project

FOLDER_MD5 = "0123456789abcdef0123456789abcdef.dir"
EMPTY_MD5 = "fedcba9876543210fedcba9876543210.dir"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, str]:
    root = git_project(tmp_path_factory.mktemp("project"),
                       yaml.safe_load((ROOT / "params.yaml").read_text()))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                          text=True, check=True).stdout.strip()
    return root, head


def _receipt(root: Path, commit: str, run: dict) -> Path:
    r = {"code": {"commit": commit, "dirty": False},
         "params": {"values": yaml.safe_load((root / "params.yaml").read_text())},
         "inputs": {}, "outputs": {}, "metrics": {}, "results": {}}
    path = root / "kept" / f"receipt-{commit[:7]}.json"
    write(path, {"receipt": r, "sha256": digest(r), "run": run})
    return path


def reproduce(root: Path, receipt: Path, *flags: str) -> tuple[str, list[str]]:
    done = subprocess.run([sys.executable, "-m", "releval.cli", "reproduce",
                           str(receipt.relative_to(root)), *flags], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr, [line for line in done.stderr.splitlines() if line.strip()]


def test_a_receipt_from_another_repository_names_its_commit(project):
    root, _ = project
    other = "1f" * 20
    receipt = _receipt(root, other, {})
    _, lines = reproduce(root, receipt)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: kept/receipt-{other[:7]}.json: the run's commit "
                               f"{other} is not in this repository"), lines[0]
    assert f"git fetch <remote> {other}" in lines[0] and "invalid reference" not in lines[0]


def test_pinned_inputs_gone_from_cache_and_remote_are_named_by_key_and_digest(project):
    root, head = project
    receipt = _receipt(root, head, {"inputs_lock": {
        "cmd": "python -m stages.inputs --params params.yaml --out data/input",
        "outs": [{"path": "data/input/fixture", "hash": "md5", "md5": FOLDER_MD5,
                  "size": 10, "nfiles": 1},
                 {"path": "data/input/adjudicator", "hash": "md5", "md5": EMPTY_MD5,
                  "size": 10, "nfiles": 1}]}})
    _, lines = reproduce(root, receipt, "--pinned")
    assert len(lines) == 1, lines
    # each input by what it is: its params key, where its copy came from, its slot and digest
    assert lines[0].startswith(
        f"error: kept/receipt-{head[:7]}.json: the run's pinned inputs are in neither the DVC "
        "cache nor the default remote: fixture.path, copied from examples/fixture as the "
        f"run's params give it (data/input/fixture, md5 {FOLDER_MD5}); "
        "judgments.adjudicator, not given in the run's params: its slot holds only "
        f"pinned.json (data/input/adjudicator, md5 {EMPTY_MD5}); `dvc push` them"), lines[0]
    assert "no params key" not in lines[0]
