"""dvc.lock rewritten stage by stage, in the flow's process: DVC's bytes, a fraction of its time.

DVC rewrites the whole dvc.lock after every stage it runs, parsing it with ruamel's
round-trip loader and dumping it again (pure Python, kept for the comments of dvc.yaml):
about 2 s per stage for a lock of 7,000 lines (every stage pins each code file it imports).
The lock is DVC's own file and holds no comments, so :func:`install` routes DVC's
``modify_yaml`` for dvc.lock alone through :func:`read` (ruamel's safe loader, in C; not
even that while the file holds what was last written) and :func:`render`: DVC's own dumper
applied to one stage's entry at a time, each entry's text kept while the entry is
unchanged, so a stage's run dumps that stage alone. The file written
is the one DVC writes (tests/flows/test_dvc_lock.py); dvc.yaml and every other file keep
DVC's writer, and ``dvc repro`` from a shell is untouched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath

LOCK_NAME = "dvc.lock"
_BLOCKS: dict[str, str] = {}  # an entry's JSON -> its text under "stages:"
_LAST: dict[str, tuple[str, dict | None]] = {}  # path -> (the text written, its data)


def read(text: str, path: str = LOCK_NAME) -> dict:
    """The lock's content as plain data, through DVC's parser in ruamel's C mode."""
    from dvc.utils.serialize import parse_yaml

    return parse_yaml(text, path, typ="safe") if text else {}


def _blocks(stages: dict) -> list[str]:
    """Each entry's text under ``stages:``, dumped where the entry changed since the last
    render (the texts kept are the last render's)."""
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
    return (dumps_yaml({"schema": data["schema"]}) + "stages:\n"
            + "".join(_blocks(stages)))


def install() -> None:
    """Send DVC's rewrites of dvc.lock through :func:`read` and :func:`render` (idempotent)."""
    import dvc.dvcfile as dvcfile

    if getattr(dvcfile.modify_yaml, "by_stage", False):
        return
    original = dvcfile.modify_yaml

    @contextmanager
    def modify_yaml(path, fs=None) -> Iterator[dict]:
        if PurePath(os.fspath(path)).name != LOCK_NAME:
            with original(path, fs=fs) as data:
                yield data
            return
        exists, open_fn = (fs.exists, fs.open) if fs else (os.path.exists, open)
        text = ""
        if exists(os.fspath(path)):
            with open_fn(path, encoding="utf-8") as fd:
                text = fd.read()
        written, _LAST[os.fspath(path)] = _LAST.get(os.fspath(path), ("", None)), ("", None)
        data = written[1] if written[0] == text and text else read(text, path)
        yield data
        text = render(data)
        with open_fn(path, "w+", encoding="utf-8") as fd:
            fd.write(text)
        _LAST[os.fspath(path)] = (text, data)  # read again only if the file changes

    modify_yaml.by_stage = True
    dvcfile.modify_yaml = modify_yaml
