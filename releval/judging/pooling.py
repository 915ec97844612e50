"""Pooling for blind judging: the union of every system's top ``depth`` candidates, blind ids,
incremental rounds, the export judges see (CSV, Label Studio tasks and config), and the holes
left for the next round.

Pool table (docs/architecture.md, data contracts): one row per (query_id, doc_id), sorted by
query_id then doc_id, with pool_id, blind_id, systems (sorted names of the systems whose top
``depth`` holds the pair; never exported), min_rank (the best rank any of them gave it) and
round (1 for the first build, one more for each round that added pairs or systems).

- ``pool_id`` = "pool-" + 12 hex chars of sha256 over (seed, depth, corpus_digest): the same
  settings give the same pool, and a pool only grows with the same settings.
- ``blind_id`` = "B" + 12 hex chars of sha256(f"{seed}|{pool_id}|{query_id}|{doc_id}"): stable
  for a seed, independent of the systems and of row order, and never changed once issued.
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from releval.data import contracts as S
from releval.errors import InputError
from releval.judging.guidelines import Guideline

QUERY = "query"
NOTES = "notes"

EXPORT_COLUMNS = (S.BLIND_ID, S.POOL_ID, QUERY, S.TITLE, S.TEXT, S.GRADE, S.ANNOTATOR, NOTES)
TASK_FIELDS = (S.BLIND_ID, S.POOL_ID, QUERY, S.TITLE, S.TEXT)
UNJUDGED_COLUMNS = (S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.RANK)

SOURCE = "pooling"
PAIR = [S.QUERY_ID, S.DOC_ID]
_DIGEST_CHUNK = 10_000  # rows per json.dumps call; the digest does not depend on it


@dataclass(frozen=True)
class Pool:
    """A pool: ``table`` (S.POOL_COLUMNS) and its JSON-ready ``identity``: pool_id, seed, depth,
    corpus_digest, systems (every system pooled), pairs (rows of the table) and rounds, a list
    of {"round", "systems" (the systems that round added), "pairs" (the pairs it added)}."""

    table: pd.DataFrame
    identity: dict


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _hashes(texts: pd.Series, length: int = 64) -> list[str]:
    """The first ``length`` hex chars of sha256 of each text."""
    return [hashlib.sha256(t.encode("utf-8")).hexdigest()[:length] for t in texts.tolist()]




def _unique(frame: pd.DataFrame, keys: list[str], source: str) -> None:
    dup = frame.duplicated(keys)
    if dup.any():
        label = dup.idxmax()
        key = ", ".join(f"{k} {frame.at[label, k]!r}" for k in keys)
        raise InputError(f"{key} is not unique", source, S.where(frame, label))


def _top(runs: Mapping[str, pd.DataFrame], k: int) -> pd.DataFrame:
    """Every system's top ``k`` per query, stacked: system, query_id, doc_id, rank (int64),
    after checking each run: ids present, rank an integer ≥ 1, pairs and ranks unique."""
    if not isinstance(runs, Mapping) or not runs:
        raise InputError("need at least one run keyed by system name", SOURCE)
    frames = []
    for system, run in runs.items():
        source = run.attrs.get("source", f"run {system!r}")
        if not isinstance(system, str) or not system:
            raise InputError(f"system names must be non-empty strings, got {system!r}", source)
        S.require_columns(run, (S.QUERY_ID, S.DOC_ID, S.RANK), source)
        rank = pd.to_numeric(run[S.RANK], errors="coerce")
        checks = (
            (run[S.QUERY_ID].isna() | run[S.DOC_ID].isna(), "query_id and doc_id are required"),
            (~(rank >= 1) | (rank != np.floor(rank)), "rank must be an integer ≥ 1"),
            (run.duplicated(PAIR), "doc_id repeats within a query"),
            (run.assign(_rank=rank).duplicated([S.QUERY_ID, "_rank"]),
             "rank repeats within a query"),
        )
        for bad, rule in checks:
            if bad.any():
                raise InputError(rule, source, S.where(run, bad.idxmax()))
        frames.append(pd.DataFrame({S.SYSTEM: system, S.QUERY_ID: run[S.QUERY_ID],
                                    S.DOC_ID: run[S.DOC_ID], S.RANK: rank.astype(np.int64)}))
    long = pd.concat(frames, ignore_index=True).sort_values(
        [S.SYSTEM, S.QUERY_ID, S.RANK], kind="stable", ignore_index=True)
    return long.groupby([S.SYSTEM, S.QUERY_ID], sort=False).head(k).reset_index(drop=True)


def _collapse(long: pd.DataFrame) -> pd.DataFrame:
    """(system, query_id, doc_id, rank) rows → one row per pair, sorted by pair: systems (sorted
    unique list) and min_rank."""
    long = long.assign(**{S.MIN_RANK: long.groupby(PAIR)[S.RANK].transform("min")})
    long = long.sort_values([*PAIR, S.SYSTEM], kind="stable").drop_duplicates([*PAIR, S.SYSTEM])
    starts = np.flatnonzero(~long.duplicated(PAIR).to_numpy())  # pairs are contiguous
    offsets = pa.array(np.append(starts, len(long)), type=pa.int64())
    systems = pa.LargeListArray.from_arrays(offsets, pa.array(long[S.SYSTEM].tolist()))
    pairs = long.iloc[starts].loc[:, [*PAIR, S.MIN_RANK]].reset_index(drop=True)
    return pairs.assign(**{S.SYSTEMS: systems.to_pylist(),
                           S.MIN_RANK: pairs[S.MIN_RANK].astype(np.int64)})


def _rounds(table: pd.DataFrame) -> list[dict]:
    """The rounds of a pool table read without its identity: each system is credited to the
    latest round whose pairs it holds, which is the round that pooled it whenever that round's
    run of it added at least one pair."""
    credited = (table[[S.SYSTEMS, S.ROUND]].explode(S.SYSTEMS).dropna()
                .groupby(S.SYSTEMS)[S.ROUND].max())
    added = table[S.ROUND].value_counts()
    return [{"round": int(r), "systems": sorted(credited.index[credited == r]),
             "pairs": int(added[r])} for r in sorted(added.index)]


def _previous(previous: Pool | pd.DataFrame, pool_id: str) -> tuple[pd.DataFrame, list[dict]]:
    """The earlier pool's table and rounds, after checking that it is this pool."""
    table = previous.table if isinstance(previous, Pool) else previous
    source = table.attrs.get("source", "previous pool")
    S.require_columns(table, S.POOL_COLUMNS, source)
    ids = sorted({str(i) for i in table[S.POOL_ID].dropna()} |
                 ({str(previous.identity.get(S.POOL_ID))} if isinstance(previous, Pool) else set()))
    if ids != [pool_id]:
        raise InputError(f"the previous pool is {', '.join(ids) or 'empty'}, built with another "
                         f"seed, depth or corpus than this one ({pool_id}); extend a pool only "
                         "with its own settings, or start a new pool", source)
    _unique(table, PAIR, source)
    rounds = previous.identity["rounds"] if isinstance(previous, Pool) else _rounds(table)
    return table, [dict(r, systems=list(r["systems"])) for r in rounds]


