"""A run whose reports/ folder cannot hold its log ends in one line naming the folder and the
cause, exit status 2, no traceback: at once when the log cannot be opened (a read-only
folder, a file where the folder belongs), at the end when it stops taking writes (a full
disk), the stage outputs already written kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEVAL = Path(sys.executable).with_name("releval")


@pytest.fixture
def project(tmp_path) -> Path:
    """A project of two team runs over three judged queries (releval init --qrels)."""
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 0\n2 0 d3 1\n3 0 d2 1\n")
    (tmp_path / "a.trec").write_text("1 Q0 d1 1 2 a\n2 Q0 d3 1 2 a\n3 Q0 d2 1 1 a\n")
    (tmp_path / "b.trec").write_text("1 Q0 d2 1 2 b\n2 Q0 d1 1 2 b\n3 Q0 d4 1 1 b\n")
    made = subprocess.run([str(RELEVAL), "init", "proj", "--qrels", "qrels.txt",
                           "--run", "a=a.trec", "--run", "b=b.trec"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    return tmp_path / "proj"


def run(project: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(RELEVAL), "run"], cwd=project, capture_output=True, text=True,
                          timeout=600)


def one_line(done: subprocess.CompletedProcess, cause: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr.splitlines() == [
        f"error: reports: the run's log run.log cannot be written there ({cause}); make the "
        "folder writable (or free the disk) and run again"], done.stderr


def test_reports_a_file_where_the_folder_belongs(project):
    (project / "reports").write_text("not a folder\n")
    one_line(run(project), "it is a file, not a folder")
    assert (project / "reports").read_text() == "not a folder\n"  # left as it was


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_reports_folder(project):
    (project / "reports").mkdir()
    (project / "reports").chmod(0o555)
    try:
        one_line(run(project), "Permission denied")
    finally:
        (project / "reports").chmod(0o755)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a full disk)")
def test_a_log_that_stops_taking_writes_ends_the_run_after_the_stages(tmp_path):
    """The console's sink on a full disk (reports/run.log is /dev/full): what the stages
    print is drained, not blocked on, and the run ends in the one line."""
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "run.log").symlink_to("/dev/full")
    script = ("from pathlib import Path\nfrom flows.console import quiet\n"
              "with quiet(Path('reports/run.log')):\n"
              "    for _ in range(50):\n        print('x' * 10_000, flush=True)\n"
              "Path('kept').write_text('after')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    one_line(done, "No space left on device")
    assert not (tmp_path / "kept").exists()  # the run ended there
