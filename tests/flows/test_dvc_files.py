"""dvc.lock rewritten stage by stage (flows/dvc_files.py): the bytes DVC's own writer writes,
for real locks and for the values a lock can hold; installed, DVC's reproduce writes through
it and dvc.yaml keeps DVC's writer."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dvc.schema import COMPILED_LOCKFILE_SCHEMA, COMPILED_MULTI_STAGE_SCHEMA
from dvc.utils import strictyaml
from dvc.utils.serialize import YAMLFileCorruptedError
from dvc.utils.serialize._yaml import dumps_yaml, parse_yaml_for_update

from flows.dvc_files import load, parse, read, render

ROOT = Path(__file__).resolve().parents[2]


def _dvc(text: str) -> str:
    """What DVC writes back for a lock it read (its round-trip loader and dumper)."""
    return dumps_yaml(parse_yaml_for_update(text, "dvc.lock"))


def test_the_repositorys_lock_is_written_as_dvc_writes_it():
    text = (ROOT / "dvc.lock").read_text()
    assert render(read(text)) == _dvc(text) == text


def test_a_lock_parsed_by_entry_is_the_lock_parsed_whole():
    data = read((ROOT / "dvc.lock").read_text())
    for changed in (data, {**data, "stages": {**data["stages"], "gate": {"cmd": "echo"}}}):
        text = render(changed)
        assert parse(text) == read(text) == changed
        assert parse(text) is not parse(text)  # a copy for each caller
    bad = render({**data, "stages": {**data["stages"], "gate": {"deps": []}}})  # no cmd
    with pytest.raises(strictyaml.YAMLValidationError):
        parse(bad)
    head = "schema: '2.0'\nstages:\n"
    for other in ("stages:\n  a:\n    cmd: x\n",  # no schema line
                  head + "  a:\n    cmd: x\ndatasets:\n- name: d\n",  # another key after
                  head + "  a:\n    cmd: x\n  a:\n    cmd: y\n",  # a name twice
                  head + "  # a comment\n  a:\n    cmd: x\n"):
        assert parse(other) is None
    aliased = head + "  a:\n    cmd: &c x\n  b:\n    cmd: *c\n"
    with pytest.raises(YAMLFileCorruptedError):
        parse(aliased)  # refers to another entry: loaded whole by DVC's load instead


def test_loads_give_dvcs_data_and_errors(tmp_path):
    for name, schema in (("dvc.yaml", COMPILED_MULTI_STAGE_SCHEMA),
                         ("dvc.lock", COMPILED_LOCKFILE_SCHEMA)):
        path = str(ROOT / name)
        first = load(strictyaml.load, path, schema)
        assert first == strictyaml.load(path, schema)
        first[0].clear()  # the caller's copy: the next load is whole again
        assert load(strictyaml.load, path, schema) == strictyaml.load(path, schema)
    bad = tmp_path / "dvc.lock"
    bad.write_text("schema: '2.0'\nstages:\n  a:\n    cmd: &c x\n  b:\n    cmd: *c\n")
    assert load(strictyaml.load, str(bad), COMPILED_LOCKFILE_SCHEMA) == strictyaml.load(
        str(bad), COMPILED_LOCKFILE_SCHEMA)
    bad.write_text("schema: '2.0'\nstages:\n  a:\n    deps: []\n")
    with pytest.raises(strictyaml.YAMLValidationError):
        load(strictyaml.load, str(bad), COMPILED_LOCKFILE_SCHEMA)
    bad.write_text("stages: [\n")
    with pytest.raises(strictyaml.YAMLSyntaxError):
        load(strictyaml.load, str(bad), COMPILED_LOCKFILE_SCHEMA)


def test_every_kind_of_value_is_written_as_dvc_writes_it():
    entry = {"cmd": "python -m stages candidates --params params.yaml --system "
                    "a_system_with_a_long_name --raw data/raw --out data/candidates/x",
             "deps": [{"path": "data/raw/documents.parquet", "hash": "md5",
                       "md5": "0" * 32 + ".dir", "size": 12, "nfiles": 3}],
             "params": {"params.yaml": {
                 "a.none": None, "a.list": [None, 1, 2.5, 1e-05, 1e20, True, "yes", "",
                                            "1e-05", "a: b", "é", "~", "null", "012",
                                            "'q'", 'say "x": y', "two\nlines", " lead",
                                            "#c", [], {}],
                 "a.nested": {"cuts": None, "deep": {"x": [{"p": None}]}}}},
             "outs": [{"path": "data/x.json", "hash": "md5", "md5": "1" * 32, "size": 0}]}
    data = {"schema": "2.0", "stages": {"one": entry,
                                         "two@x": {**copy.deepcopy(entry), "cmd": "echo"},
                                         "three": {"cmd": "x" * 300}}}
    text = _dvc(dumps_yaml(data))
    assert render(read(text)) == text
    assert render(data) == dumps_yaml(data)
    again = render({**data, "stages": {**data["stages"], "two@x": {"cmd": "changed"}}})
    assert again == dumps_yaml({**data, "stages": {**data["stages"],
                                                   "two@x": {"cmd": "changed"}}})


def test_other_shapes_are_dumped_whole():
    shared = {"path": "x", "md5": "0"}
    for data in ({}, {"schema": "2.0"}, {"schema": "2.0", "stages": {}},
                 {"schema": "2.0", "stages": {"a": {"deps": [shared]}, "b": {"outs": [shared]}}},
                 {"schema": "2.0", "stages": {"a": {"cmd": "x"}}, "datasets": [{"n": 1}]}):
        assert render(data) == dumps_yaml(data)


SCRIPT = textwrap.dedent("""
    import os, sys
    from dvc.repo import Repo
    from dvc.schema import COMPILED_LOCKFILE_SCHEMA
    from dvc.utils import strictyaml
    from flows import dvc_files
    dvc_load = strictyaml.load
    dvc_files.install()
    with Repo(".") as repo:
        for stage in ("first", "second"):
            repo.reproduce(stage, single_item=True)
        print(sorted(repo.status()))
    assert dvc_files._LAST and dvc_files._PARSED  # the lock as written, read back by entry
    assert strictyaml.load("dvc.lock", COMPILED_LOCKFILE_SCHEMA) == dvc_load(
        "dvc.lock", COMPILED_LOCKFILE_SCHEMA)
""")


def test_reproduce_writes_the_lock_through_it(tmp_path):
    (tmp_path / "dvc.yaml").write_text(textwrap.dedent("""\
        # the user's comment stays
        stages:
          first:
            cmd: python -c "open('a.txt', 'w').write('a')"
            outs: [a.txt]
          second:
            cmd: python -c "open('b.txt', 'w').write(open('a.txt').read() * 2)"
            deps: [a.txt]
            outs: [b.txt]
        """))
    before = (tmp_path / "dvc.yaml").read_text()
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=tmp_path,
                   check=True)
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": str(
                              Path(sys.executable).parent)}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("[]")  # nothing out of date
    lock = (tmp_path / "dvc.lock").read_text()
    assert _dvc(lock) == lock
    assert set(read(lock)["stages"]) == {"first", "second"}
    assert (tmp_path / "dvc.yaml").read_text() == before
