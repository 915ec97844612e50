"""Failure classification: every judged-relevant document a system misses, traced to the
first layer that lost it.

A *failure* is a qrels row with grade ≥ rel (every judged-relevant row, documents the user
may not see included) whose document is not in the system's top k for that query. ``facts``
gathers, per failure, what each layer's rule reads (vectorised over the failures); each
entry of ``REGISTRY`` states its layer's rule and claims the failures it holds for; the
failure's layer is the first entry, in registry order, that claims it (``assign``: one
``np.select`` built from the registry). ``LAYERS`` is the registry's names in that order,
and every ordered list of layers (summary, failures.json, the report, the docs) follows it.
Two layers may claim the same failure (an unknown document nobody ranks is claimed by corpus
and by representation); the order says which wins:

1. ``chunk``: only with an answer map (query_id, source_id, doc_id: the document holding the
   answer): the missed document is that query's answer document, it is not in the documents
   table, and other documents (chunks) of its source_id are: the corpus was re-chunked
   under the judgments. It comes before corpus, which claims every unknown document too:
   the re-chunking is the more specific cause. Without an answer map it never claims a
   failure and the evidence says so (``notes.chunk``).
2. ``corpus``: the document is not live at the query's time: not in the documents table
   (``unknown_document``), a draft or expired, deleted at or before the query, or published
   after it. Judged as if asked by an admin of the document's own tenant, so a deleted
   staff-only document is a corpus failure, not a filter one (``visibility_reason`` in the
   evidence is what ``forbidden_reasons`` says).
3. ``filter``: the query may not see the document (other_tenant, acl).
4. ``representation``: none of the system's routes (itself for bm25/dense, its sources for a
   hybrid) ranks the document within the exact scorer's deep window (``exact_ranks``, ranks
   ≤ deep_k): the representation cannot find it at any reasonable depth.
5. ``exact_ann``: a route searching an approximate index (dense HNSW) ranks it ≤ k when
   scored exactly, but its actual (approximate) window does not hold it within k.
6. ``fusion``: a hybrid whose source window ranks it ≤ k while the hybrid's window does not.
7. ``qrels``: the system's top k holds unjudged documents (they may be relevant: the
   judgments, not the system, may be what is missing).
8. ``downstream``: a later stage over a declared candidate set dropped it. No route declares
   a later stage or its candidate set, so nothing can detect it: its entry has no rule,
   ``classify`` never assigns it, and every row's ``notes.downstream`` says why. It stays in
   the registry for a reviewer, who may know of such a stage (``releval.diagnosis.worksheet``
   accepts any ``LAYERS`` entry as a verdict).
9. ``ranking``: the residual, claiming every failure: some route had it within the deep
   window (or nothing could say otherwise), the system ranked it below k.

Every invisible document is claimed by chunk, corpus or filter, which come first, so the
later rules need not exclude it. Without documents (a runs-only project) nothing is
invisible: corpus and filter never claim a failure and the notes say so. External systems
have no exact scorer: 4–6 never claim their failures and the evidence says so; without a
deep window (``deep=None``) 4–5 are not checked and the evidence says so. ``evidence`` is a
JSON object: the assigned layer's facts at top level, plus ``notes`` (layer -> why that
layer was not or could not be checked) on every row.

The deep window comes from ``releval.retrieval.deep``; ``releval.diagnosis.summary`` sums the
failure table up.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import ADMIN, Visibility, forbidden_reasons
from releval.errors import InputError
from releval.params import Params
from releval.retrieval.routes import FUSED, ROUTES, approximate

log = logging.getLogger(__name__)

SOURCE = "failures"
KINDS = ("relevance", "safety")

KIND = "kind"
LAYER = "layer"
EVIDENCE = "evidence"
UNJUDGED = "unjudged_in_top_k"
FAILURE_COLUMNS = (S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.GRADE, KIND, LAYER, EVIDENCE, UNJUDGED,
                   S.RANK)

# the facts frame (``facts``): one row per failure, the columns the layers' rules read
UNJUDGED_DOCS = "unjudged_docs"  # the unjudged documents of the top k, in rank order
CORPUS_REASON = "corpus_reason"  # "" where live at the query's time (asked by an admin)
VISIBILITY_REASON = "visibility_reason"  # "" where the query may see it
CHUNK = "chunk"  # the chunk evidence where the chunk rule holds, else None
DEEP_CHECKED = "deep_checked"  # every route of the system has an exact deep window
FOUND_DEEP = "found_deep"  # some route ranks it ≤ deep_k, scored exactly
ANN_MISS = "ann_miss"  # an approximate route: exact rank ≤ k, window rank not ≤ k
FUSED_AWAY = "fused_away"  # a hybrid: some source window ranks it ≤ k
ROUTE_FACTS = "route_facts"  # per route: (route, deep rank, window rank, ann miss)
FACT_COLUMNS = (S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.GRADE, S.RANK, UNJUDGED, UNJUDGED_DOCS,
                CORPUS_REASON, VISIBILITY_REASON, CHUNK, DEEP_CHECKED, FOUND_DEEP, ANN_MISS,
                FUSED_AWAY, ROUTE_FACTS)

FILTER_REASONS = ("other_tenant", "acl")
MAX_LISTED = 10  # documents listed in one evidence field
NOTE_NO_ANSWERS = "unknown (no answer map)"
NOTE_EXTERNAL = "no exact scorer for an external run"
NOTE_NO_DEEP = "not checked: no exact deep window given (deep=None)"
NOTE_DOWNSTREAM_EXTERNAL = "not applicable: no declared candidate set"
NOTE_DOWNSTREAM = "not applicable: no later stage"
NOTE_NO_DOCUMENTS = "not applicable: no documents (prepare.source runs): every pair is visible"


@dataclass(frozen=True)
class Layer:
    """One failure layer: its name, its rule in words (``statement``), the rule itself
    (``claims``: facts frame -> one bool per row, vectorised; None where nothing can detect
    the layer, so ``classify`` never assigns it) and what its evidence records."""

    name: str
    statement: str
    claims: Callable[[pd.DataFrame], np.ndarray] | None
    evidence: str


def _column(name: str) -> Callable[[pd.DataFrame], np.ndarray]:
    return lambda f: f[name].to_numpy(dtype=bool)


# in precedence order: a failure's layer is the first entry that claims it (module docstring)
REGISTRY = (
    Layer("chunk", "the query's answer document (answer map) is not in the documents table, "
          "other chunks of its source_id are: the corpus was re-chunked under the judgments",
          lambda f: f[CHUNK].notna().to_numpy(),
          "source_id, answer_doc_id, chunks_in_corpus, n_chunks_in_corpus"),
    Layer("corpus", "the document is not live at the query's time (unknown, draft or expired, "
          "deleted at or before it, published after it), asked by an admin of its own tenant",
          lambda f: (f[CORPUS_REASON] != "").to_numpy(),
          "reason, issued_at, published_at, status, deleted_at (visibility_reason if other)"),
    Layer("filter", "the query may not see the document: other_tenant or acl",
          lambda f: f[VISIBILITY_REASON].isin(FILTER_REASONS).to_numpy(),
          "reason, the document's tenant and ACL, the query's tenant, groups and role"),
    Layer("representation", "every route of the system has an exact deep window and none "
          "ranks the document within deep_k",
          lambda f: (f[DEEP_CHECKED] & ~f[FOUND_DEEP]).to_numpy(dtype=bool),
          "deep_k, deep_ranks per route"),
    Layer("exact_ann", "an approximate route ranks it ≤ k scored exactly, its window does not",
          _column(ANN_MISS), "route, k, exact_rank, ann_rank"),
    Layer("fusion", "a hybrid's source window ranks it ≤ k, the hybrid's window does not",
          _column(FUSED_AWAY), "k, source_ranks, hybrid_rank, fusion"),
    Layer("qrels", "the system's top k holds unjudged documents",
          lambda f: (f[UNJUDGED] > 0).to_numpy(), "k, unjudged_in_top_k, unjudged"),
    Layer("downstream", "a later stage over a declared candidate set dropped it; no route "
          "declares one, so nothing detects it: never assigned here, only by a reviewer",
          None, "none: notes.downstream on every row says why it was not checked"),
    Layer("ranking", "the residual: no earlier layer claims it, the system ranked it below k",
          lambda f: np.ones(len(f), dtype=bool),
          "k, system_rank (deep_k, deep_ranks; source_ranks of a hybrid)"),
)
LAYERS = tuple(layer.name for layer in REGISTRY)
DETECTED = tuple(layer for layer in REGISTRY if layer.claims is not None)


def claims(found: pd.DataFrame) -> pd.DataFrame:
    """Which layers claim which failures: one bool column per ``DETECTED`` layer (registry
    order), a row per row of ``found`` (a ``facts`` frame; same index)."""
    return pd.DataFrame({layer.name: layer.claims(found) for layer in DETECTED},
                        index=found.index)


def assign(found: pd.DataFrame) -> np.ndarray:
    """Each failure of ``found`` (a ``facts`` frame): the first registry entry that claims
    it (ranking, the last, claims every failure)."""
    claimed = claims(found)
    return np.select([claimed[c].to_numpy() for c in claimed], list(claimed),
                     default=REGISTRY[-1].name)


@dataclass(frozen=True)
class SystemInfo:
    """What the classifier needs to know of one system: its route (a ``ROUTES`` name or
    ``FUSED``), a fused system's two source systems and chosen fusion (e.g.
    ``{"method": "rrf", "k": 10}``), and whether it searches an approximate index."""

    name: str
    route: str
    sources: tuple[str, ...] = ()
    approximate: bool = False
    fusion: dict | None = None

    def __post_init__(self):
        known = (*ROUTES, FUSED)
        if self.route not in known:
            raise InputError(f"system {self.name!r}: route must be one of {', '.join(known)}, "
                             f"got {self.route!r}", SOURCE)
        object.__setattr__(self, "sources", tuple(self.sources))
        if (self.route == FUSED) != bool(self.sources):
            raise InputError(f"system {self.name!r}: a {FUSED} names its source systems and "
                             "only a hybrid does", SOURCE)

    def routes(self) -> tuple[str, ...]:
        """The systems whose exact scorers stand behind this one: itself (a route with an
        exact scorer), its sources (fused), none (external)."""
        if self.route == FUSED:
            return self.sources
        return (self.name,) if ROUTES[self.route].exact is not None else ()


def system_infos(p: Params, stats: Mapping[str, dict]) -> dict[str, SystemInfo]:
    """Every system of ``p`` as the classifier sees it; a fused system's chosen fusion is read
    from its run stats (``stats[name]["fusion"]``)."""
    out = {name: SystemInfo(name, config.route, approximate=approximate(config))
           for name, config in p.candidates.systems.items()}
    for name in p.fusion.systems:
        out[name] = SystemInfo(name, FUSED, sources=p.sources(name),
                               fusion=stats.get(name, {}).get("fusion"))
    return out


def empty() -> pd.DataFrame:
    """A failure table without rows (``FAILURE_COLUMNS``)."""
    return pd.DataFrame({
        S.SYSTEM: pd.Series(dtype="str"), S.QUERY_ID: pd.Series(dtype="str"),
        S.DOC_ID: pd.Series(dtype="str"), S.GRADE: pd.Series(dtype=float),
        KIND: pd.Series(dtype="str"), LAYER: pd.Series(dtype="str"),
        EVIDENCE: pd.Series(dtype="str"), UNJUDGED: pd.Series(dtype=np.int64),
        S.RANK: pd.Series(dtype=float)})


def _windows(runs: Mapping[str, pd.DataFrame], names: Iterable[str],
             wanted: pd.Index) -> pd.DataFrame:
    """(system, query_id, doc_id, rank) of the named runs, cut to the wanted queries."""
    frames = [pd.DataFrame({S.SYSTEM: pd.Series(dtype="str"), S.QUERY_ID: pd.Series(dtype="str"),
                            S.DOC_ID: pd.Series(dtype="str"), S.RANK: pd.Series(dtype=float)})]
    for name in names:
        run = runs[name]
        S.require_columns(run, (S.QUERY_ID, S.DOC_ID, S.RANK), name)
        qid = run[S.QUERY_ID].astype(str)
        keep = qid.isin(wanted)
        frames.append(pd.DataFrame({S.SYSTEM: name, S.QUERY_ID: qid[keep],
                                    S.DOC_ID: run.loc[keep, S.DOC_ID].astype(str),
                                    S.RANK: run.loc[keep, S.RANK].astype(float)}))
    out = pd.concat(frames, ignore_index=True)
    dup = out.duplicated([S.SYSTEM, S.QUERY_ID, S.DOC_ID])
    if dup.any():
        row = out[dup].iloc[0]
        raise InputError(f"doc_id {row[S.DOC_ID]!r} repeats in query {row[S.QUERY_ID]!r}",
                         f"run {row[S.SYSTEM]!r}")
    return out


def _iso(value) -> str | None:
    if value is None or (not isinstance(value, list | tuple | np.ndarray) and pd.isna(value)):
        return None
    return pd.Timestamp(value).isoformat()


def _int(value) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _groups(value) -> list[str]:
    return [] if value is None or (np.ndim(value) == 0 and pd.isna(value)) else \
        [str(g) for g in value]


def _keyed(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` indexed by ``column`` as str (first row of a repeated key)."""
    frame = frame.drop_duplicates(column)
    return frame.set_axis(pd.Index(frame[column].astype(str), name=None), axis=0)


