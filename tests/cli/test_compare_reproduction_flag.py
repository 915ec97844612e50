"""``releval compare ORIGINAL REPRODUCED --qrels Q --reproduction`` through the command: an
identical reproduction reads RMSE 0, KTU 1, RBO 1; a wrong file count is one line, exit 2."""

import json

from typer.testing import CliRunner

from releval.cli import app


def test_an_identical_reproduction_and_a_wrong_file_count(tmp_path):
    (tmp_path / "q.txt").write_text("".join(f"q{q} 0 d{d} {int(d < 2)}\n"
                                            for q in range(5) for d in range(6)))
    run = "".join(f"q{q} Q0 d{d} {r + 1} {9 - r} x\n" for q in range(5)
                  for r, d in enumerate([3, 0, 5, 1, 2, 4]))
    for name in ("a.run", "b.run"):
        (tmp_path / name).write_text(run)
    args = ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
            str(tmp_path / "q.txt"), "--reproduction"]
    done = CliRunner().invoke(app, [*args, "--format", "json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert {r["value"] for r in doc["rmse"]} == {0.0}
    assert {r["measure"]: r["value"] for r in doc["order"]} == {"KTU": 1.0, "RBO": 1.0}
    three = CliRunner().invoke(app, [*args, str(tmp_path / "a.run")])
    assert three.exit_code == 2 and three.stderr.count("\n") == 1