def pool_id_of(seed: int, depth: int, corpus_digest: str) -> str:
    """A pool's identity: "pool-" + 12 hex of sha256 over (corpus digest, depth, seed)."""
    key = json.dumps({"corpus_digest": corpus_digest, "depth": depth, "seed": seed},
                     sort_keys=True)
    return "pool-" + _sha256(key)[:12]


def build_pool(runs: dict[str, pd.DataFrame], depth: int, seed: int, corpus_digest: str,
               previous: Pool | pd.DataFrame | None = None) -> Pool:
    """Pool the top ``depth`` (by rank) of each run (query_id, doc_id, rank, …; keyed by system).

    With ``previous`` (an earlier Pool, or its table, e.g. read back from parquet) the pool
    grows: its pairs keep their blind ids and rounds, pairs it lacks are added with round =
    its last round + 1, and the systems of the runs that also hold an existing pair join its
    ``systems`` (min_rank updated), so nothing already judged needs judging again. A call that
    adds no pair and no system opens no round. Given a bare table, the identity's earlier
    rounds are rebuilt by ``_rounds``; pass the Pool to keep them exactly. InputError for a
    previous pool with another pool_id, bad runs, or a blind id collision.
    """
    depth = S.integer("depth", depth, 1, SOURCE)
    seed = S.integer("seed", seed, None, SOURCE)
    if not isinstance(corpus_digest, str) or not corpus_digest:
        raise InputError(f"corpus_digest must be a non-empty string, got {corpus_digest!r}",
                         SOURCE)
    pool_id = pool_id_of(seed, depth, corpus_digest)
    long = _top(runs, depth)
    if previous is None:
        rounds = []
        table = _collapse(long).assign(**{S.BLIND_ID: None, S.ROUND: np.nan})
    else:
        old, rounds = _previous(previous, pool_id)
        earlier = (old.loc[:, [*PAIR, S.SYSTEMS, S.MIN_RANK]].explode(S.SYSTEMS)
                   .rename(columns={S.SYSTEMS: S.SYSTEM, S.MIN_RANK: S.RANK}))
        table = _collapse(pd.concat([earlier, long], ignore_index=True)).merge(
            old.loc[:, [*PAIR, S.BLIND_ID, S.ROUND]], on=PAIR, how="left", validate="one_to_one")
    added = table[S.ROUND].isna().to_numpy()
    known = {s for r in rounds for s in r["systems"]}
    new_systems = sorted(set(runs) - known)
    last = max((r["round"] for r in rounds), default=0)
    if added.any() or new_systems:
        rounds.append({"round": last + 1, "systems": new_systems, "pairs": int(added.sum())})
    new = table.loc[added]
    table.loc[added, S.BLIND_ID] = _blind_ids(seed, pool_id, new[S.QUERY_ID], new[S.DOC_ID])
    table[S.BLIND_ID] = table[S.BLIND_ID].astype(str)
    table[S.ROUND] = table[S.ROUND].fillna(last + 1).astype(np.int64)
    table[S.POOL_ID] = pool_id
    clash = table[S.BLIND_ID].duplicated(keep=False)
    if clash.any():
        pairs = table.loc[clash, PAIR].head(2).to_records(index=False).tolist()
        raise InputError(f"blind_id {table.loc[clash, S.BLIND_ID].iloc[0]} is shared by pairs "
                         f"{pairs}; build the pool with another seed", SOURCE)
    identity = {S.POOL_ID: pool_id, "seed": seed, "depth": depth, "corpus_digest": corpus_digest,
                "systems": sorted(known | set(runs)), "pairs": len(table), "rounds": rounds}
    return Pool(table.loc[:, list(S.POOL_COLUMNS)], identity)


