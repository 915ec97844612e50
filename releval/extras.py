"""The optional parts of the install (pyproject's extras) and the one-line refusal of a
command that needs one that is not installed: ``require(extra, what)``."""

from __future__ import annotations

from importlib.util import find_spec

from releval.errors import InputError

EXTRAS: dict[str, tuple[str, ...]] = {  # extra -> the modules it installs
    "pipeline": ("prefect", "dvc", "great_expectations", "bm25s", "Stemmer", "sklearn"),
    "dense": ("torch", "sentence_transformers", "faiss"),
    "dask": ("dask", "distributed", "prefect_dask"),
    "report": ("altair", "vl_convert"),
}


def require(extra: str, what: str) -> None:
    """InputError (one line) when a module of ``extra`` is not importable."""
    if any(find_spec(module) is None for module in EXTRAS[extra]):
        raise InputError(f"needs the '{extra}' extra: pip install 'releval[{extra}]'", what)
