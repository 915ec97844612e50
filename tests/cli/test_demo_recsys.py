"""``releval demo --recsys`` in a project made by ``releval init`` (no examples/ folder of its
own) runs the shipped recommendation example."""

from pathlib import Path

from typer.testing import CliRunner

from releval.cli import app
from releval.cli import project as commands
from releval.project import template


def test_demo_recsys_in_an_initialised_project_takes_the_shipped_example(tmp_path, monkeypatch):
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / template.CODE_FILE).parent.mkdir(parents=True)
    (tmp_path / template.CODE_FILE).write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(commands, "_require", lambda extras, command: None)
    ran = []
    monkeypatch.setattr(commands, "_run_flow",
                        lambda params, overrides, verbose, command: ran.append(params) or 3)
    result = CliRunner().invoke(app, ["demo", "--recsys"])
    assert result.exit_code == 3
    assert ran == [template.root() / commands.RECSYS_DEMO] and Path(ran[0]).is_file()
