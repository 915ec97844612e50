"""An empty run file is refused in one line by ``releval metrics`` in every format (trec_eval
refuses an empty results file), never scored 0 and never an internal error."""

import pytest
from typer.testing import CliRunner

from releval.cli import app


@pytest.mark.parametrize("fmt", ["table", "trec", "json", "csv"])
def test_an_empty_run_is_refused_in_one_line(tmp_path, fmt):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "empty.run").write_text("")
    done = CliRunner().invoke(app, ["metrics", str(tmp_path / "q.txt"),
                                    str(tmp_path / "empty.run"), "--format", fmt])
    assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.output
    assert "empty.run" in done.stderr and "no ranked document" in done.stderr
    assert "internal error" not in done.output
