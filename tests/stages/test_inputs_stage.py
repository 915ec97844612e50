"""Stage inputs: pin() copies the params' inputs by content; the stage prints what it pinned."""

import json

import pytest
import yaml

from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import pin
from stages.common import main


def tables(folder):
    folder.mkdir()
    (folder / "documents.parquet").write_bytes(b"documents")
    (folder / "queries.parquet").write_bytes(b"queries")
    return folder


def test_run_copies_a_given_input_into_its_slot_once(tmp_path):
    tables(tmp_path / "mine")
    p = Params.model_validate({"prepare": {"source": "tables", "path": "mine"}})
    out = tmp_path / "input"
    result = pin(p, out, base=tmp_path)
    assert result == [{"key": "prepare.path", "slot": "prepare", "files": 2,
                              "copied": 2}]
    assert (out / "prepare/mine/queries.parquet").read_bytes() == b"queries"
    assert json.loads((out / "prepare/pinned.json").read_text()) == {"key": "prepare.path",
                                                                    "given": True}
    assert json.loads((out / "judgments/pinned.json").read_text())["given"] is False
    assert pin(p, out, base=tmp_path)[0]["copied"] == 0  # unchanged: nothing copied


def test_run_with_the_demo_pins_nothing_and_a_missing_input_names_its_key(tmp_path):
    assert pin(Params(), tmp_path / "input") == []
    missing = Params.model_validate({"prepare": {"source": "beir", "path": "nowhere"}})
    with pytest.raises(InputError, match="params:prepare.path: input not found"):
        pin(missing, tmp_path / "input", base=tmp_path)


@pytest.mark.parametrize("prepare,line", [
    ({"source": "tables", "path": "mine"}, "inputs: prepare.path pinned (2 files, 2 copied)"),
    ({}, "inputs: none given (demo data)"),
])
def test_main_prints_what_it_pinned(tmp_path, monkeypatch, capsys, prepare, line):
    tables(tmp_path / "mine")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"prepare": prepare}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RELEVAL_INPUT_BASE", raising=False)
    main("inputs", [])
    assert capsys.readouterr().out.strip() == line
    assert (tmp_path / "data/input/prepare/pinned.json").exists()
