"""A project's pipeline outputs at a git revision, or of a kept run, read from git and the DVC
cache (nothing runs).

``revision(root, ref)``: ``ref`` is a receipt file (``reports/receipt.json``, one of
``reports/runs/``) or a git revision. At a git revision: its params.yaml and dvc.lock (``git
show``). From a receipt: the params and output digests the run recorded (two runs of one
commit over a corpus changed in place stay apart), and the digests it recorded of the code
each stage depends on (which code that is, the dvc.lock of the receipt's commit lists).
``Revision.table(path)`` reads a DVC-tracked output by its md5 from the DVC cache (DVC 3's
layout ``<cache>/files/md5/ab/cdef…``, the folder ``dvc cache dir`` names); one that is not
there is an InputError saying how to fetch it. ``receipt_commit`` is a receipt's commit, refused
naming the receipt when this repository does not have it; ``cached`` whether an object (a
file's, or a folder's and all it lists) is whole in the cache.

``code_changes(a, b, stages)``: where the code of ``stages`` differs, a stage's code being
its dvc.lock ``deps`` that no stage produces.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from releval.data.readers import read_parquet
from releval.errors import InputError, reading
from releval.project import receipt


def _git(root: Path, *args: str, rule: str, source: str) -> str:
    """git's output; InputError ``rule`` (and git's last line of complaint) when it fails."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if done.returncode:
        said = done.stderr.strip().splitlines()
        raise InputError(rule + (f" ({said[-1]})" if said else ""), source)
    return done.stdout


@functools.cache
def cache_dir(root: Path) -> Path:
    """The DVC cache folder of the project at ``root`` (``dvc cache dir``)."""
    done = subprocess.run([sys.executable, "-m", "dvc", "cache", "dir"], cwd=root,
                          capture_output=True, text=True)
    if done.returncode:
        raise InputError("no DVC cache here (`dvc cache dir` failed)", str(root))
    return Path(done.stdout.strip())


def stage_code(lock: dict) -> dict[str, dict[str, str | None]]:
    """Stage -> its code dependencies -> md5, from a parsed dvc.lock: the deps that are no
    stage's output, nor inside or around one."""
    stages = lock.get("stages", {})
    outs = {o["path"] for st in stages.values() for o in st.get("outs", [])}

    def derived(path: str) -> bool:
        return any(path == o or path.startswith(o + "/") or o.startswith(path + "/")
                   for o in outs)

    return {name: {d["path"]: d.get("md5") for d in st.get("deps", []) if not derived(d["path"])}
            for name, st in stages.items()}


@dataclass(frozen=True)
class Revision:
    """One side of a comparison: ``ref`` as given, its ``commit``, its raw ``params``, per
    stage the md5 of each ``code`` dependency, the md5 of each DVC-tracked ``outputs`` path,
    and the DVC ``cache`` folder."""

    ref: str
    commit: str
    params: dict
    code: dict[str, dict[str, str | None]]
    outputs: dict[str, str | None]
    cache: Path

    def table(self, path: str) -> pd.DataFrame:
        """The parquet output ``path`` as it was at this revision."""
        where = f"{path}@{self.ref}"
        md5 = self.outputs.get(path)
        if not md5:
            raise InputError("not among the outputs DVC recorded there (run the pipeline at "
                             "that revision)", where)
        file = cache_file(self.cache, md5)
        if not file.is_file():
            raise InputError(f"not in the DVC cache (md5 {md5}); fetch it with `dvc fetch "
                             "--all-commits` or `dvc pull`", where)
        frame = read_parquet(file)
        frame.attrs["source"] = where
        return frame


def cache_file(cache: Path, md5: str) -> Path:
    """Where DVC 3 keeps the object ``md5`` in the cache folder ``cache``."""
    return cache / "files" / "md5" / md5[:2] / md5[2:]


def cached(cache: Path, md5: str) -> bool:
    """Whether the object ``md5`` is whole in the cache: a file's, or a folder's (``….dir``)
    listing and every file it lists."""
    file = cache_file(cache, md5)
    if not md5.endswith(".dir"):
        return file.is_file()
    try:
        listed = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return all(cache_file(cache, entry["md5"]).is_file() for entry in listed)


def _lock(root: Path, commit: str, ref: str) -> dict:
    text = _git(root, "show", f"{commit}:dvc.lock", rule="no dvc.lock at this revision",
                source=ref)
    with reading(f"dvc.lock@{ref}"):
        return yaml.safe_load(text) or {}


def receipt_commit(root: Path, doc: dict, path: Path) -> str:
    """The commit a receipt ``doc`` (read from ``path``) ran; InputError naming the receipt
    when it names none, or when the repository at ``root`` does not have it (what to do:
    fetch it, or work in the repository that made the run)."""
    commit = doc["receipt"]["code"].get("commit")
    if not commit:
        raise InputError("the receipt names no git commit: the run was not in a git "
                         "repository", str(path))
    known = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=root,
                           capture_output=True)
    if known.returncode:
        raise InputError(f"the run's commit {commit} is not in this repository ({root}): "
                         f"fetch it (git fetch <remote> {commit}) or run this in the "
                         "repository that made the run", str(path))
    return commit


def _from_receipt(root: Path, path: Path, ref: str) -> Revision:
    doc = receipt.read(path, ("code.commit", "params.values", "inputs", "outputs"))
    commit, r = receipt_commit(root, doc, path), doc["receipt"]
    code = {stage: {p: r["inputs"].get(p) for p in deps}
            for stage, deps in stage_code(_lock(root, commit, ref)).items()}
    return Revision(ref, commit, r["params"]["values"], code, dict(r["outputs"]),
                    cache_dir(root))


def _from_git(root: Path, ref: str) -> Revision:
    commit = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}",
                  rule="neither a receipt file nor a git revision", source=ref).strip()
    lock = _lock(root, commit, ref)
    text = _git(root, "show", f"{commit}:params.yaml", rule="no params.yaml at this revision",
                source=ref)
    with reading(f"params.yaml@{ref}"):
        params = yaml.safe_load(text) or {}
    outputs = {o["path"]: o.get("md5") for st in lock.get("stages", {}).values()
               for o in st.get("outs", [])}
    return Revision(ref, commit, params, stage_code(lock), outputs, cache_dir(root))


def revision(root: Path, ref: str) -> Revision:
    """``ref`` (a receipt file, else a git revision) in the project at ``root``."""
    path = root / ref
    return _from_receipt(root, path, ref) if path.is_file() else _from_git(root, ref)


def code_changes(a: Revision, b: Revision, stages: list[str]) -> list[str]:
    """Where the code of ``stages`` differs: "stage S is in dvc.lock at A only" (or B), and
    each code dependency whose md5 differs, "path (stages S, T)"; [] when it is the same."""
    only = [f"stage {s} is in dvc.lock at {'A' if s in a.code else 'B'} only" for s in stages
            if (s in a.code) != (s in b.code)]
    differ: dict[str, list[str]] = {}
    for stage in (s for s in stages if s in a.code and s in b.code):
        deps_a, deps_b = a.code[stage], b.code[stage]
        for path in sorted(set(deps_a) | set(deps_b)):
            if deps_a.get(path) != deps_b.get(path):
                differ.setdefault(path, []).append(stage)
    return only + [f"{path} (stage{'s' if len(st) > 1 else ''} {', '.join(st)})"
                   for path, st in sorted(differ.items())]
