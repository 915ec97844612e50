"""Inputs from outside the pipeline, pinned by content under ``data/input/``.

Every path a user gives in params (a BEIR folder or folder of tables, a runs-only project's
qrels and queries, the judges' files, an adjudicator's file, an automatic judge's labels, a
reviewed worksheet, an external system's run, the logged bandit feedback with the candidate
policy's table and the reference log) is copied by the ``inputs`` stage into its own slot,
``data/input/<slot>/<name>``,
which DVC tracks as an output: its content digest, not the path's name, decides whether
later stages re-run, and the copy is kept in the DVC cache (and remote) so a past run's
inputs can be restored. Stages read the pinned copy (``pinned``), never the user's path.
Paths inside the project's ``data/`` folder are pipeline outputs (the demo's simulated team
run): DVC already pins them, so they are read in place.

Each slot holds ``pinned.json`` (the params key and whether a path was given) beside the
copy, so a slot is never an empty folder. A stage's error on a pinned copy is reported on
the user's own path under its params key (``in_users_words``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from releval import artifacts
from releval.errors import InputError
from releval.params import Params

INPUT_DIR = Path(artifacts.folder("input"))
PIPELINE_DATA = INPUT_DIR.parent
MANIFEST = "pinned.json"
BASE_ENV = "RELEVAL_INPUT_BASE"  # relative input paths resolve from here (default: cwd)


@dataclass(frozen=True)
class Input:
    """One pinned input: its slot under data/input/, the params key naming it, its path."""

    slot: str
    key: str
    path: str | None

    @property
    def external(self) -> bool:
        """Given, and outside the pipeline's data/ (so it is copied into its slot)."""
        return self.path is not None and not _in_pipeline(self.path)


GENERATED_SOURCES = ("demo", "recsys_demo")  # prepare.source values that read no files

# params key -> (slot, the path it names for these params, or None when not used)
FIXED: dict[str, tuple[str, Callable[[Params], str | None]]] = {
    "prepare.path": ("prepare", lambda p: p.prepare.path
                     if p.prepare.source not in GENERATED_SOURCES else None),
    "judgments.files": ("judgments", lambda p: p.judgments.files
                        if p.judges_source == "files" else None),
    "judgments.adjudicator": ("adjudicator", lambda p: p.judgments.adjudicator),
    "judgments.automatic": ("automatic", lambda p: p.judgments.automatic.labels
                                   if p.judgments.automatic else None),
    "failures.review": ("review", lambda p: p.failures.review),
    "fixture.path": ("fixture", lambda p: p.fixture.path),
    "offpolicy.log": ("logged", lambda p: p.offpolicy.log),
    "offpolicy.policy": ("policy", lambda p: p.offpolicy.table),
    "offpolicy.reference": ("reference", lambda p: p.offpolicy.reference),
}
# a project without a corpus (prepare.source runs) only: its dvc.yaml, fitted to its params,
# declares these slots (``releval.project.template.fitted``); the shipped DAG does not
RUNS_ONLY: dict[str, tuple[str, Callable[[Params], str | None]]] = {
    "prepare.qrels": ("qrels", lambda p: p.prepare.qrels),
    "prepare.queries": ("queries", lambda p: p.prepare.queries),
}
RUNS = "runs"  # runs/<system>: an external system's run file, candidates.systems.<s>.path


def _run_input(p: Params, name: str) -> Input:
    return Input(f"{RUNS}/{name}", f"candidates.systems.{name}.path",
                 getattr(p.candidates.systems[name], "path", None))


def _input(p: Params, key: str) -> Input:
    if key in FIXED or key in RUNS_ONLY:
        slot, get = FIXED.get(key) or RUNS_ONLY[key]
        return Input(slot, key, get(p) if key in FIXED or p.runs_only else None)
    parts = key.split(".")
    if len(parts) == 4 and parts[:2] == ["candidates", "systems"] and parts[3] == "path":
        return _run_input(p, parts[2])
    raise KeyError(f"no pinned input for {key}")


def inputs(p: Params) -> list[Input]:
    """Every input slot of these params, in a fixed order (given or not); the ``RUNS_ONLY``
    slots only under ``prepare.source: runs`` (whose dvc.yaml declares them)."""
    return [_input(p, key) for key in (*FIXED, *(RUNS_ONLY if p.runs_only else ()))] + [
        _run_input(p, name) for name in p.candidates.systems]


def _in_pipeline(path: str) -> bool:
    return not Path(path).is_absolute() and Path(os.path.normpath(path)).parts[:1] == \
        PIPELINE_DATA.parts


def pinned(p: Params, key: str, out: Path = INPUT_DIR) -> Path | None:
    """The path a stage reads for the input under params ``key`` (None when not given)."""
    item = _input(p, key)
    if item.path is None:
        return None
    if _in_pipeline(item.path):
        return Path(item.path)
    return out / item.slot / Path(os.path.normpath(item.path)).name


def _users_paths(text: str, copies: list[tuple[Path, str, Input]]) -> str:
    """``text`` with every pinned copy it names (relative or absolute, or a file in it)
    replaced by the path params give."""
    for copy, shown, item in copies:
        user = Path(os.path.normpath(item.path)).as_posix()
        for form in dict.fromkeys((str(copy), shown, copy.as_posix())):
            text = text.replace(form, user)
    return text


