"""README's own-data commands, run as written: from a folder beside ``../shared``, with the
installed ``releval`` on PATH. The ``releval init`` lines run in the default suite; the
whole block (``releval run --gate`` on CACM included) is a slow check."""

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


def block() -> list[str]:
    """The commands of the bash block under README's marker."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(MARK):]
    body = re.search(r"```bash\n(.*?)```", after, re.S).group(1)
    return [line for line in body.splitlines() if line.strip()]


def where(tmp_path: Path) -> Path:
    """A working folder with ``../shared`` beside it, as in a clone."""
    (tmp_path / "shared").symlink_to(SHARED)
    (tmp_path / "work").mkdir()
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
def test_the_whole_block_runs_and_fails_only_on_cacms_own_judgments(tmp_path):
    cwd = where(tmp_path)
    done = shell(cwd, " && ".join(block()), timeout=3000)
    decision = yaml.safe_load((tmp_path / "cacm-eval" / "data/gate/decision.json").read_text())
    failed = [o["name"] for o in decision["rules"] if not o["passed"]]
    assert done.returncode == 1 and failed == ["judged Judged@10"], done.stderr
