"""README's own-data commands, run as written: from a folder beside ``../shared``, with the
installed ``releval`` on PATH. The ``releval init`` lines run in the default suite; the
whole block (``releval run --gate`` on CACM included) is a slow check."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from releval.params import parse_params

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MARK = "<!-- tests/test_readme.py runs this block as written"
RUNS_MARK = "<!-- tests/test_readme.py runs this block as written too (the runs-only road)"


def block(mark: str = MARK) -> list[str]:
    """The commands of the bash block under README's ``mark``."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(mark):]
    body = re.search(r"```bash\n(.*?)```", after, re.S).group(1)
    return [line for line in body.splitlines() if line.strip()]


def where(tmp_path: Path) -> Path:
    """A working folder with ``../shared`` beside it and the checkout's ``examples/`` in it,
    as in a clone."""
    (tmp_path / "shared").symlink_to(SHARED)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "examples").symlink_to(ROOT / "examples")
    return tmp_path / "work"


def shell(cwd: Path, command: str, timeout: int) -> subprocess.CompletedProcess:
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_the_block_is_an_init_then_a_gated_run():
    lines = block()
    assert lines[0].startswith("releval init ../cacm-eval --corpus ../shared/data/cacm")
    assert lines[-1] == "cd ../cacm-eval && releval run --gate"


def test_the_init_line_makes_a_project_whose_params_fit_cacm(tmp_path):
    cwd = where(tmp_path)
    done = shell(cwd, block()[0], timeout=300)
    assert done.returncode == 0, done.stderr
    project = tmp_path / "cacm-eval"
    p = parse_params(yaml.safe_load((project / "params.yaml").read_text()), "params.yaml")
    assert (project / p.prepare.path).resolve() == (SHARED / "data" / "cacm").resolve()
    assert "next: cd ../cacm-eval && releval run --gate" in done.stderr


@pytest.mark.slow
def test_the_whole_block_runs_and_gates_cacm_without_a_judged_rule(tmp_path):
    """CACM's qrels are positive-only: init writes no ``judged`` rule (Judged@10 would be
    P@10 there), so the gate decides on the systems alone and hybrid passes against bm25."""
    cwd = where(tmp_path)
    done = shell(cwd, " && ".join(block()), timeout=3000)
    decision = yaml.safe_load((tmp_path / "cacm-eval" / "data/gate/decision.json").read_text())
    failed = [o["name"] for o in decision["rules"] if not o["passed"]]
    assert not any(o["rule"] == "judged" for o in decision["rules"])
    assert done.returncode == 0 and failed == [], done.stderr


@pytest.mark.slow  # about a minute: in `make test-slow`, which CI runs
def test_the_runs_only_block_decides_over_every_run_and_fails_nothing_about_documents(
        tmp_path):
    """From qrels and three run files, no corpus: the gate fails only on the pair's own
    regression; the decision holds the family of all three runs with its groups, the run cut
    short counted missing; no rule about documents, latency or routes failed."""
    lines = block(RUNS_MARK)
    assert "--qrels" in lines[0] and lines[-1] == "cd ../cranfield-runs && releval run --gate"
    done = shell(where(tmp_path), " && ".join(lines), timeout=1200)
    project = tmp_path / "cranfield-runs"
    decision = json.loads((project / "data/gate/decision.json").read_text())
    failed = [o["name"] for o in decision["rules"] if not o["passed"]]
    assert done.returncode == 1 and failed == ["no_regression nDCG@10 @ all"], done.stderr
    stages = yaml.safe_load((project / "dvc.yaml").read_text())["stages"]
    assert "fuse" not in stages and "candidates" in stages
    comparison = json.loads((project / "data/compare/comparison.json").read_text())
    family = comparison["family"]
    assert family["systems"] == ["bm25", "tuned", "flat"]
    assert family["query_set"]["missing"] == {"bm25": 0, "tuned": 0, "flat": 25}
    board = family["measures"][0]["leaderboard"]
    assert [r["system"] for r in board] == ["bm25", "tuned", "flat"]
    assert all(r["group"] for r in board)
    summary = json.loads((project / "data/evaluate/summary.json").read_text())
    assert summary["answered"]["flat"]["missing"] == 25
    assert "missing" in done.stdout and "groups" in done.stdout
