"""The built-in automatic judge's encoder: the first dense system of ``candidates.systems``,
as a retriever whose encoder and content-keyed embedding caches are exactly the dense route's
(``releval.judging.automatic.pair_similarity`` reads them), so a pipeline that ran the dense
route encodes nothing again."""

from __future__ import annotations

from releval.errors import InputError
from releval.params.systems import DenseSystem
from releval.retrieval.dense import DenseRetriever


def dense_system(systems: dict) -> tuple[str, DenseSystem]:
    """The first ``route: dense`` entry of ``systems`` (name, settings); InputError when there
    is none."""
    for name, config in systems.items():
        if config.route == "dense":
            return name, config
    raise InputError("judgments.automatic.judge dense needs a dense system in "
                     "candidates.systems (its encoder is the judge's)", "params.yaml",
                     "judgments.automatic")


def retriever(config: DenseSystem) -> DenseRetriever:
    """A DenseRetriever with ``config``'s settings (its model is loaded only if a text is not
    in the cache)."""
    settings = config.model_dump()
    settings.pop("route")
    return DenseRetriever(**settings)
