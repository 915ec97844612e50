"""The artifact catalog against dvc.yaml: every out and every path a command names is a
catalog entry (or a folder of them), and every entry a stage writes is among its outs."""

import re
import shlex
import subprocess
import sys
from fnmatch import fnmatch

import pytest
import yaml

from releval import artifacts
from tests.dag import ROOT

PLACEHOLDER = "${key}"  # a foreach stage's item, one folder per system


def _stages() -> dict[str, dict]:
    """dvc.yaml's stages, a foreach stage by its ``do`` body."""
    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    return {name: body.get("do", body) for name, body in doc.items()}


def _paths(entries: list) -> list[str]:
    return [next(iter(e)) if isinstance(e, dict) else e for e in entries or []]


def _outs(stage: dict) -> list[str]:
    return [p.replace(PLACEHOLDER, "*")
            for p in _paths(stage.get("outs")) + _paths(stage.get("metrics"))]


def _entry_or_folder(path: str) -> bool:
    """``path`` (``*`` for a placeholder) is an entry's path or a folder holding entries."""
    return any(fnmatch(path, a.pattern) or a.pattern == path
               or a.pattern.startswith(path.rstrip("/") + "/")
               for a in artifacts.CATALOG.values())


@pytest.fixture(scope="module")
def stages():
    return _stages()


def test_every_out_is_a_catalog_entry_or_a_folder_of_them(stages):
    unknown = {(name, out) for name, stage in stages.items() for out in _outs(stage)
               if not _entry_or_folder(out)}
    assert unknown == set()


def test_every_entry_a_stage_writes_is_among_its_outs(stages):
    assert {a.stage for a in artifacts.CATALOG.values()} - {None} <= set(stages)
    missing = {a.name for a in artifacts.CATALOG.values() if a.stage is not None
               and not any(fnmatch(out, a.pattern) or fnmatch(a.pattern, out)
                           or a.pattern.startswith(out + "/") for out in _outs(stages[a.stage]))}
    assert missing == set()


def test_every_data_dependency_is_in_the_catalog(stages):
    """A command names no path (a stage reads its inputs by catalog name); each data
    dependency is an entry, a folder of entries, or a foreach item's source
    (``${item.lexical}``)."""
    assert all(shlex.split(stage["cmd"])[:3] == ["python", "-m", "stages"]
               for stage in stages.values())
    named = {(name, re.sub(r"\$\{(key|item\.\w+)\}", "*", dep))
             for name, stage in stages.items() for dep in stage["deps"]
             if dep.startswith(("data/", "reports/"))}
    assert named and {(n, t) for n, t in named if not _entry_or_folder(t)} == set()


def test_names_and_lookups():
    entry = artifacts.get("compare.comparison")
    assert (entry.file, entry.format, entry.stage) == ("comparison.json", "json", "compare")
    assert str(artifacts.path("candidates.run", "/p", system="bm25")) == \
        "/p/data/candidates/bm25/run.parquet"
    assert artifacts.folder("raw") == "data/raw"
    assert artifacts.group_folder("fused") == "data/fused"
    assert artifacts.matching("data/fused/hybrid/run.parquet").name == "fused.run"
    assert artifacts.matching("data/nowhere.bin") is None
    with pytest.raises(KeyError, match="no artifact 'compare.nope'"):
        artifacts.get("compare.nope")


def test_each_path_is_written_once():
    paths = [a.path for a in artifacts.CATALOG.values()]
    assert len(paths) == len(set(paths))


def test_the_catalog_is_a_leaf():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, releval.artifacts; print(sorted(m for m in "
         "sys.modules if m.split('.')[0] in ('pandas', 'numpy', 'pydantic', 'releval')))"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert eval(loaded) == ["releval", "releval.artifacts"]
