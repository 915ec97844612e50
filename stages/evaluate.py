"""Stage ``evaluate``: per-query metrics for every system on the evaluated split.

Relevance is judged against what the user may see: judgments of documents invisible to
the query (time, status, tenant, ACL) are left out and counted, so no system is credited
or blamed for a forbidden document. Outputs (data/evaluate/): per_query.parquet (system,
query_id, measure, value), metrics.json (``dvc metrics``: system -> measure -> mean),
summary.json (n, undefined, empty per measure; per per-query measure ``ties``, the queries
where a score tie straddles its cutoff, and ``tie_range``, its mean over the worst and the
best order of the tied documents: ``releval.metrics.ties``, the windows' ranks taken as one
way of breaking their routes' score ties; and where the qrels came from),
route_hits.parquet (for each fused pair of systems, which one found each relevant document),
labels.parquet (query_id, dimension, slice: the slices each evaluated query belongs to, for
``slices.dimensions`` and ``compare.strata``), unjudged.parquet (each system's top
``evaluate.judged_k`` candidates without a judgment, on the ``pool.splits`` queries: the next
pooling round; empty in recommendation mode, judged by the log) and curves.parquet
(system, family, k, measure, value, n: R@k, nDCG@k and Judged@k over a fixed grid of k up
to ``candidates.depth``, ``releval.metrics.curves``) and seeds.parquet (system, seed,
query_id, measure, value: each training seed's window of a system trained with several
seeds, ``evaluate.measures`` on the same queries and qrels; empty when no system has seeds)
and horizons.parquet (horizon_days, system, query_id, measure, value: ``evaluate.measures``
at each of ``recommend.horizons_days``, the figures a run with that ``horizon_days`` gives
for the same candidates, and summary.json's ``horizons`` block; empty without them).
Queries tagged ``no_answer.tag`` have no answer to find: they are left out of every
relevance mean and counted (the safety stage reports how each system treats them).
Every system gets the same candidate budget (``candidates.depth``); an empty run (e.g. an
external run that has no rows for this data) is reported as skipped, not scored.

In recommendation mode (``prepare.source`` interactions | recsys_demo) the queries are users
at a cut, and the beyond-accuracy measures get their catalogue (``releval.metrics.catalog``)
from data/raw/interactions.parquet, the items and the user-queries: the expected system is
``recommend.expected``, else the first popularity system of ``candidates.systems`` (none:
serendipity is not applicable); item embeddings come from the model and embedding cache of the
first content or dense system (none: embedding ILD is not applicable). reliability.parquet
(system, binning, bin, lo, hi, n, mean_predicted, observed) holds the reliability diagrams of
the systems with probabilities (empty in retrieval mode), and summary.json a
``recommendation`` block (the protocol, the users evaluated and undefined, what applies).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval import artifacts, executor
from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.decision.no_answer import evaluated_queries
from releval.decision.slices import labels as query_labels
from releval.diagnosis.route_hits import CLASS, hit_counts, route_hits
from releval.errors import InputError
from releval.judging.pooling import unjudged
from releval.metrics.calibration import RELIABILITY_COLUMNS, reliability
from releval.metrics.catalog import Catalog
from releval.metrics.curves import curves
from releval.metrics.engine import evaluate_systems
from releval.metrics.ties import ties
from releval.params import Params
from releval.retrieval.embeddings import EmbeddingCache, Encoder, cache_root


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``evaluate.<field>`` (``releval.artifacts``)."""

    per_query: pd.DataFrame
    metrics: dict
    summary: dict
    route_hits: pd.DataFrame
    labels: pd.DataFrame
    unjudged: pd.DataFrame
    curves: pd.DataFrame
    reliability: pd.DataFrame
    seeds: pd.DataFrame
    horizons: pd.DataFrame


def expected_system(p: Params, runs: dict[str, pd.DataFrame]) -> str | None:
    """Serendipity's expected system: ``recommend.expected``, else the first popularity
    system; None when there is none or its run is empty."""
    name = p.recommend.expected or next(
        (n for n, s in p.candidates.systems.items() if s.route == "popularity"), None)
    if p.recommend.expected is not None and name not in runs:
        raise InputError(f"recommend.expected names {name!r}, which is no system here "
                         f"(systems: {', '.join(runs)})", "params.yaml")
    return name if name in runs and not runs[name].empty else None


def embedding_system(p: Params) -> str | None:
    """The first content or dense system of ``candidates.systems`` (its model embeds the
    items for ILD), None when there is none."""
    return next((n for n, s in p.candidates.systems.items() if s.route in ("content", "dense")),
                None)


