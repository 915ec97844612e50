"""The offpolicy stage through its command (``python -m stages offpolicy``, as dvc.yaml runs
it) on pinned inputs: a reference log over another item set is refused, counted and named;
an error on the policy table names the user's files, never the pinned copies under
data/input/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from tests.stages.test_offpolicy_stage import logged

ROOT = Path(__file__).resolve().parents[2]


def stage(folder: Path, name: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "stages", name, "--params", "params.yaml"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def project(folder: Path, **offpolicy) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "params.yaml").write_text(yaml.safe_dump({"base": {"seed": 3}, "offpolicy": {
        "log": "log.csv", "resamples": 200, "min_ess": 50, "estimators": ["ips"],
        **offpolicy}}))
    pinned = stage(folder, "inputs")
    assert pinned.returncode == 0, pinned.stderr
    return folder


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "data/input" not in done.stderr
    return done.stderr.strip()


def test_a_reference_log_over_another_item_set_is_refused_and_counted(tmp_path):
    logged(tmp_path / "log.csv")
    ref = pd.read_csv(logged(tmp_path / "ref.csv", seed=2))
    ref["item_id"] = "x" + ref["item_id"].astype(str)  # another catalogue's ids
    ref.to_csv(tmp_path / "ref.csv", index=False)
    said = one_line(stage(project(tmp_path, reference="ref.csv"), "offpolicy"))
    assert said == ("error: ref.csv:line 2: none of its 6 items is among the log's 6 items "
                    "(the first here: item 'x1'): a log over another item set is no ground "
                    "truth for the candidate on this log (params offpolicy.reference)"), said
    assert not (tmp_path / "data" / "offpolicy" / "offpolicy.json").exists()


def test_a_reference_showing_some_items_the_log_never_shows_is_refused_with_the_count(
        tmp_path):
    logged(tmp_path / "log.csv")
    ref = pd.read_csv(logged(tmp_path / "ref.csv", seed=2))
    ref.loc[[4, 9], "item_id"] = 99
    ref.to_csv(tmp_path / "ref.csv", index=False)
    said = one_line(stage(project(tmp_path, reference="ref.csv"), "offpolicy"))
    assert said.startswith("error: ref.csv:line 6: 2 of its 600 rows (1 items) show items not "
                           "among the log's 6 items (the first here: item '99')"), said


def test_a_policy_table_error_names_the_users_files_not_the_pinned_copies(tmp_path):
    log = pd.read_csv(logged(tmp_path / "log.csv"))
    table = pd.DataFrame([(c, str(i), k, 1 / 6) for c in log["context_id"][:-1]
                          for i in range(6) for k in (1, 2)],
                         columns=["context_id", "item_id", "position", "probability"])
    table.to_csv(tmp_path / "policy.csv", index=False)
    said = one_line(stage(project(tmp_path, policy="policy.csv"), "offpolicy"))
    assert said == ("error: policy.csv: context_id 'c599' of the log (at line 601 of log.csv) "
                    "is not in the candidate policy (params offpolicy.policy)"), said


def test_a_reference_over_the_logs_items_is_ground_truth(tmp_path):
    logged(tmp_path / "log.csv")
    logged(tmp_path / "ref.csv", seed=2)
    done = stage(project(tmp_path, reference="ref.csv"), "offpolicy")
    assert done.returncode == 0, done.stderr
    assert "; reference 0." in done.stdout
