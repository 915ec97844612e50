"""What a team's data holds, read once by ``releval init`` to write params that fit it.

``of_collection`` reads a BEIR folder or a folder of contract tables with the pipeline's own
readers (so a bad file is refused here as it would be by ``prepare``); ``of_judged_runs``
qrels and a queries file for a project without a corpus (the team's runs alone); ``of_log``
reads an interaction log; ``of_feedback`` a log of bandit feedback (its impressions as
interactions); ``of_run`` a team's run file. Each returns the facts the params are written
from: the grade scale, the splits the data defines, which fields carry information (times,
deletions, ACLs, tenants, tags, hard negatives, chunks, users), the risk categories present
(tagged, or recognised from the text) and a run's seed tags and statuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import EPOCH, dangling, read_beir, read_runs_only, read_tables
from releval.data.feedback import as_interactions, users
from releval.data.interactions import read_interactions
from releval.data.query_set import RISK_CATEGORIES, memberships
from releval.data.split import split_queries
from releval.errors import InputError
from releval.offpolicy.log import read_log, slate_size
from releval.params import Prepare
from releval.retrieval.external import read_team_run

FORWARD = (0.7, 0.85)  # the forward split params_writer writes for timed queries
MAX_CONTEXT_VALUES = 100  # a log column with more distinct values is an id, not a context
SEED_TAG = re.compile(r"^(?P<system>.+)@seed(?P<seed>\d+)$")


@dataclass(frozen=True)
class Collection:
    """A corpus with queries and qrels (``source``: beir | tables)."""

    source: str
    documents: int
    queries: int
    judged_queries: int
    judgments: int
    relevant: int  # judgments with grade ≥ 1
    grades: int  # distinct grades the qrels give (1: positive-only, as most BEIR sets)
    max_grade: int
    splits: dict[str, int]  # split -> queries the data puts there ({}: it defines none)
    query_times: bool  # the queries carry real issue times
    published: bool  # documents carry publication dates
    deleted: bool  # some document has a deletion time
    acl: bool  # some document is restricted to groups
    tenants: int
    roles: int
    restricted_status: bool  # some document is not plainly published (draft, archived, …)
    must_not_return: bool
    hard_negatives: bool
    chunks: bool  # several documents share a source_id
    users: bool  # queries come from users who issue several
    tags: dict[str, int]  # tag -> queries carrying it
    tagged: dict[str, int]  # risk category -> queries in it by their tags
    by_text: dict[str, int]  # risk category -> untagged queries recognised from the text
    query_ids: frozenset[str] = frozenset()  # the queries a team's run must answer

    @property
    def pooled(self) -> bool:
        """The qrels judge as many documents not relevant as relevant, as a pool does: a
        judged share (Judged@k) measures their coverage; else (positive-only qrels, every
        grade the same, or mostly relevant judgments) Judged@k measures precision."""
        return self.grades > 1 and self.judgments - self.relevant >= self.relevant


@dataclass(frozen=True)
class Log:
    """An interaction log with its items."""

    interactions: int
    users: int
    items: int
    start: pd.Timestamp
    end: pd.Timestamp
    context: list[str]  # categorical columns beside the contract's (e.g. country)
    titles: bool  # items have titles (the content route embeds them)
    user_ids: frozenset[str] = frozenset()  # the users a team's run must recommend to


@dataclass(frozen=True)
class Run:
    """A team's run file: its system tag (None: one untagged system), its seeds, statuses."""

    path: str
    system: str | None
    seeds: list[int] = field(default_factory=list)
    statuses: bool = False
    queries: int = 0
    depth: int = 0  # the longest list it holds for a query
    query_ids: frozenset[str] = frozenset()


def _counts(frame: pd.DataFrame) -> dict[str, int]:
    return {name: int(n) for name, n in frame.sum().items() if n}


class NotACollection(InputError):
    """A corpus path that holds no corpus (the CLI names its flag for qrels alone)."""

    def __init__(self, source: str):
        super().__init__("expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a "
                         "folder of tables (documents.parquet, queries.parquet, "
                         "judgments.parquet); qrels without a corpus go with the team's runs "
                         "(a project of runs only)", source)

    def __reduce__(self):
        return type(self), (self.source,)


