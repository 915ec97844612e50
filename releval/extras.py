"""The optional parts of the install (pyproject's extras) and the one-line refusal of a
command that needs one that is not installed: ``require(extra, what)``; ``needed(p)``: the
extras a pipeline run of params ``p`` needs."""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

from releval.errors import InputError

if TYPE_CHECKING:
    from releval.params import Params

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


def needed(p: Params) -> list[str]:
    """The pipeline and the report always; each configured route's own extra (``Route.extra``:
    dense and content encode with the dense extra's model); dask for ``base.executor: dask``."""
    from releval.retrieval.routes import ROUTES

    routes = {ROUTES[system.route].extra for system in p.candidates.systems.values()}
    return ["pipeline", "report", *sorted(e for e in routes if e),
            *(["dask"] if p.base.executor == "dask" else [])]
