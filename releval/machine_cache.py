"""The per-machine cache, shared by every project on the machine: ``$RELEVAL_CACHE_DIR``,
else ``$XDG_CACHE_HOME/releval``, else ``~/.cache/releval``. Embeddings go under
``embeddings/``, exported encoder graphs under ``onnx/``, derived files such as the report's
JavaScript bundle and its plots' SVGs (tens of KB each) under ``files/``; every entry is
keyed by what it is made from, and every write is atomic (a temporary file, then
``os.replace``), so concurrent projects share it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def root() -> Path:
    """The cache's folder (module docstring); not created here."""
    if os.environ.get("RELEVAL_CACHE_DIR"):
        return Path(os.environ["RELEVAL_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "releval"


def text(name: str, make: Callable[[], str]) -> str:
    """The text stored as ``files/<name>`` (``name`` names what the text is made from, e.g.
    a version), else ``make()``, stored atomically; a cache that cannot be written is
    passed over (the text is made each time)."""
    path = root() / "files" / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    made = make()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(made, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return made