def of_collection(path: Path) -> Collection:
    """A BEIR folder (``corpus.jsonl``) or a folder of tables (``documents.parquet``)."""
    if (path / "corpus.jsonl").is_file():
        source, data = "beir", read_beir(path)
    elif (path / "documents.parquet").is_file():
        source, data = "tables", read_tables(path)
    else:
        raise NotACollection(str(path))
    docs, queries, qrels = data.documents, data.queries, data.qrels
    if not len(qrels):
        raise InputError("no judgments: releval init needs the qrels the systems are "
                         "evaluated on", str(path))
    # judgments of documents the corpus lacks: refused as prepare refuses them (at the
    # default prepare.max_unknown_docs), before any file of the project is written
    dangling(data, Prepare().max_unknown_docs, str(path))
    member, text = memberships(queries.reset_index(drop=True), RISK_CATEGORIES)
    tags = queries[S.TAGS].explode().dropna().astype(str)
    return Collection(
        source=source, documents=len(docs), queries=len(queries),
        judged_queries=int(qrels[S.QUERY_ID].nunique()), judgments=len(qrels),
        relevant=int((qrels[S.GRADE] >= 1).sum()), grades=int(qrels[S.GRADE].nunique()),
        max_grade=int(qrels[S.GRADE].max()),
        splits={str(k): int(v) for k, v in data.splits[S.SPLIT].value_counts().items()},
        query_times=bool(data.has_query_times),
        published=bool((docs[S.PUBLISHED_AT] != EPOCH).any()),
        deleted=bool(docs[S.DELETED_AT].notna().any()),
        acl=bool(docs[S.ACL].map(len).gt(0).any()),
        tenants=int(docs[S.TENANT].nunique()), roles=int(queries[S.ROLE].nunique()),
        restricted_status=bool((docs[S.STATUS] != "published").any()),
        must_not_return=bool(len(data.must_not_return)),
        hard_negatives=bool(S.hard_negative_marks(qrels, str(path)).any()),
        chunks=bool(docs[S.SOURCE_ID].duplicated().any()),
        users=bool(queries[S.USER_ID].duplicated().any()),
        tags={str(k): int(v) for k, v in tags.value_counts().items()},
        tagged=_counts(member & ~text), by_text=_counts(text),
        query_ids=frozenset(queries[S.QUERY_ID].astype(str)))


@dataclass(frozen=True)
class JudgedRuns:
    """A project without a corpus: qrels and (optionally) a queries file, read as ``prepare``
    reads them (``releval.data.adapters.read_runs_only``)."""

    judgments: int
    judged_queries: int
    queries: int  # the queries file's, else the qrels' and the runs' query ids
    queries_file: bool
    max_grade: int
    relevant: int  # judgments with grade ≥ 1
    query_times: bool
    hard_negatives: bool
    text: bool  # the queries carry text
    users: bool  # queries come from users who issue several
    tags: dict[str, int]  # over the evaluated queries (a forward split's test queries)
    tagged: dict[str, int]
    by_text: dict[str, int]
    query_ids: frozenset[str] = frozenset()  # the queries file's, else the judged queries

    @property
    def pooled(self) -> bool:
        """The qrels judge as many documents not relevant as relevant, as a pool does: a
        judged share (Judged@k) measures their coverage; else (relevant judgments only, or
        mostly) Judged@k measures precision, not coverage."""
        return self.judgments - self.relevant >= self.relevant


def of_judged_runs(qrels: Path, queries: Path | None, runs: dict[str, Path]) -> JudgedRuns:
    """qrels (TREC, BEIR TSV, CSV or parquet), the optional queries file and the runs' query
    ids (the queries when no file is given)."""
    ids = [] if queries is not None else [read_team_run(str(path))[S.QUERY_ID]
                                          for path in runs.values()]
    data = read_runs_only(qrels, queries, ids)
    q, judged = data.queries, data.qrels
    if data.has_query_times:  # tags are counted where they are evaluated: the test split
        split = split_queries(q, "quantiles", quantiles=FORWARD).table
        q = q[(split[S.SPLIT] == "test").to_numpy()]
    member, text = memberships(q.reset_index(drop=True), RISK_CATEGORIES)
    tags = q[S.TAGS].explode().dropna().astype(str)
    return JudgedRuns(
        judgments=len(judged), judged_queries=int(judged[S.QUERY_ID].nunique()),
        queries=len(data.queries), queries_file=queries is not None,
        max_grade=max(1, int(judged[S.GRADE].max())),
        relevant=int((judged[S.GRADE] >= 1).sum()), query_times=data.has_query_times,
        hard_negatives=bool(S.hard_negative_marks(judged, str(qrels)).any()),
        text=bool(data.queries[S.TEXT].astype(str).str.strip().ne("").any()),
        users=bool(data.queries[S.USER_ID].duplicated().any()),
        tags={str(k): int(v) for k, v in tags.value_counts().items()},
        tagged=_counts(member & ~text), by_text=_counts(text),
        query_ids=frozenset((data.queries if queries is not None else judged)[S.QUERY_ID]
                            .astype(str)))


