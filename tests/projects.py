"""A copy of releval's code and DAG in a fresh folder, for the tests that run the pipeline's
stages in a project of their own."""

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("releval", "stages", "flows", "examples")  # examples: params name examples/fixture
# a test project's self-test: every relation, but fewer trials, and the differential against
# the oracle that needs no compile step (tests/selftest compares every oracle)
SELFTEST = {"trials": 20, "oracles": ["pytrec_eval"], "cases": 90}


def copy_code(dest: Path) -> Path:
    """The code folders (without bytecode), the examples (the pinned fixture), dvc.yaml and
    .gitignore under ``dest``."""
    for item in CODE:
        shutil.copytree(ROOT / item, dest / item, ignore=shutil.ignore_patterns("__pycache__"))
    for item in ("dvc.yaml", ".gitignore"):
        shutil.copy(ROOT / item, dest)
    return dest