def item_embeddings(p: Params, system: str, documents: pd.DataFrame) -> np.ndarray:
    """One vector per document row: its ``doc_fields`` joined by " ", embedded with
    ``system``'s model through its embedding cache (the vectors its route uses)."""
    config = p.candidates.systems[system]
    normalize = getattr(config, "normalize", True)
    encoder = Encoder(config.model, config.max_length, config.batch_size, normalize,
                      config.backend)
    cache = EmbeddingCache(cache_root(config.cache_dir), encoder.digest,
                           tuple(config.doc_fields), normalize, config.max_length,
                           config.backend)
    S.require_columns(documents, config.doc_fields, "documents")
    columns = (documents[f].fillna("").astype(str) for f in config.doc_fields)
    return cache.encode(functools.reduce(lambda a, b: a + " " + b, columns).tolist(), encoder)


def catalog_settings(p: Params, runs: dict[str, pd.DataFrame], interactions: pd.DataFrame | None,
                     documents: pd.DataFrame) -> tuple[dict, dict]:
    """The keywords of ``Catalog.of`` for a recommendation run (the items embedded once), and
    which context it found (expected system, embedding system)."""
    if interactions is None:
        raise InputError("recommendation mode needs the interaction log",
                         artifacts.get("raw.interactions").file)
    r = p.recommend
    expected, embedder = expected_system(p, runs), embedding_system(p)
    settings = {
        "embeddings": None if embedder is None else item_embeddings(p, embedder, documents),
        "expected": None if expected is None else runs[expected], "negatives": r.negatives,
        "n_negatives": r.n_negatives, "seed": p.base.seed}
    return settings, {"expected": expected, "embeddings": embedder}


HORIZON_METRIC_COLUMNS = [S.HORIZON_DAYS, S.SYSTEM, *S.PER_QUERY_COLUMNS]


def at_horizons(p: Params, runs: dict[str, pd.DataFrame], horizons: pd.DataFrame,
                queries: pd.DataFrame, documents: pd.DataFrame, evaluated: pd.Series,
                interactions: pd.DataFrame, settings: dict) -> tuple[pd.DataFrame, dict]:
    """horizons.parquet (``HORIZON_METRIC_COLUMNS``) and summary.json's ``horizons`` block: at
    each further horizon (prepare's horizons.parquet: its user-queries and positives),
    ``evaluate.measures`` of every run over the evaluated queries of that horizon, with its
    own catalogue (its user-queries), as a run with that ``recommend.horizon_days`` would
    score the same candidates; per horizon the users evaluated, with a positive in it and
    scored, and the summary entries."""
    c, frames, block = p.evaluate, [], {}
    for days, rows in horizons.groupby(S.HORIZON_DAYS, sort=True):
        asked = queries[queries[S.QUERY_ID].isin(rows[S.QUERY_ID])]
        chosen = evaluated[evaluated.isin(rows[S.QUERY_ID])]
        found = rows.explode(S.POSITIVES).dropna(subset=[S.POSITIVES])
        positives = pd.DataFrame({S.QUERY_ID: found[S.QUERY_ID].astype(str).to_numpy(),
                                  S.DOC_ID: found[S.POSITIVES].astype(str).to_numpy(),
                                  S.GRADE: np.ones(len(found), np.int64)})
        qrels, visible = judgments_of(positives, asked, documents, chosen)
        scored = evaluate_systems(runs, qrels[visible], c.measures, rel=c.rel,
                                  max_grade=p.prepare.max_grade, queries=chosen,
                                  catalog=Catalog.of(interactions, documents, asked, **settings))
        frames.append(scored.per_query.assign(**{S.HORIZON_DAYS: int(days)}))
        block[str(days)] = {"users": int(len(chosen)),
                            "users_with_positives_in_horizon": int(qrels[S.QUERY_ID].nunique()),
                            "users_scored": int(qrels.loc[visible, S.QUERY_ID].nunique()),
                            "systems": scored.summary}
    table = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame({c: pd.Series([], dtype=t) for c, t in zip(
                 HORIZON_METRIC_COLUMNS, ("int64", str, str, str, float), strict=True)}))
    return table[HORIZON_METRIC_COLUMNS].reset_index(drop=True), block