def grow_pool(runs: dict[str, pd.DataFrame], documents: pd.DataFrame, query_ids: pd.Series,
              depth: int, seed: int, previous: pd.DataFrame | None) -> Pool:
    """``build_pool`` of the runs' rows for ``query_ids``, over ``corpus_digest(documents)``.

    ``previous`` (a pool table read back) is extended only when it is this pool (its pool_id
    is ``pool_id_of(seed, depth, digest)``); a pool of other settings, an empty table or None
    starts a new pool.
    """
    runs = {name: run[run[S.QUERY_ID].isin(query_ids)] for name, run in runs.items()}
    digest = corpus_digest(documents)
    same = previous is not None and not previous.empty and (
        previous[S.POOL_ID].iloc[0] == pool_id_of(seed, depth, digest))
    return build_pool(runs, depth, seed, digest, previous if same else None)


def _blind_ids(seed: int, pool_id: str, query_id: pd.Series, doc_id: pd.Series) -> list[str]:
    """Per pair, "B" + 12 hex chars of sha256(f"{seed}|{pool_id}|{query_id}|{doc_id}")."""
    texts = f"{seed}|{pool_id}|" + query_id.astype(str) + "|" + doc_id.astype(str)
    return ["B" + h for h in _hashes(texts, 12)]


