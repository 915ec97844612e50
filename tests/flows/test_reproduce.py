"""README's reproduction promise as a new user meets it: the demo in a fresh clone, then
`releval reproduce`. (Reproducing a scheduled run from its pinned inputs, and one whose input
changed in place: tests/flows/test_schedule.py.)"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
