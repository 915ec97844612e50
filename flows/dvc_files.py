"""DVC's files read and written stage by stage, in the flow's process: DVC's data and bytes,
a fraction of its time.

For every stage it runs DVC loads dvc.yaml and dvc.lock (ruamel's pure-Python constructor,
then the schema) and rewrites the whole lock after it, parsing it again in ruamel's
round-trip mode and dumping it whole: about 0.5 s of reading and 2 s of writing per stage
for the demo's lock of 7,000 lines (every stage pins each code file it imports). DVC's lock
is a mapping of stage entries, each parsed and dumped independently of the others, so
:func:`install` routes, in this process only:

- DVC's loads (``strictyaml.load``) through :func:`load`: a text loaded before is neither
  parsed nor validated again (its data kept pickled; each caller gets a fresh copy); a lock
  is parsed an entry at a time (:func:`parse`), each entry's data kept while its text is
  unchanged and each new entry validated with the lock's schema (which checks entries one by
  one);
- DVC's rewrites of dvc.lock (``modify_yaml``) through :func:`parse` and :func:`render`:
  DVC's own dumper applied to the entries that changed, every other entry's text kept (as
  DVC's round-trip writer keeps it), so a stage's run dumps that stage alone.

Anything else (dvc.yaml's rewrites, round-trip loads, a lock of another shape, every error)
goes to DVC's own code; ``dvc repro`` from a shell is untouched (tests/flows/test_dvc_files.py
holds both ways equal).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath

LOCK_NAME = "dvc.lock"
_ENTRY = re.compile(r"^  [^\s#]", re.M)  # a stage entry's first line under "stages:"
_BLOCKS: dict[str, str] = {}  # an entry's JSON -> its text under "stages:"
_PARSED: dict[str, bytes] = {}  # an entry's text -> {name: entry}, checked and pickled
_LAST: dict[str, tuple[str, dict]] = {}  # a lock's path -> the text written, its data
_LOADED: dict[tuple[int, str], bytes] = {}  # (schema, text) -> the data loaded, pickled
_LOADED_KEPT = 8  # texts kept (dvc.yaml, the lock before and after a stage, …)


def read(text: str, path: str = LOCK_NAME) -> dict:
    """YAML ``text`` as plain data, through DVC's parser in ruamel's C mode."""
    from dvc.utils.serialize import parse_yaml

    return parse_yaml(text, path, typ="safe") if text else {}


def _split(text: str) -> tuple[str, list[str]] | None:
    """The lock ``text`` as its head (up to ``stages:``) and its entries' texts, or None
    where it has another shape."""
    head, found, rest = text.partition("\nstages:\n")
    if not found or head.startswith((" ", "stages:")) or not _ENTRY.match(rest):
        return None
    starts = [m.start() for m in _ENTRY.finditer(rest)] + [len(rest)]
    return head + found, [rest[a:b] for a, b in zip(starts, starts[1:], strict=False)]


def parse(text: str, path: str = LOCK_NAME) -> dict | None:
    """The lock ``text`` parsed an entry at a time, each new entry checked with the lock's
    schema: equal to parsing it whole, since each entry is a mapping entry of its own,
    parsed alone unless it refers to another (an alias). None where the text has another
    shape; raises on what DVC's own load rejects."""
    from dvc.schema import COMPILED_LOCKFILE_SCHEMA as schema
    from dvc.utils.strictyaml import validate

    parts = _split(text)
    if parts is None:
        return None
    head, blocks = parts
    version = read(head.removesuffix("stages:\n"), path)
    if not isinstance(version, dict) or "stages" in version:
        return None
    validate({**version, "stages": {}}, schema, text=text, path=path)
    stages: dict = {}
    for block in blocks:
        if block not in _PARSED:
            entry = read("stages:\n" + block, path)
            if list(entry) != ["stages"] or not isinstance(entry["stages"], dict):
                return None
            validate({**version, **entry}, schema, text=text, path=path)
            _PARSED[block] = pickle.dumps(entry["stages"], pickle.HIGHEST_PROTOCOL)
        entry = pickle.loads(_PARSED[block])
        if len(entry) != 1 or next(iter(entry)) in stages:
            return None
        stages.update(entry)
    for block in set(_PARSED) - set(blocks) - set(_BLOCKS.values()):  # kept: this lock's
        del _PARSED[block]  # entries and the last render's
    for name, block in zip(stages, blocks, strict=True):
        _BLOCKS.setdefault(json.dumps([name, stages[name]], default=str), block)
    return {**version, "stages": stages}