def corpus_digest(documents: pd.DataFrame) -> str:
    """sha256 (hex) over (doc_id, title, text) of every document in doc_id order: the same
    for the same documents in any row order and whatever other columns they have; a null field
    hashes differently from an empty one. InputError for a missing column or repeated doc_id."""
    source = documents.attrs.get("source", "documents")
    columns = [S.DOC_ID, S.TITLE, S.TEXT]
    S.require_columns(documents, columns, source)
    _unique(documents, [S.DOC_ID], source)
    rows = documents.loc[:, columns].sort_values(S.DOC_ID, kind="stable").astype(object)
    rows = rows.where(rows.notna(), None).to_numpy()
    digest = hashlib.sha256()
    for start in range(0, len(rows), _DIGEST_CHUNK):
        chunk = json.dumps(rows[start:start + _DIGEST_CHUNK].tolist(), ensure_ascii=False,
                           separators=(",", ":"), default=str)
        digest.update(chunk[1:-1].encode("utf-8") + b",")  # '[a,b,…],' whatever the chunking
    return digest.hexdigest()


def blind_export(pool: Pool | pd.DataFrame, documents: pd.DataFrame, queries: pd.DataFrame,
                 seed: int, round: int | None = None) -> pd.DataFrame:
    """What judges see (EXPORT_COLUMNS): blind_id, pool_id, query (its text), title, text, and
    empty grade, annotator and notes; never doc_id, query_id, systems, ranks or scores.
    ``pool`` is a Pool or its table.

    Rows are grouped by query, queries in a seeded shuffled order and rows shuffled within each
    query; the order depends only on ``seed`` and the pool's contents. ``round`` keeps only the
    pairs that round added (what is left to judge after an incremental build). InputError for a
    pooled document or query missing from its table.
    """
    seed = S.integer("seed", seed, None, SOURCE)
    table = pool.table if isinstance(pool, Pool) else pool
    table = table if round is None else table.loc[table[S.ROUND] == round]
    docs_source = documents.attrs.get("source", "documents")
    queries_source = queries.attrs.get("source", "queries")
    S.require_columns(documents, (S.DOC_ID, S.TITLE, S.TEXT), docs_source)
    S.require_columns(queries, (S.QUERY_ID, S.TEXT), queries_source)
    _unique(documents, [S.DOC_ID], docs_source)
    _unique(queries, [S.QUERY_ID], queries_source)
    for key, frame, source in ((S.DOC_ID, documents, docs_source),
                               (S.QUERY_ID, queries, queries_source)):
        absent = ~table[key].isin(frame[key])
        if absent.any():
            raise InputError(f"{absent.sum()} pooled {key}(s) missing, e.g. "
                             f"{table.loc[absent, key].iloc[0]!r}", source)
    # seeded pseudo-random sort keys, independent of row order; sort before joining the texts
    rows = table.loc[:, [S.BLIND_ID, S.POOL_ID, *PAIR]].assign(
        _query_key=_hashes(f"{seed}|" + table[S.POOL_ID] + "|" + table[S.QUERY_ID].astype(str)),
        _row_key=_hashes(f"{seed}|" + table[S.BLIND_ID]))
    rows = (rows.sort_values(["_query_key", "_row_key"], kind="stable", ignore_index=True)
            .merge(queries.loc[:, [S.QUERY_ID, S.TEXT]].rename(columns={S.TEXT: QUERY}),
                   on=S.QUERY_ID, how="left")
            .merge(documents.loc[:, [S.DOC_ID, S.TITLE, S.TEXT]], on=S.DOC_ID, how="left"))
    rows[[S.TITLE, S.TEXT, QUERY]] = rows[[S.TITLE, S.TEXT, QUERY]].fillna("")
    return rows.assign(**{S.GRADE: "", S.ANNOTATOR: "", NOTES: ""}).loc[:, list(EXPORT_COLUMNS)]