def _visibility_reasons(pairs: pd.DataFrame, queries: pd.DataFrame,
                        documents: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per (query_id, doc_id) pair: the ``forbidden_reasons`` reason, and the corpus reason
    alone (the pair asked by an admin of the document's own tenant, so tenant and ACL never
    break): "" where the document is live at the query's time."""
    visibility = Visibility(documents)
    reason = forbidden_reasons(pairs, queries, documents, visibility)
    asked = _keyed(queries, S.QUERY_ID).reindex(pairs[S.QUERY_ID])
    doc_tenant = (documents.drop_duplicates(S.DOC_ID).set_index(S.DOC_ID)[S.TENANT]
                  .reindex(pairs[S.DOC_ID]))
    neutral = pd.DataFrame({
        S.QUERY_ID: np.arange(len(pairs)).astype(str),
        S.ISSUED_AT: asked[S.ISSUED_AT].to_numpy(),
        S.TENANT: np.where(doc_tenant.isna(), asked[S.TENANT].astype(str),
                           doc_tenant.astype(str)),
        S.GROUPS: [()] * len(pairs), S.ROLE: ADMIN})
    corpus = visibility.reasons(neutral, pd.DataFrame({S.QUERY_ID: neutral[S.QUERY_ID],
                                                       S.DOC_ID: pairs[S.DOC_ID].to_numpy()}))
    return reason, corpus


def _chunks(missed: pd.DataFrame, answers: pd.DataFrame | None,
            documents: pd.DataFrame) -> pd.Series:
    """Per missed row (index aligned): the chunk evidence where the chunk rule applies
    (answer document missing, other chunks of its source present), else None."""
    out = pd.Series([None] * len(missed), index=missed.index, dtype=object)
    if answers is None or missed.empty:
        return out
    S.require_columns(answers, S.ANSWER_COLUMNS, "answers")
    amap = pd.DataFrame({c: answers[c].astype(str) for c in S.ANSWER_COLUMNS}).drop_duplicates(
        [S.QUERY_ID, S.DOC_ID])
    unknown = missed.loc[missed[CORPUS_REASON] == "unknown_document", [S.QUERY_ID, S.DOC_ID]]
    hits = unknown.reset_index().merge(amap, on=[S.QUERY_ID, S.DOC_ID]).set_index("index")
    if hits.empty:
        return out
    chunks = (documents.assign(_source=documents[S.SOURCE_ID].astype(str))
              .sort_values(S.DOC_ID).groupby("_source")[S.DOC_ID].agg(list))
    for label, source_id, doc_id in zip(hits.index, hits[S.SOURCE_ID], hits[S.DOC_ID],
                                        strict=True):
        present = chunks.get(source_id, [])
        if present:
            out[label] = {"source_id": source_id, "answer_doc_id": doc_id,
                          "chunks_in_corpus": [str(d) for d in present[:MAX_LISTED]],
                          "n_chunks_in_corpus": len(present)}
    return out


def _route_table(systems: Mapping[str, SystemInfo]) -> pd.DataFrame:
    rows = [(name, route, position) for name, info in systems.items()
            for position, route in enumerate(info.routes())]
    return pd.DataFrame(rows, columns=[S.SYSTEM, S.ROUTE_SYSTEM, "_position"])


def _no_facts() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in FACT_COLUMNS})