def _blocks(stages: dict) -> list[str]:
    """Each entry's text under ``stages:``, dumped where no text of the same entry is kept
    (the texts kept are the last render's and the last parse's)."""
    from dvc.utils.serialize import dumps_yaml

    kept = {}
    for name, entry in stages.items():
        key = json.dumps([name, entry], default=str)
        kept[key] = _BLOCKS.get(key) or dumps_yaml({"stages": {name: entry}}).partition("\n")[2]
    _BLOCKS.clear()
    _BLOCKS.update(kept)
    return list(kept.values())


def _shared(value, seen: set[int]) -> bool:
    """Whether a list or dict occurs twice in ``value`` (the dumper would anchor it)."""
    if isinstance(value, dict | list):
        if id(value) in seen:
            return True
        seen.add(id(value))
        return any(_shared(v, seen) for v in (value.values() if isinstance(value, dict)
                                              else value))
    return False


def render(data: dict) -> str:
    """``data`` as DVC's dumper writes it: ``schema`` and ``stages`` entry by entry (equal
    to dumping the whole, since a block mapping's entries are written independently); any
    other shape, or one holding an object twice (anchors are numbered over the whole file),
    is dumped whole."""
    from dvc.utils.serialize import dumps_yaml

    stages = data.get("stages")
    if (list(data) != ["schema", "stages"] or not isinstance(stages, dict) or not stages
            or _shared(stages, set())):
        return dumps_yaml(data)
    return dumps_yaml({"schema": data["schema"]}) + "stages:\n" + "".join(_blocks(stages))


def load(original, path, schema=None, fs=None, encoding="utf-8", round_trip=False):
    """DVC's ``strictyaml.load`` (``original``), its data kept by text: a text loaded
    before (with the same schema) is neither parsed nor validated again, a lock is parsed
    by entry (:func:`parse`). Round-trip loads and every error go to DVC's own."""
    if round_trip:
        return original(path, schema, fs, encoding, round_trip)
    try:
        with (fs.open if fs else open)(path, encoding=encoding) as fd:
            text = fd.read()
    except (OSError, UnicodeDecodeError):
        return original(path, schema, fs, encoding, round_trip)
    from dvc.schema import COMPILED_LOCKFILE_SCHEMA

    key = (id(schema), text)
    if key not in _LOADED:
        data = None
        if (PurePath(os.fspath(path)).name == LOCK_NAME
                and schema in (None, COMPILED_LOCKFILE_SCHEMA)):
            with contextlib.suppress(Exception):  # DVC's own load says what is wrong
                data = parse(text, os.fspath(path))
        if data is None:
            data, text = original(path, schema, fs, encoding, round_trip)
            key = (id(schema), text)
        while len(_LOADED) >= _LOADED_KEPT:
            del _LOADED[next(iter(_LOADED))]
        _LOADED[key] = pickle.dumps(data, pickle.HIGHEST_PROTOCOL)
    return pickle.loads(_LOADED[key]), text


def lock(path: str = LOCK_NAME) -> dict:
    """dvc.lock's stages as DVC loads them ({} without a lock), through :func:`load`."""
    from dvc.schema import COMPILED_LOCKFILE_SCHEMA
    from dvc.utils import strictyaml

    if not os.path.exists(path):
        return {}
    original = getattr(strictyaml.load, "original", strictyaml.load)
    return load(original, path, COMPILED_LOCKFILE_SCHEMA)[0].get("stages", {})


def install() -> None:
    """Send DVC's loads of its files through :func:`load` and its rewrites of dvc.lock
    through :func:`parse` and :func:`render` (idempotent)."""
    import dvc.dvcfile as dvcfile
    from dvc.utils import strictyaml

    if getattr(dvcfile.modify_yaml, "by_stage", False):
        return
    original_modify, original_load = dvcfile.modify_yaml, strictyaml.load

    @contextmanager
    def modify_yaml(path, fs=None) -> Iterator[dict]:
        if PurePath(os.fspath(path)).name != LOCK_NAME:
            with original_modify(path, fs=fs) as data:
                yield data
            return
        exists, open_fn = (fs.exists, fs.open) if fs else (os.path.exists, open)
        text = ""
        if exists(os.fspath(path)):
            with open_fn(path, encoding="utf-8") as fd:
                text = fd.read()
        written, data = _LAST.pop(os.path.abspath(path), ("", None))
        if written != text or not text:
            data = None
            with contextlib.suppress(Exception):  # DVC's parser says what is wrong
                data = parse(text, os.fspath(path))
            if data is None:
                data = read(text, path)
        yield data
        text = render(data)
        with open_fn(path, "w+", encoding="utf-8") as fd:
            fd.write(text)
        _LAST[os.path.abspath(path)] = (text, data)  # parsed again only if the file changes

    def cached_load(path, schema=None, fs=None, encoding="utf-8", round_trip=False):
        return load(original_load, path, schema, fs, encoding, round_trip)

    cached_load.original = original_load
    modify_yaml.by_stage = True
    dvcfile.modify_yaml = modify_yaml
    strictyaml.load = cached_load