def recommendation_block(p: Params, scored, context: dict, probabilities: list[str],
                         n_users: int, in_horizon: int, n_scored: int) -> dict:
    """summary.json's ``recommendation`` block: the protocol; the users evaluated (user-queries),
    those with a positive in the horizon, those scored (a positive visible at the cut; the
    difference: users whose only positives are items first seen after it) and those undefined
    (no visible positive), as prepare's source.json defines them
    (``releval.data.interactions.SPLIT_COUNTS``); and which definitions apply to which
    system."""
    r = p.recommend
    return {"horizon_days": r.horizon_days, "exclude_seen": r.exclude_seen,
            "negatives": r.negatives, "n_negatives": r.n_negatives,
            "users": n_users, "users_with_positives_in_horizon": in_horizon,
            "users_scored": n_scored, "users_only_unpublished_positives": in_horizon - n_scored,
            "undefined_users": n_users - n_scored,
            "serendipity_expected": context["expected"],
            "ild_embeddings": context["embeddings"], "probabilities": probabilities,
            "not_applicable": {system: [m for m, e in by_measure.items() if not e["applicable"]]
                               for system, by_measure in scored.summary.items()}}


def nothing_relevant(p: Params, queries: int, judgments: int, invisible: int) -> str:
    """Why the evaluated set is empty, in the data's words: none of its ``queries`` (users)
    has a relevant judgment (a positive) it may see, with the ``judgments`` of them and the
    relevant ones ``invisible`` to their query."""
    who, whom = ("user", "users") if p.recommendation else ("query", "queries")
    splits = ", ".join(p.evaluate.splits)
    if not queries:
        return f"no {who} in the evaluated splits ({splits})"
    relevant = "positive" if p.recommendation else f"relevant judgment (grade ≥ {p.evaluate.rel})"
    return (f"none of the {queries:,} evaluated {whom} ({splits}) has a {relevant} it may "
            f"see: {judgments:,} judgments of them, {invisible:,} relevant ones invisible to "
            "their query (published later, deleted, another tenant or ACL)")


@dataclass(frozen=True)
class Inputs:
    """judgments: the qrels; ingest: the judgments stage's ingest.json (its ``qrels`` says
    where the qrels came from); interactions, horizons: the interaction log and prepare's
    further horizons (recommendation mode only, ``at_horizons``); seeds: system -> every
    training seed's window (an empty table: one seed)."""

    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="system")
    judgments: pd.DataFrame = reads("judgments.qrels")
    split: pd.DataFrame = reads("split.split")
    queries: pd.DataFrame = reads("raw.queries")
    documents: pd.DataFrame = reads("raw.documents")
    ingest: dict = reads("judgments.ingest")
    interactions: pd.DataFrame | None = reads("raw.interactions", when="recommendation")
    seeds: dict[str, pd.DataFrame] | None = reads("candidates.seeds", each="candidate",
                                                  optional=True)
    horizons: pd.DataFrame | None = reads("raw.horizons", when="recommendation")


def run(p: Params, inputs: Inputs) -> Outputs:
    """Every system's figures on the evaluated queries (module docstring), a large run's
    query blocks on the cluster (``base.executor``). An evaluated set with no relevant
    judgment visible to any query is an InputError (``nothing_relevant``)."""
    with executor.of(p):
        return _evaluated(p, inputs)