def facts(systems: Mapping[str, SystemInfo], runs: Mapping[str, pd.DataFrame],
          qrels: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame, query_ids, *,
          k: int, rel: int = 1, deep: pd.DataFrame | None = None, deep_k: int = 1000,
          answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """The facts frame: one row per failure (``classify``'s rows, unordered, arguments as
    there), columns ``FACT_COLUMNS``: what the layers' rules (``REGISTRY``) read."""
    k, deep_k = S.integer("k", k, source=SOURCE), S.integer("deep_k", deep_k, source=SOURCE)
    rel = int(rel)
    for name, info in systems.items():
        if not isinstance(info, SystemInfo):
            raise InputError(f"system {name!r}: expected a SystemInfo, got "
                             f"{type(info).__name__}", SOURCE)
        absent = [s for s in (name, *info.sources) if s not in runs]
        if absent:
            raise InputError(f"system {name!r} needs the window(s) of {', '.join(absent)}, "
                             "which runs lacks", SOURCE)
    S.require_columns(qrels, (S.QUERY_ID, S.DOC_ID, S.GRADE), "qrels")
    wanted = pd.Index(pd.unique(pd.Series(list(query_ids), dtype=object).astype(str)))
    names = list(systems)
    needed = list(dict.fromkeys([*names, *(s for i in systems.values() for s in i.sources)]))
    windows = _windows(runs, needed, wanted)

    judged = pd.DataFrame({S.QUERY_ID: qrels[S.QUERY_ID].astype(str),
                           S.DOC_ID: qrels[S.DOC_ID].astype(str),
                           S.GRADE: pd.to_numeric(qrels[S.GRADE], errors="coerce")})
    judged = judged[judged[S.QUERY_ID].isin(wanted)]
    relevant = judged[judged[S.GRADE] >= rel].drop_duplicates([S.QUERY_ID, S.DOC_ID])
    if relevant.empty or not names:
        return _no_facts()

    # the system's own ranks; a failure is a relevant row outside the top k
    own = windows[windows[S.SYSTEM].isin(names)]
    key = [S.SYSTEM, S.QUERY_ID, S.DOC_ID]
    pairs = relevant.merge(pd.DataFrame({S.SYSTEM: names}), how="cross")
    missed = pairs.merge(own, on=key, how="left")
    missed = missed[~(missed[S.RANK] <= k)]
    if missed.empty:
        return _no_facts()

    # unjudged documents in each (system, query)'s top k, in rank order (qrels)
    top = own[own[S.RANK] <= k].merge(judged[[S.QUERY_ID, S.DOC_ID]].drop_duplicates(),
                                      on=[S.QUERY_ID, S.DOC_ID], how="left", indicator=True)
    unjudged = (top[top["_merge"] == "left_only"].sort_values([S.SYSTEM, S.QUERY_ID, S.RANK])
                .groupby([S.SYSTEM, S.QUERY_ID])[S.DOC_ID].agg(list).rename(UNJUDGED_DOCS))
    missed = missed.merge(unjudged, left_on=[S.SYSTEM, S.QUERY_ID], right_index=True,
                          how="left")
    missed[UNJUDGED_DOCS] = [v if isinstance(v, list) else [] for v in missed[UNJUDGED_DOCS]]
    missed[UNJUDGED] = missed[UNJUDGED_DOCS].map(len).astype(np.int64)

    # is the document live at the query's time (corpus), may the query see it (filter), was
    # the answer's unit re-chunked away (chunk)
    distinct = missed[[S.QUERY_ID, S.DOC_ID]].drop_duplicates().reset_index(drop=True)
    reason, corpus = _visibility_reasons(distinct, queries, documents)
    distinct = distinct.assign(**{VISIBILITY_REASON: reason, CORPUS_REASON: corpus})
    missed = missed.merge(distinct, on=[S.QUERY_ID, S.DOC_ID], how="left")
    missed.index = pd.RangeIndex(len(missed))
    missed[CHUNK] = _chunks(missed, answers, documents)

    # each failure's routes: exact deep ranks and actual window ranks (representation,
    # exact_ann, fusion)
    info_of = dict(systems)
    exploded = (missed[[S.SYSTEM, S.QUERY_ID, S.DOC_ID]].reset_index()
                .merge(_route_table(systems), on=S.SYSTEM))
    if deep is not None:
        S.require_columns(deep, S.DEEP_COLUMNS, "deep ranks")
        deep_ranks = pd.DataFrame({S.ROUTE_SYSTEM: deep[S.ROUTE_SYSTEM].astype(str),
                                   S.QUERY_ID: deep[S.QUERY_ID].astype(str),
                                   S.DOC_ID: deep[S.DOC_ID].astype(str),
                                   "_deep": deep[S.RANK].astype(float)})
        deep_ranks = deep_ranks[deep_ranks["_deep"] <= deep_k]
        exploded = exploded.merge(deep_ranks, on=[S.ROUTE_SYSTEM, S.QUERY_ID, S.DOC_ID],
                                  how="left")
    else:
        exploded["_deep"] = np.nan
    exploded = exploded.merge(windows.rename(columns={S.SYSTEM: S.ROUTE_SYSTEM, S.RANK: "_window"}),
                              on=[S.ROUTE_SYSTEM, S.QUERY_ID, S.DOC_ID], how="left")
    route_info = [info_of.get(r) for r in exploded[S.ROUTE_SYSTEM]]
    ann = np.array([i is not None and i.approximate for i in route_info], dtype=bool)
    exploded["_ann"] = ann & (exploded["_deep"] <= k) & ~(exploded["_window"] <= k)
    hybrid = exploded[S.SYSTEM].map(lambda s: info_of[s].route == FUSED).astype(bool)
    exploded["_fused_away"] = hybrid & (exploded["_window"] <= k)
    exploded["_found"] = exploded["_deep"].notna()
    exploded = exploded.sort_values(["index", "_position"], kind="stable")
    by_row = exploded.groupby("index")
    for column, fact in ((FOUND_DEEP, "_found"), (ANN_MISS, "_ann"),
                         (FUSED_AWAY, "_fused_away")):
        missed[column] = by_row[fact].any().reindex(missed.index, fill_value=False).astype(bool)
    covered = _covered(deep)
    checked = {name: _deep_checked(info, deep, covered) for name, info in systems.items()}
    missed[DEEP_CHECKED] = missed[S.SYSTEM].map(checked).astype(bool)
    per_route: dict[int, list[tuple]] = {}
    for row in exploded[["index", S.ROUTE_SYSTEM, "_deep", "_window", "_ann"]].itertuples(
            index=False, name=None):
        per_route.setdefault(row[0], []).append(row[1:])
    missed[ROUTE_FACTS] = [per_route.get(i, []) for i in missed.index]
    return missed[list(FACT_COLUMNS)]


def _covered(deep: pd.DataFrame | None) -> set:
    """The routes with an exact deep window."""
    return set() if deep is None else set(deep[S.ROUTE_SYSTEM].astype(str))


def _deep_checked(info: SystemInfo, deep: pd.DataFrame | None, covered: set) -> bool:
    """Whether every route of the system has an exact deep window (representation checked)."""
    routes = info.routes()
    return deep is not None and bool(routes) and all(r in covered for r in routes)


def classify(systems: Mapping[str, SystemInfo], runs: Mapping[str, pd.DataFrame],
             qrels: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame, query_ids, *,
             k: int, rel: int = 1, deep: pd.DataFrame | None = None, deep_k: int = 1000,
             answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (system of ``systems``, query of ``query_ids``, qrels row with grade ≥ rel)
    whose document is not in that system's top ``k``, classified by the first layer that
    lost it: the first ``REGISTRY`` entry that claims it (module docstring).

    ``runs``: system name -> window (query_id, doc_id, rank[, score]) for every system of
    ``systems`` and every hybrid's sources. ``deep``: ``exact_ranks`` output (only ranks ≤
    ``deep_k`` count); None skips the representation and exact_ann checks. ``answers``:
    (query_id, source_id, doc_id) answer map for the chunk check. A hybrid's source that is
    not in ``systems`` is taken as exact (its index is unknown, so no exact_ann blame).

    Columns ``FAILURE_COLUMNS``: system, query_id, doc_id, grade (float), kind ("relevance"),
    layer (a ``LAYERS`` entry), evidence (JSON object), unjudged_in_top_k (documents in the
    system's top k with no qrels row for the query), rank (the system's own rank of the
    document, NaN if its window lacks it). Ordered by system (as in ``systems``), query_id,
    grade descending, doc_id.
    """
    tick = time.perf_counter()
    missed = facts(systems, runs, qrels, queries, documents, query_ids, k=k, rel=rel,
                   deep=deep, deep_k=deep_k, answers=answers)
    if missed.empty:
        return empty()
    k, deep_k = int(k), int(deep_k)
    layer = assign(missed)

    # evidence, row by row (facts of the assigned layer + notes on unchecked layers)
    q, d = _keyed(queries, S.QUERY_ID), _keyed(documents, S.DOC_ID)
    covered = _covered(deep)
    notes_of = {name: _notes(info, deep is not None, _deep_checked(info, deep, covered),
                             covered, answers is not None, set(systems), documents.empty)
                for name, info in systems.items()}
    evidence = []
    for i, row in enumerate(missed.itertuples(index=False)):
        found = _evidence(layer[i], row, row.route_facts, row.chunk, systems[row.system], q, d,
                          k, deep_k, deep is not None)
        evidence.append(json.dumps(found | {"notes": notes_of[row.system]}, default=str))

    names = list(systems)
    out = pd.DataFrame({
        S.SYSTEM: missed[S.SYSTEM].astype(str), S.QUERY_ID: missed[S.QUERY_ID].astype(str),
        S.DOC_ID: missed[S.DOC_ID].astype(str), S.GRADE: missed[S.GRADE].astype(float),
        KIND: "relevance", LAYER: layer, EVIDENCE: evidence,
        UNJUDGED: missed[UNJUDGED].astype(np.int64), S.RANK: missed[S.RANK].astype(float)})
    out["_system"] = pd.Index(names).get_indexer(out[S.SYSTEM])
    out = out.sort_values(["_system", S.QUERY_ID, S.GRADE, S.DOC_ID],
                          ascending=[True, True, False, True], kind="stable")
    log.info("failures: %d missed relevant documents over %d systems classified in %.2f s",
             len(out), len(names), time.perf_counter() - tick)
    return out.drop(columns="_system").reset_index(drop=True)[list(FAILURE_COLUMNS)]


def _notes(info: SystemInfo, have_deep: bool, checked: bool, covered: set,
           have_answers: bool, known: set, no_documents: bool = False) -> dict:
    """Layer -> why it was not (or could not be) checked for this system (``no_documents``:
    the documents table is empty, a project of team runs without a corpus)."""
    notes = {}
    if not have_answers:
        notes["chunk"] = NOTE_NO_ANSWERS
    if no_documents:
        notes["corpus"] = notes["filter"] = NOTE_NO_DOCUMENTS
    if info.route == "external":
        for layer in ("representation", "exact_ann", "fusion"):
            notes[layer] = NOTE_EXTERNAL
    elif not have_deep:
        notes["representation"] = notes["exact_ann"] = NOTE_NO_DEEP
    elif not checked:
        lacking = [r for r in info.routes() if r not in covered]
        notes["representation"] = f"not checked: no exact deep window of {', '.join(lacking)}"
    unknown = [s for s in info.sources if s not in known]
    if unknown and "exact_ann" not in notes:
        notes["exact_ann"] = (f"not checked for {', '.join(unknown)}: not in systems, so its "
                              "index is unknown")
    if info.route != FUSED and "fusion" not in notes:
        notes["fusion"] = "not applicable: not a fused system"
    notes["downstream"] = (NOTE_DOWNSTREAM_EXTERNAL if info.route == "external"
                           else NOTE_DOWNSTREAM)
    return notes


def _evidence(layer: str, row, routes: list[tuple], chunk, info: SystemInfo, q: pd.DataFrame,
              d: pd.DataFrame, k: int, deep_k: int, have_deep: bool) -> dict:
    """The facts behind one failure's layer (``routes``: (route, deep rank, window rank,
    ann miss) per route of the system)."""
    rank = _int(row.rank)
    if layer == "chunk":
        return chunk
    if layer in ("corpus", "filter"):
        query = q.loc[row.query_id]
        doc = d.loc[row.doc_id] if row.doc_id in d.index else None
        reason = row.corpus_reason if layer == "corpus" else row.visibility_reason
        if layer == "corpus":
            out = {"reason": reason, "issued_at": _iso(query[S.ISSUED_AT])}
            out |= ({"published_at": None, "status": None, "deleted_at": None} if doc is None
                      else {"published_at": _iso(doc[S.PUBLISHED_AT]),
                            "status": str(doc[S.STATUS]), "deleted_at": _iso(doc[S.DELETED_AT])})
            if row.visibility_reason != reason:
                out["visibility_reason"] = row.visibility_reason
            return out
        return {"reason": reason, "doc_tenant": str(doc[S.TENANT]),
                "doc_acl": _groups(doc[S.ACL]), "query_tenant": str(query[S.TENANT]),
                "query_groups": _groups(query[S.GROUPS]), "query_role": str(query[S.ROLE])}
    deep_ranks = {r: _int(dr) for r, dr, _, _ in routes} if have_deep else None
    windows = {r: _int(w) for r, _, w, _ in routes}
    if layer == "representation":
        return {"deep_k": deep_k, "deep_ranks": deep_ranks}
    if layer == "exact_ann":
        route, exact, ann, _ = next(x for x in routes if x[3])
        return {"route": route, "k": k, "exact_rank": _int(exact), "ann_rank": _int(ann)}
    if layer == "fusion":
        return {"k": k, "source_ranks": windows, "hybrid_rank": rank, "fusion": info.fusion}
    if layer == "qrels":
        return {"k": k, "unjudged_in_top_k": int(row.unjudged_in_top_k),
                "unjudged": [str(x) for x in row.unjudged_docs[:MAX_LISTED]]}
    out = {"k": k, "system_rank": rank}
    if info.route != "external":
        out |= {"deep_k": deep_k, "deep_ranks": deep_ranks}
        if info.route == FUSED:
            out["source_ranks"] = windows
    return out