def to_judge(pool: Pool, documents: pd.DataFrame, queries: pd.DataFrame,
             seed: int) -> pd.DataFrame:
    """``blind_export`` of the pairs the pool's latest round added: what is left to judge."""
    latest = int(pool.table[S.ROUND].max()) if len(pool.table) else None
    return blind_export(pool.table, documents, queries, seed, round=latest)


def write_csv(export: pd.DataFrame, path: str | Path) -> None:
    """The export as UTF-8 CSV with a header row, no index."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    export.to_csv(path, index=False, encoding="utf-8")


def label_studio_tasks(export: pd.DataFrame, guideline: Guideline) -> list[dict]:
    """The export as Label Studio tasks: [{"data": {blind_id, pool_id, query, title, text,
    guideline}}], ``guideline`` being the version, so annotations exported from Label Studio
    carry the guideline they were made under. Pair them with ``label_config``."""
    S.require_columns(export, TASK_FIELDS, "export")
    records = export.loc[:, list(TASK_FIELDS)].astype(object).to_dict("records")
    return [{"data": {**record, "guideline": guideline.version}} for record in records]


def write_label_studio(tasks: list[dict], path: str | Path) -> None:
    """Label Studio tasks as the JSON file Label Studio imports (UTF-8, indent 1)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")


def label_config(guideline: Guideline) -> str:
    """Label Studio labelling config (XML) for the tasks of ``label_studio_tasks``: the query,
    the document title and text, a required single "grade" choice of "0".."3" whose hints are
    the guideline's grade meanings, optional notes, and the guideline in a collapsible panel."""
    view = ET.Element("View")
    for header, name in (("Query", QUERY), ("Document", S.TITLE)):
        ET.SubElement(view, "Header", value=header, size="5")
        ET.SubElement(view, "Text", name=name, value=f"${name}")
    ET.SubElement(view, "Text", name=S.TEXT, value=f"${S.TEXT}")
    ET.SubElement(view, "Header", value=f"Grade (guideline {guideline.version})", size="5")
    choices = ET.SubElement(view, "Choices", name=S.GRADE, toName=S.TEXT, choice="single",
                            required="true", showInline="true")
    for grade, meaning in guideline.grades.items():
        ET.SubElement(choices, "Choice", value=str(grade), hint=meaning)
    ET.SubElement(view, "TextArea", name=NOTES, toName=S.TEXT, rows="2",
                  placeholder="Notes (optional)")
    panel = ET.SubElement(ET.SubElement(view, "Collapse"), "Panel",
                          value=f"Guideline {guideline.version}")
    ET.SubElement(ET.SubElement(panel, "View"), "Header", value=guideline.text, size="6",
                  style="white-space: pre-wrap; font-weight: normal")
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"


def unjudged(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, k: int) -> pd.DataFrame:
    """Every (system, query_id, doc_id, rank) in a system's top ``k`` whose (query_id, doc_id)
    has no row in ``qrels`` (any grade counts as judged), sorted by system, query_id, rank:
    the holes to pool in the next round."""
    k = S.integer("k", k, 1, SOURCE)
    S.require_columns(qrels, PAIR, qrels.attrs.get("source", "qrels"))
    long = _top(runs, k)
    judged = qrels.loc[:, PAIR].drop_duplicates().assign(_judged=True)
    holes = long.merge(judged, on=PAIR, how="left")["_judged"].isna().to_numpy()
    return long.loc[holes, list(UNJUDGED_COLUMNS)].reset_index(drop=True)
