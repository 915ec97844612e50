"""``releval run`` on a params file that leaves every key with a default out: the run writes
the defaults DVC reads (``releval.project.params_file.complete``) and the whole pipeline runs.
tests/test_params.py holds ``complete`` itself."""

import subprocess
import sys

import pytest
import yaml

from tests.flows.test_pipeline import TINY, make_project


@pytest.mark.slow  # the whole pipeline on the demo data; in `make test-all`
def test_a_params_file_of_only_the_keys_it_changes_runs_the_whole_pipeline(tmp_path):
    root = make_project(tmp_path / "project")
    (root / "params.yaml").write_text(yaml.safe_dump(TINY, sort_keys=False))
    done = subprocess.run([sys.executable, "-m", "releval.cli", "run"], cwd=root,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "params.yaml: wrote the defaults DVC reads of " in done.stderr
    written = yaml.safe_load((root / "params.yaml").read_text())
    assert written["prepare"]["n_docs"] == TINY["prepare"]["n_docs"]  # the user's values kept
    assert {"split", "gate", "fusion", "compare"} <= set(written)
    assert (root / "data/gate/decision.json").exists() and (root / "reports/receipt.json").exists()