def in_users_words(exc: InputError, p: Params, out: Path = INPUT_DIR) -> InputError:
    """``exc`` as the user gave the input: an error on a pinned copy (``out/<slot>/<name>``
    or a file in it) names the path params give instead, and the params key; a pinned copy
    the rule itself names (another input an error cites, as a policy table's error cites the
    log's line) is named as the user gave it too; any other error as it is."""
    copies = sorted(((Path(os.path.abspath(pinned(p, item.key, out))),
                      str(pinned(p, item.key, out)), item)
                     for item in inputs(p) if item.external),
                    key=lambda c: -len(str(c[0])))  # the longest first: a copy inside another
    rule = _users_paths(exc.rule, copies) if exc.source is not None else exc.rule
    source = Path(os.path.abspath(exc.source)) if exc.source is not None else None
    for copy, _, item in copies:
        if source is not None and (source == copy or copy in source.parents):
            user = Path(os.path.normpath(item.path)) / source.relative_to(copy)
            return InputError(f"{rule} (params {item.key})", str(user), exc.where)
    return exc if rule == exc.rule else InputError(rule, exc.source, exc.where)


def _files(root: Path) -> Iterator[Path]:
    yield from (root,) if root.is_file() else (f for f in sorted(root.rglob("*"))
                                               if f.is_file())


def _sync(source: Path, target: Path, apply: bool = True) -> tuple[int, int, int]:
    """Make ``target`` an exact copy of ``source`` (file or folder); files whose size and
    modification time already match are not copied again. Returns (files, files copied,
    stale ones removed); ``apply`` False changes nothing, only counts."""
    if source.is_file():
        pairs = {target: source}
    else:
        pairs = {target / f.relative_to(source): f for f in _files(source)}
    changed = 0
    if target.exists() and (target.is_file() != source.is_file()):
        changed += 1
        if apply:
            shutil.rmtree(target) if target.is_dir() else target.unlink()
    if target.is_dir():
        for stale in [f for f in _files(target) if f not in pairs]:
            changed += 1
            if apply:
                stale.unlink()
    copied = 0
    for dest, src in pairs.items():
        st = src.stat()
        if dest.is_file() and (dest.stat().st_size, dest.stat().st_mtime_ns) == \
                (st.st_size, st.st_mtime_ns):
            continue
        copied += 1
        if apply:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    return len(pairs), copied, changed


def pin(p: Params, out: Path = INPUT_DIR, base: Path | None = None, *,
        apply: bool = True) -> list[dict]:
    """Copy every given input into its slot under ``out`` (relative paths resolve from
    ``base``, else ``$RELEVAL_INPUT_BASE``, else the working directory); an absent path is a
    one-line error naming its params key, and so is a path inside data/ (the demo's simulated
    runs) under a source that does not generate it. Returns one line of report per input.
    ``apply`` False writes nothing: its report counts what a pin would copy, and one more row
    what it would remove or rewrite (``pinned_as_given``)."""
    base = Path(base or os.environ.get(BASE_ENV) or ".")
    report = []
    slots = {item.slot: item for item in inputs(p)}
    generated = p.prepare.source in GENERATED_SOURCES
    for item in slots.values():
        if item.path is not None and not item.external and not generated:
            raise InputError(f"{item.path} is a pipeline output that only a generated source "
                             f"({' | '.join(GENERATED_SOURCES)}) writes; prepare.source is "
                             f"{p.prepare.source}: give the run's own file", "params", item.key)
    strays = [d for d in out.glob(f"{RUNS}/*") if d.is_dir() and f"{RUNS}/{d.name}" not in slots]
    for stray in strays if apply else ():
        shutil.rmtree(stray)
    changed = len(strays)
    for item in slots.values():
        folder = out / item.slot
        if apply:
            folder.mkdir(parents=True, exist_ok=True)
        keep = {MANIFEST}
        if item.external:
            source = base / item.path
            if not source.exists():
                raise InputError(f"input not found: {source}", "params", item.key)
            target = pinned(p, item.key, out)
            keep.add(target.name)
            files, copied, removed = _sync(source, target, apply)
            report.append({"key": item.key, "slot": item.slot, "files": files,
                           "copied": copied})
            changed += removed
        extras = [e for e in folder.iterdir() if e.name not in keep] if folder.is_dir() else []
        manifest = json.dumps({"key": item.key, "given": item.external}) + "\n"
        written = folder / MANIFEST
        changed += len(extras) + (not written.is_file() or written.read_text() != manifest)
        if apply:
            for extra in extras:
                shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
            written.write_text(manifest)
    if not apply and changed:
        report.append({"key": None, "slot": None, "files": 0, "copied": changed})
    return report


def pinned_as_given(p: Params, out: Path = INPUT_DIR, base: Path | None = None) -> bool:
    """Whether every slot under ``out`` already holds what ``pin`` would write (nothing to
    copy, remove or rewrite): a run with nothing else changed then has nothing to do."""
    return all(row["copied"] == 0 for row in pin(p, out, base, apply=False))