def of_log(path: Path) -> Log:
    """A folder with interactions.{csv,parquet} and items.{csv,parquet}."""
    log, items = read_interactions(path)
    extra = [c for c in log.columns if c not in S.INTERACTION_COLUMNS
             and not pd.api.types.is_numeric_dtype(log[c])
             and 1 < log[c].nunique() <= MAX_CONTEXT_VALUES]
    return Log(interactions=len(log), users=int(log[S.USER_ID].nunique()), items=len(items),
               start=log[S.TIMESTAMP].min(), end=log[S.TIMESTAMP].max(), context=extra,
               titles=S.TITLE in items.columns and bool(items[S.TITLE].astype(str)
                                                         .str.strip().ne("").any()),
               user_ids=frozenset(log[S.USER_ID].astype(str)))


@dataclass(frozen=True)
class Feedback:
    """Logged bandit feedback read as interactions (``releval.data.feedback``): the ``log``
    of its impressions, its positive rewards (clicks), the slate it shows, how its users are
    told apart."""

    log: Log
    positives: int
    slate: int
    users_from: str


def of_feedback(path: Path) -> Feedback:
    """A log of bandit feedback (``releval.offpolicy.log.read_log``: the Open Bandit layout
    or the documented table)."""
    log = read_log(path)
    interactions, items = as_interactions(log)
    stamps = interactions[S.TIMESTAMP]
    return Feedback(Log(interactions=len(interactions),
                        users=int(interactions[S.USER_ID].nunique()), items=len(items),
                        start=stamps.min(), end=stamps.max(), context=[], titles=False,
                        user_ids=frozenset(interactions[S.USER_ID].astype(str))),
                    positives=int(interactions[S.LABEL].sum()), slate=slate_size(log),
                    users_from=users(log)[1])


def of_run(name: str, path: Path) -> Run:
    """A run file's tags: one system, or one system's seeds ``<system>@seed<k>``; each
    system's rows checked against the run contract (``S.check_run``: a document once per
    query, …), as the candidates stage would."""
    run = read_team_run(str(path))
    parts = run.groupby(S.SYSTEM, observed=True, sort=False) if S.SYSTEM in run.columns \
        else [(None, run)]
    for _, part in parts:
        part.attrs.update(run.attrs)
        S.check_run(part)
    tags = sorted(run[S.SYSTEM].astype(str).unique()) if S.SYSTEM in run.columns else []
    seeded = [m for m in map(SEED_TAG.match, tags) if m]
    statuses = S.RUN_STATUS in run.columns
    ids = frozenset(run[S.QUERY_ID].astype(str))
    queries = len(ids)
    keys = [S.QUERY_ID, *([S.SYSTEM] if S.SYSTEM in run.columns else [])]
    depth = int(run.groupby(keys, observed=True).size().max()) if len(run) else 0
    if seeded and len(seeded) == len(tags) and len({m["system"] for m in seeded}) == 1:
        system = seeded[0]["system"]
        return Run(str(path), None if system == name else system,
                   sorted(int(m["seed"]) for m in seeded), statuses, queries, depth, ids)
    if len(tags) > 1:
        raise InputError(f"run {name!r} holds {len(tags)} systems ({', '.join(tags[:5])}); "
                         "give one file per system, or one system's seeds tagged "
                         "<system>@seed<k>", str(path))
    return Run(str(path), None, [], statuses, queries, depth, ids)


def unmatched(run: Run, known: frozenset[str], what: str, users: bool = False) -> None:
    """A team's run none of whose queries is one of the data's (``known``: query ids, or
    with ``users`` user ids, a recommendation run's query ids being ``<user>@<split>``):
    refused, naming the run file (``run.path``: as the user gave it). A run that answers
    some of the data's queries is evaluated, its missing queries counted."""
    ids = {q.rpartition("@")[0] or q for q in run.query_ids} if users else run.query_ids
    if not known or not ids or ids & known:
        return
    first = sorted(run.query_ids)[0]
    raise InputError(f"none of its {len(run.query_ids):,} queries is among the {what} "
                     f"({len(known):,}; the run's first: {first!r}): a run of other data, or "
                     "other ids for the same queries", run.path)

