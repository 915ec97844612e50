"""What a DVC stage really uses, derived from the code: the repo modules its command imports
(transitively, lazy imports included) and the params keys it reads (recorded while it runs).
tests/test_dvc_yaml.py and tests/flows/test_pipeline.py hold dvc.yaml against them."""

from __future__ import annotations

import types
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]


def covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


class Reads:
    """Params keys read: ``values`` (a value or a whole section used), ``keys`` (only the
    names of a mapping's entries, e.g. `name in p.candidates.systems`)."""

    def __init__(self):
        self.values: set[str] = set()
        self.keys: set[str] = set()

    def missing(self, listed: list[str]) -> list[str]:
        def above(key):  # a listed key equal to or containing `key`
            return any(key == p or key.startswith(p + ".") for p in listed)

        out = [k for k in self.values if k and not above(k)]
        out += [f"{k} (names)" for k in self.keys
                if not above(k) and not any(p.startswith(k + ".") for p in listed)]
        return sorted(out)


def _wrap(value, path: str, reads: Reads):
    if isinstance(value, BaseModel):
        return _Model(value, path, reads)
    if isinstance(value, dict):
        return _Mapping(value, path, reads)
    reads.values.add(path)
    return value


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


class _Model:
    """A params model that records every attribute read through it."""

    def __init__(self, model: BaseModel, path: str, reads: Reads):
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_reads", reads)

    def __getattr__(self, name):
        model, path, reads = self._model, self._path, self._reads
        attr = getattr(type(model), name, None)
        if isinstance(attr, property):
            return attr.fget(self)
        if isinstance(attr, types.FunctionType) and not name.startswith("model_"):
            return types.MethodType(attr, self)  # own methods read through the recorder
        value = getattr(model, name)
        if callable(value) and not isinstance(value, BaseModel):
            reads.values.add(path)  # model_dump() and the like: the whole section
            return value
        return _wrap(value, _join(path, name), reads)


class _Mapping(dict):
    """A params mapping (systems by name) recording which entries are read."""

    def __init__(self, data: dict, path: str, reads: Reads):
        super().__init__(data)
        self._path, self._reads = path, reads

    def __getitem__(self, key):
        return _wrap(dict.__getitem__(self, key), _join(self._path, key), self._reads)

    def get(self, key, default=None):
        self._reads.keys.add(self._path)
        return self[key] if dict.__contains__(self, key) else default

    def __contains__(self, key):
        self._reads.keys.add(self._path)
        return dict.__contains__(self, key)

    def __iter__(self):
        self._reads.keys.add(self._path)
        return dict.__iter__(self)

    def keys(self):
        self._reads.keys.add(self._path)
        return dict.keys(self)

    def __len__(self):
        self._reads.keys.add(self._path)
        return dict.__len__(self)

    def items(self):
        return [(k, self[k]) for k in self]

    def values(self):
        return [self[k] for k in self]


def recording(params: BaseModel) -> tuple[_Model, Reads]:
    reads = Reads()
    return _Model(params, "", reads), reads