def _evaluated(p: Params, inputs: Inputs) -> Outputs:
    runs, judgments, split = inputs.runs, inputs.judgments, inputs.split
    queries, documents, ingest = inputs.queries, inputs.documents, inputs.ingest
    interactions, seeds, horizons = inputs.interactions, inputs.seeds, inputs.horizons
    if "qrels" not in ingest:
        raise InputError("no 'qrels' (where the qrels came from)",
                         artifacts.get("judgments.ingest").file)
    c = p.evaluate
    evaluated, no_answer = evaluated_queries(split, queries, p.evaluate.splits, p.no_answer.tag)
    qrels, visible = judgments_of(judgments, queries, documents, evaluated)
    relevant = qrels[S.GRADE] >= c.rel
    if not (visible & relevant).any():
        raise InputError(nothing_relevant(p, len(evaluated), len(qrels),
                                          int((~visible & relevant).sum())),
                         artifacts.at("judgments.qrels"))
    settings, context = catalog_settings(p, runs, interactions, documents) \
        if p.recommendation else ({}, {})
    catalog = Catalog.of(interactions, documents, queries, **settings) \
        if p.recommendation else None
    scored = evaluate_systems(runs, qrels[visible], c.measures, rel=c.rel,
                              max_grade=p.prepare.max_grade, queries=evaluated,
                              catalog=catalog)
    for system, entries in scored.summary.items():  # a window's ranks break its score ties
        tied = ties(runs[system], qrels[visible], c.measures, rel=c.rel,
                    max_grade=p.prepare.max_grade, queries=evaluated, catalog=catalog,
                    rank_decides=False)
        for measure, extra in tied.entries().items():
            entries[measure].update(extra)
    hits = [route_hits(f.lexical, runs[f.lexical], f.dense, runs[f.dense], qrels[visible],
                       c.rel).assign(pair=f"{f.lexical}|{f.dense}")
            for f in p.fusion.systems.values() if f.lexical in runs and f.dense in runs]
    hits = pd.concat(hits, ignore_index=True) if hits else pd.DataFrame(columns=[CLASS, "pair"])
    dimensions = list(dict.fromkeys([*p.slices.dimensions, p.compare.strata]))
    labels = query_labels(queries, qrels[visible], documents, hits, evaluated,
                          p.slices.model_copy(update={"dimensions": dimensions}), rel=c.rel)
    report = {"splits": c.splits, "queries": int(len(evaluated)), "systems": scored.summary,
              "answered": scored.answered, "no_answer_left_out": int(len(no_answer)),
              "skipped": scored.skipped, "depth": p.candidates.depth,
              "route_hits": {pair: hit_counts(group) for pair, group in hits.groupby("pair")},
              "judgments": {"evaluated": int(len(qrels)),
                            "invisible_left_out": int((~visible).sum()),
                            "relevant_invisible_left_out": int((~visible & relevant).sum())},
              "qrels": ingest["qrels"]}
    # recommendation mode has no judging round (the log's future is the judge): no holes
    pooled = split.loc[split[S.SPLIT].isin(p.pool.splits) & (not p.recommendation), S.QUERY_ID]
    holes = unjudged({name: r[r[S.QUERY_ID].isin(pooled)] for name, r in runs.items()},
                     judgments, c.judged_k)
    report["unjudged"] = int(len(holes))
    by_k = curves(runs, qrels[visible], p.candidates.depth, rel=c.rel,
                  max_grade=p.prepare.max_grade, queries=evaluated)
    diagram = pd.DataFrame(columns=list(RELIABILITY_COLUMNS))
    if p.recommendation:
        diagram = reliability(runs, qrels[visible], rel=c.rel, max_grade=p.prepare.max_grade,
                              queries=evaluated)
        report["recommendation"] = recommendation_block(
            p, scored, context, sorted(diagram[S.SYSTEM].unique()), int(len(evaluated)),
            int(qrels.loc[relevant, S.QUERY_ID].nunique()),
            int(qrels.loc[visible & relevant, S.QUERY_ID].nunique()))
    seeded = {k: t for k, t in (seeds or {}).items() if not t.empty}
    by_seed = seed_values(seeded, qrels[visible], c.measures, rel=c.rel,
                          max_grade=p.prepare.max_grade, queries=evaluated, catalog=catalog)
    none = pd.DataFrame(columns=list(S.HORIZON_COLUMNS))
    by_horizon, block = at_horizons(
        p, runs, horizons if horizons is not None and p.recommendation else none, queries,
        documents, evaluated, interactions, settings)
    if block:
        report["horizons"] = block
    return Outputs(scored.per_query, scored.means, report, hits, labels, holes, by_k, diagram,
                   by_seed, by_horizon)


SEED_COLUMNS = [S.SYSTEM, S.SEED, *S.PER_QUERY_COLUMNS]


def seed_values(seeds: dict[str, pd.DataFrame], qrels: pd.DataFrame, measures: list[str],
                **evaluation) -> pd.DataFrame:
    """seeds.parquet: every seed's window of each seeded system evaluated like the systems
    (``evaluate_systems`` with the same qrels, queries and ``evaluation`` settings)."""
    windows = {(system, int(k)): window.drop(columns=S.SEED)
               for system, table in seeds.items() for k, window in table.groupby(S.SEED)}
    scored = evaluate_systems({f"{s}@seed{k}": w for (s, k), w in windows.items()}, qrels,
                              measures, **evaluation).per_query
    names = {f"{s}@seed{k}": (s, k) for s, k in windows}
    system, seed = zip(*scored[S.SYSTEM].map(names), strict=True) if len(scored) else ((), ())
    return scored.assign(**{S.SYSTEM: list(system), S.SEED: pd.array(seed, dtype="int64")}
                         )[SEED_COLUMNS].reset_index(drop=True)


def line(p: Params, result: Outputs) -> str:
    report = result.summary
    systems = len(p.candidates.systems) + len(p.fusion.systems)
    return (f"evaluate: {systems} system(s) on {report['queries']} queries "
            f"({', '.join(report['splits'])})")
