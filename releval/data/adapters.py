"""Readers that turn real data into the documents / queries / qrels contracts
(docs/architecture.md).

- ``read_beir(folder)``: a BEIR folder: ``corpus.jsonl`` (``_id``, ``title``, ``text``,
  optional ``published_at``), ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv``
  (header ``query-id corpus-id score``; ``train``, ``dev`` -> validation, ``test``).
- ``read_tables(folder)``: contract tables ``documents.parquet``, ``queries.parquet`` and the
  optional ``judgments.parquet`` (query_id, doc_id, grade) and ``must_not_return.parquet``
  (query_id, doc_id, reason).
- ``read_runs_only(qrels, queries, runs)``: no corpus (``prepare.source: runs``): the qrels
  (TREC, BEIR TSV, CSV or parquet), the queries from a queries file (``read_query_file``) or
  else the qrels' and the runs' query ids, and an empty documents table.

Ids are str, grades int64, timestamps UTC. Bad input raises ``InputError`` naming the file,
the line (text files) or row (parquet, 1-based) and the rule; nothing is silently dropped.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import (
    existing,
    json_lines,
    read_parquet,
    read_qrels,
    read_strings,
    text_of,
)
from releval.errors import InputError

EPOCH = pd.Timestamp(0, tz="UTC")
TIME = "datetime64[us, UTC]"  # every timestamp column, as pandas parses ISO strings
QRELS_SPLITS = {"train": "train", "dev": "validation", "validation": "validation",
                "test": "test"}
QRELS_HEADER = ["query-id", "corpus-id", "score"]
SPLIT_COLUMNS = (S.QUERY_ID, S.SPLIT)


def no_must_not_return() -> pd.DataFrame:
    """An empty must_not_return table with the contract's columns and dtypes (all str)."""
    return pd.DataFrame({c: pd.Series(dtype="str") for c in S.MUST_NOT_RETURN_COLUMNS})


@dataclass(frozen=True)
class RealData:
    """Documents and queries (contract columns), qrels (query_id, doc_id, grade), the splits
    the data itself defines (query_id, split; empty when it defines none), whether the
    queries carry real issue times (False: ``issued_at`` is a stand-in) and the pairs that
    must never be returned (``S.MUST_NOT_RETURN_COLUMNS``; empty when the data has none)."""

    documents: pd.DataFrame
    queries: pd.DataFrame
    qrels: pd.DataFrame
    splits: pd.DataFrame
    has_query_times: bool
    must_not_return: pd.DataFrame = field(default_factory=no_must_not_return)


def _reject(bad: pd.Series | np.ndarray, rule, source: Path, where) -> None:
    """Raise InputError for the first True in ``bad``: ``rule(i)`` at ``where(i)``."""
    hits = np.flatnonzero(np.asarray(bad))
    if len(hits):
        raise InputError(rule(hits[0]), str(source), where(hits[0]))


def _row(i: int) -> str:
    """Where row i (0-based position) of a parquet table is: 'row i+1'."""
    return f"row {i + 1}"


def _constant(value, n: int, dtype: str = "str") -> pd.Series:
    return pd.Series([value] * n, dtype=dtype)


def _read_jsonl(path: Path, fields: tuple[str, ...]) -> tuple[dict[str, list], np.ndarray]:
    """The ``_id`` and ``fields`` (None where absent) of each record of a JSON-lines file,
    and each record's line number; blank lines are skipped."""
    columns: dict[str, list] = {name: [] for name in ("_id", *fields)}
    lines = []
    for number, record in json_lines(path):
        if not isinstance(record, dict) or record.get("_id") in (None, ""):
            raise InputError("expected a JSON object with a non-empty _id", str(path),
                             f"line {number}")
        for name, values in columns.items():
            values.append(record.get(name))
        lines.append(number)
    ids = pd.Series(columns["_id"], dtype="str")
    lines = np.array(lines, dtype=int)
    _reject(ids.duplicated(), lambda i: f"duplicate _id {ids[i]!r}", path,
            lambda i: f"line {lines[i]}")
    columns["_id"] = ids
    return columns, lines


def _text_column(values: list) -> pd.Series:
    """Optional text as pandas strings, absent -> ''."""
    return pd.Series(values, dtype="str").fillna("")


def _read_corpus(path: Path) -> pd.DataFrame:
    """corpus.jsonl as the documents contract (see ``read_beir``)."""
    columns, lines = _read_jsonl(path, (S.TITLE, S.TEXT, S.PUBLISHED_AT))
    if not len(lines):
        raise InputError("no documents: the corpus is empty", str(path))
    raw = pd.Series(columns[S.PUBLISHED_AT], dtype="str")
    published = pd.to_datetime(raw, utc=True, format="ISO8601", errors="coerce").astype(TIME)
    _reject(published.isna() & raw.notna(),
            lambda i: f"published_at must be an ISO date, got {raw[i]!r}", path,
            lambda i: f"line {lines[i]}")
    n = len(lines)
    return pd.DataFrame({
        S.DOC_ID: columns["_id"], S.TITLE: _text_column(columns[S.TITLE]),
        S.TEXT: _text_column(columns[S.TEXT]), S.SOURCE_ID: columns["_id"],
        S.PUBLISHED_AT: published.fillna(EPOCH), S.STATUS: _constant("published", n),
        S.DELETED_AT: _constant(pd.NaT, n, TIME), S.TENANT: _constant("default", n),
        S.ACL: [[] for _ in range(n)]})


def _read_queries(path: Path, issued_at: pd.Timestamp) -> pd.DataFrame:
    """queries.jsonl as the queries contract, all issued at ``issued_at`` (see ``read_beir``)."""
    columns, lines = _read_jsonl(path, (S.TEXT,))
    n = len(lines)
    return pd.DataFrame({
        S.QUERY_ID: columns["_id"], S.TEXT: _text_column(columns[S.TEXT]),
        S.ISSUED_AT: _constant(issued_at, n, TIME),
        S.USER_ID: columns["_id"],  # no users in BEIR: each query is its own user
        S.TENANT: _constant("default", n),
        S.GROUPS: [[] for _ in range(n)], S.ROLE: _constant("employee", n),
        S.TAGS: [[] for _ in range(n)], S.WEIGHT: np.ones(n)})


def _read_qrels_tsv(path: Path) -> pd.DataFrame:
    """One BEIR qrels file as (query_id, doc_id, grade), indexed by line number."""
    try:
        frame = pd.read_csv(io.StringIO(text_of(path)), sep="\t", dtype=str,
                            keep_default_na=False, quoting=csv.QUOTE_NONE, skip_blank_lines=False)
    except pd.errors.EmptyDataError:
        raise InputError(f"empty file; expected the header {' '.join(QRELS_HEADER)}",
                         str(path)) from None
    except pd.errors.ParserError as exc:  # e.g. "Expected 3 fields in line 7, saw 4"
        raise InputError(f"expected 3 tab-separated fields: {exc}".rstrip(), str(path)) from None
    if list(frame.columns) != QRELS_HEADER:
        raise InputError(f"expected the header {' '.join(QRELS_HEADER)}, got "
                         f"{' '.join(frame.columns)}", str(path), "line 1")
    frame.index = frame.index + 2  # the header is line 1
    frame = frame[~(frame.isna() | (frame == "")).all(axis=1)]
    lines = frame.index.to_numpy()
    _reject((frame.isna() | (frame == "")).any(axis=1),
            lambda i: "expected 3 tab-separated fields: query-id, corpus-id, score", path,
            lambda i: f"line {lines[i]}")
    score = pd.to_numeric(frame["score"], errors="coerce")
    _reject(score.isna() | (score != np.floor(score)),
            lambda i: f"score must be an integer, got {frame['score'].iloc[i]!r}", path,
            lambda i: f"line {lines[i]}")
    qrels = pd.DataFrame({S.QUERY_ID: frame["query-id"].astype("str"),
                          S.DOC_ID: frame["corpus-id"].astype("str"),
                          S.GRADE: score.astype(np.int64)})
    _reject(qrels.duplicated([S.QUERY_ID, S.DOC_ID]),
            lambda i: f"duplicate judgment of query {qrels[S.QUERY_ID].iloc[i]!r}, "
                      f"document {qrels[S.DOC_ID].iloc[i]!r}", path,
            lambda i: f"line {lines[i]}")
    return qrels.reset_index(drop=True)


def _read_qrels(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All qrels/<split>.tsv files: qrels and the split of each judged query."""
    paths = sorted(folder.glob("*.tsv"))
    if not paths:
        raise InputError("no qrels/<split>.tsv file", str(folder))
    qrels, splits = [], []
    for path in paths:
        if path.stem not in QRELS_SPLITS:
            raise InputError(f"unknown qrels split {path.stem!r}; expected one of "
                             f"{', '.join(QRELS_SPLITS)}", str(path))
        frame = _read_qrels_tsv(path)
        qrels.append(frame)
        splits.append(pd.DataFrame({S.QUERY_ID: frame[S.QUERY_ID].unique(),
                                    S.SPLIT: QRELS_SPLITS[path.stem]}, dtype="str"))
    split = pd.concat(splits, ignore_index=True)
    twice = split[S.QUERY_ID].duplicated(keep=False)
    if twice.any():
        raise InputError(f"query {split[S.QUERY_ID][twice].iloc[0]!r} is judged in more than "
                         f"one split ({', '.join(split[S.SPLIT][twice].unique())}); a query "
                         "belongs to exactly one split", str(folder))
    return pd.concat(qrels, ignore_index=True), split


def dangling(data: RealData, max_unknown_docs: float, source: str) -> dict:
    """Judgments that point nowhere: of documents not in the corpus, of unknown queries
    (counts, and the first example of each). More than ``max_unknown_docs`` of them naming
    unknown documents is an InputError: the corpus is usually the wrong one."""
    q = data.qrels
    docs = ~q[S.DOC_ID].isin(data.documents[S.DOC_ID])
    queries = ~q[S.QUERY_ID].isin(data.queries[S.QUERY_ID])
    first = lambda mask: (f"{q[S.QUERY_ID][mask].iloc[0]}/{q[S.DOC_ID][mask].iloc[0]}"  # noqa: E731
                          if mask.any() else None)
    share = docs.sum() / max(len(q), 1)
    if share > max_unknown_docs:
        raise InputError(f"{int(docs.sum())} of {len(q)} judgments ({share:.1%}) name documents "
                         f"not in the corpus (first: {first(docs)}): the wrong corpus? "
                         f"(allowed share: prepare.max_unknown_docs={max_unknown_docs})", source)
    return {"judgments": len(q), "unknown_documents": int(docs.sum()),
            "unknown_queries": int(queries.sum()), "first_unknown_document": first(docs),
            "first_unknown_query": first(queries)}


def read_beir(folder: str | Path) -> RealData:
    """A BEIR folder as contract tables.

    Documents: ``published_at`` from the record (ISO date, UTC) or 1970-01-01, status
    published, no deletion, tenant ``default``, acl [] and source_id = doc_id. Queries:
    ``issued_at`` = the latest ``published_at`` (every document visible; the data has no
    query times), user_id = query_id (no user data: clustering by user is per query), tenant
    ``default``, groups [], role employee, tags [], weight 1. Splits come from the qrels file
    names; a folder with test qrels only is a test collection: every query is a test query
    (one without judgments is undefined in every measure, counted).
    """
    folder = Path(folder)
    documents = _read_corpus(folder / "corpus.jsonl")
    latest = documents[S.PUBLISHED_AT].max() if len(documents) else EPOCH
    queries = _read_queries(folder / "queries.jsonl", latest)
    qrels, splits = _read_qrels(folder / "qrels")
    if len(splits) and set(splits[S.SPLIT]) == {"test"}:  # a test collection: every topic
        splits = pd.DataFrame({S.QUERY_ID: queries[S.QUERY_ID], S.SPLIT: "test"})
    return RealData(documents, queries, qrels, splits, has_query_times=False,
                    must_not_return=no_must_not_return())


def _read_table(path: Path, columns: tuple[str, ...], optional: tuple[str, ...] = ()
                ) -> pd.DataFrame:
    """The contract ``columns`` of a parquet file, in that order, then those of ``optional``
    it has (position i is row i + 1)."""
    frame = read_parquet(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", str(path))
    kept = [*columns, *(c for c in optional if c in frame.columns)]
    frame = frame.loc[:, kept].reset_index(drop=True)
    for column in (c for c in columns if c != S.DELETED_AT):
        _reject(frame[column].isna(), lambda i, c=column: f"{c} is missing", path, _row)
    return frame


def as_utc(values: pd.Series) -> pd.Series:
    """Timestamps as UTC: aware ones converted, naive ones taken to be UTC already, text
    parsed as ISO 8601; what does not parse is NaT (callers name the row)."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC")
    if pd.api.types.is_datetime64_dtype(values):
        return values.dt.tz_localize("UTC")
    return pd.to_datetime(values, utc=True, format="ISO8601", errors="coerce")


def _times(frame: pd.DataFrame, column: str, path: Path) -> None:
    """A timestamp column, in place, as UTC (``as_utc``); one that does not parse is an
    InputError naming its row."""
    values = frame[column]
    parsed = as_utc(values)
    _reject(parsed.isna() & values.notna(),
            lambda i: f"{column} must be a timestamp, got {values[i]!r}", path, _row)
    frame[column] = parsed.astype(TIME)


def _strings(frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    """Columns, in place, as pandas strings."""
    for column in columns:
        frame[column] = frame[column].astype("str")


def _lists(frame: pd.DataFrame, column: str, path: Path) -> None:
    """A list[str] column as Python lists (parquet gives arrays)."""
    values = frame[column]
    _reject(~values.map(lambda v: isinstance(v, list | tuple | np.ndarray)),
            lambda i: f"{column} must be a list of strings, got {values[i]!r}", path, _row)
    frame[column] = values.map(lambda v: [str(x) for x in v])


def _grades(frame: pd.DataFrame, path: Path) -> None:
    """The grade column, in place, as int64; non-integers and negatives are rejected."""
    grade = pd.to_numeric(frame[S.GRADE], errors="coerce")
    _reject(grade.isna() | (grade != np.floor(grade)) | (grade < 0),
            lambda i: f"grade must be an integer >= 0, got {frame[S.GRADE][i]!r}", path, _row)
    frame[S.GRADE] = grade.astype(np.int64)


def _read_must_not_return(path: Path) -> pd.DataFrame:
    """must_not_return.parquet (query_id, doc_id, reason: all required, non-null, str); a
    (query_id, doc_id) pair at most once. Empty when the file is absent."""
    if not path.is_file():
        return no_must_not_return()
    frame = _read_table(path, S.MUST_NOT_RETURN_COLUMNS)
    _strings(frame, S.MUST_NOT_RETURN_COLUMNS)
    query, doc = frame[S.QUERY_ID], frame[S.DOC_ID]

    def rule(i: int) -> str:
        first = int(np.flatnonzero((query == query[i]) & (doc == doc[i]))[0])
        return (f"duplicate pair query {query[i]!r}, document {doc[i]!r} (first at row "
                f"{first + 1}): a pair is listed at most once")

    _reject(frame.duplicated([S.QUERY_ID, S.DOC_ID]), rule, path, _row)
    return frame


def read_tables(folder: str | Path) -> RealData:
    """Contract tables from ``folder``: documents.parquet, queries.parquet (optionally with
    ``source``: logged or template; without it every query is logged) and, if present,
    judgments.parquet (query_id, doc_id, grade, optionally hard_negative: yes or no, never on
    a relevant grade; else no qrels) and must_not_return.parquet
    (query_id, doc_id, reason; else none); defines no splits.

    Checks what reading needs: the required columns, non-null values (deleted_at may be
    null) and types (str ids, UTC timestamps, lists, weight >= 0, a known query source,
    integer grades >= 0), and that must_not_return lists a (query_id, doc_id) pair at most
    once.
    Row invariants (unique keys, status values, deleted_at >= published_at) are left to the
    validation suite that runs after the prepare stage.
    """
    folder = Path(folder)
    path = folder / "documents.parquet"
    documents = _read_table(path, S.DOCUMENT_COLUMNS)
    _strings(documents, (S.DOC_ID, S.TITLE, S.TEXT, S.SOURCE_ID, S.STATUS, S.TENANT))
    _times(documents, S.PUBLISHED_AT, path)
    _times(documents, S.DELETED_AT, path)
    _lists(documents, S.ACL, path)

    path = folder / "queries.parquet"
    queries = _read_table(path, S.QUERY_COLUMNS, (S.QUERY_SOURCE,))
    _strings(queries, (S.QUERY_ID, S.TEXT, S.USER_ID, S.TENANT, S.ROLE))
    _times(queries, S.ISSUED_AT, path)
    _lists(queries, S.GROUPS, path)
    _lists(queries, S.TAGS, path)
    weight = pd.to_numeric(queries[S.WEIGHT], errors="coerce")
    _reject(~(weight >= 0), lambda i: f"weight must be a number >= 0, got "
            f"{queries[S.WEIGHT][i]!r}", path, _row)
    queries[S.WEIGHT] = weight.astype(float)
    if S.QUERY_SOURCE in queries.columns:  # optional: without it every query is logged
        numbered = queries.set_axis(queries.index + 1)
        numbered.attrs.update(source=str(path), unit="row")
        queries[S.QUERY_SOURCE] = pd.Series(S.query_sources(numbered, str(path)).to_numpy(),
                                            dtype="str")

    path = folder / "judgments.parquet"
    if path.is_file():
        qrels = _read_table(path, S.QRELS_COLUMNS, (S.HARD_NEGATIVE,))
        _strings(qrels, (S.QUERY_ID, S.DOC_ID))
        _grades(qrels, path)
        numbered = qrels.set_axis(qrels.index + 1)
        numbered.attrs.update(source=str(path), unit="row")
        qrels = S.checked_hard_negatives(numbered, str(path)).reset_index(drop=True)
    else:
        qrels = pd.DataFrame({S.QUERY_ID: pd.Series(dtype="str"),
                              S.DOC_ID: pd.Series(dtype="str"),
                              S.GRADE: pd.Series(dtype=np.int64)})
    splits = pd.DataFrame({c: pd.Series(dtype="str") for c in SPLIT_COLUMNS})
    return RealData(documents, queries, qrels, splits, has_query_times=True,
                    must_not_return=_read_must_not_return(folder / "must_not_return.parquet"))


# --- a runs-only project (prepare.source: runs) ------------------------------------------------

QUERY_TIMES = (S.TIMESTAMP, S.ISSUED_AT)  # a queries file's time column, by either name
TAG_SEPARATOR = "|"  # tags in a text cell: "head|typo"
QUERY_FIELDS = (S.QUERY_ID, S.TEXT, S.TAGS, *QUERY_TIMES, S.USER_ID, S.WEIGHT)


def no_documents() -> pd.DataFrame:
    """An empty documents table with the contract's columns and dtypes: a project without a
    corpus."""
    return pd.DataFrame({S.DOC_ID: pd.Series(dtype="str"), S.TITLE: pd.Series(dtype="str"),
                         S.TEXT: pd.Series(dtype="str"), S.SOURCE_ID: pd.Series(dtype="str"),
                         S.PUBLISHED_AT: pd.Series(dtype=TIME),
                         S.STATUS: pd.Series(dtype="str"),
                         S.DELETED_AT: pd.Series(dtype=TIME), S.TENANT: pd.Series(dtype="str"),
                         S.ACL: pd.Series(dtype=object)})


def _query_records(path: Path) -> pd.DataFrame:
    """A queries file as strings and lists: JSON lines (one object per line; the id as
    ``query_id`` or BEIR's ``_id``) or a table (CSV, TSV, parquet), indexed by line / row."""
    if path.suffix.lower() in (".jsonl", ".json"):
        rows, lines = [], []
        for number, record in json_lines(path):
            if not isinstance(record, dict):
                raise InputError("expected a JSON object", str(path), f"line {number}")
            if S.QUERY_ID not in record and "_id" in record:
                record[S.QUERY_ID] = record["_id"]
            rows.append({k: record.get(k) for k in QUERY_FIELDS if k in record})
            lines.append(number)
        frame = pd.DataFrame(rows, index=pd.Index(lines))
        frame.attrs.update(source=str(path), unit="line")
        return frame
    return _tsv_strings(path) if path.suffix.lower() == ".tsv" else read_strings(path)


def _tsv_strings(path: Path) -> pd.DataFrame:
    """A TSV table as strings, indexed by line (the header is line 1)."""
    try:
        frame = pd.read_csv(io.StringIO(text_of(path)), sep="\t", dtype=str,
                            keep_default_na=False, na_values=[""], quoting=csv.QUOTE_NONE)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    except pd.errors.ParserError as exc:
        raise InputError(f"{str(exc).strip().splitlines()[-1].rstrip('.')} (more fields than "
                         "the header)", str(path)) from None
    frame.index = pd.RangeIndex(2, len(frame) + 2)
    frame.attrs.update(source=str(path), unit="line")
    return frame


def _where(frame: pd.DataFrame, i: int) -> str:
    return S.where(frame, frame.index[i])


def _tag_list(value) -> list[str] | None:
    """A tags cell as a list of strings: a list (JSON, parquet), a text of tags separated by
    ``TAG_SEPARATOR``, or nothing; None when it is none of these."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return [t.strip() for t in value.split(TAG_SEPARATOR) if t.strip()]
    if isinstance(value, list | tuple | np.ndarray) and all(isinstance(t, str) for t in value):
        return [str(t) for t in value]
    return None


def read_query_file(path: str | Path) -> tuple[pd.DataFrame, bool]:
    """A runs-only project's queries file as the queries contract, and whether it carries
    issue times.

    One query per row (a table: CSV, TSV, parquet) or per line (JSON lines): ``query_id``
    (JSON lines: or BEIR's ``_id``), required and unique; optionally ``text``, ``tags`` (a
    list, or in a text cell tags separated by ``|``), ``timestamp`` (or ``issued_at``: ISO
    8601 or a datetime, UTC when naive; on every row or on none), ``user_id`` (else each
    query is its own user) and ``weight`` (≥ 0, else 1). Tenant ``default``, groups [], role
    employee. A query without a time is issued at 1970-01-01 (no document to hide: the
    project has none). A bad row is an InputError naming the file, the line or row and the
    rule.
    """
    path = existing(path)
    frame = _query_records(path)
    source = str(path)
    if S.QUERY_ID not in frame.columns:
        found = ", ".join(map(str, frame.columns)) or "none"
        raise InputError(f"missing column {S.QUERY_ID} (found: {found})", source)
    if not len(frame):
        raise InputError("no queries: the file is empty", source)
    ids = frame[S.QUERY_ID]
    bad = ids.isna() | (ids.astype(str).str.strip() == "")
    S.fail_first(frame, source, bad.to_numpy(), f"{S.QUERY_ID} is missing")
    ids = ids.astype(str)
    twice = ids.duplicated().to_numpy()
    S.fail_first(frame, source, twice, lambda i: f"duplicate {S.QUERY_ID} {ids.iloc[i]!r}: a "
                 "query is listed once")
    n = len(frame)
    text = (frame[S.TEXT].map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v))
                              else str(v)) if S.TEXT in frame.columns else _constant("", n))
    if S.TAGS in frame.columns:
        tags = frame[S.TAGS].map(_tag_list)
        S.fail_first(frame, source, tags.isna().to_numpy(),
                     lambda i: f"tags must be a list of strings or text separated by "
                               f"{TAG_SEPARATOR!r}, got {frame[S.TAGS].iloc[i]!r}")
        tags = tags.tolist()
    else:
        tags = [[] for _ in range(n)]
    named = [c for c in QUERY_TIMES if c in frame.columns]
    if len(named) > 1:
        raise InputError(f"both {' and '.join(named)} given: name the query's time once", source)
    timed = bool(named)
    if timed:
        raw = frame[named[0]]
        issued = as_utc(raw)
        S.fail_first(frame, source, (issued.isna() & raw.notna()).to_numpy(),
                     lambda i: f"{named[0]} must be a timestamp (ISO 8601), got {raw.iloc[i]!r}")
        S.fail_first(frame, source, raw.isna().to_numpy(),
                     f"{named[0]} is missing: give every query its time, or none")
        issued = pd.Series(issued.to_numpy(), dtype=TIME)
    else:
        issued = _constant(EPOCH, n, TIME)
    if S.USER_ID in frame.columns:
        users = frame[S.USER_ID]
        S.fail_first(frame, source, users.isna().to_numpy(), f"{S.USER_ID} is missing")
        users = pd.Series(users.astype(str).to_numpy(), dtype="str")
    else:
        users = pd.Series(ids.to_numpy(), dtype="str")
    if S.WEIGHT in frame.columns:
        weight = pd.to_numeric(frame[S.WEIGHT], errors="coerce")
        S.fail_first(frame, source, ~(weight >= 0).to_numpy(),
                     lambda i: f"weight must be a number >= 0, got {frame[S.WEIGHT].iloc[i]!r}")
        weight = weight.to_numpy(dtype=float)
    else:
        weight = np.ones(n)
    return pd.DataFrame({
        S.QUERY_ID: pd.Series(ids.to_numpy(), dtype="str"),
        S.TEXT: pd.Series(np.asarray(text, dtype=object), dtype="str"),
        S.ISSUED_AT: issued, S.USER_ID: users, S.TENANT: _constant("default", n),
        S.GROUPS: [[] for _ in range(n)], S.ROLE: _constant("employee", n),
        S.TAGS: tags, S.WEIGHT: weight}), timed


def read_runs_qrels(path: str | Path) -> pd.DataFrame:
    """Qrels as (query_id, doc_id, grade[, hard_negative]) by ``readers.read_qrels`` (TREC,
    BEIR TSV, CSV or parquet), checked: at least one judgment, a grade ≥ 0 on every row (a
    negative trec_eval grade is refused: write it as 0, judged not relevant) and a (query,
    document) pair at most once; each breach an InputError naming the file, the line or row
    and the rule."""
    frame = read_qrels(path)
    source = str(path)
    if not len(frame):
        raise InputError("no judgments: the qrels are empty", source)
    grade = pd.to_numeric(frame[S.GRADE], errors="coerce")
    S.fail_first(frame, source, (grade < 0).to_numpy(),
                 lambda i: f"grade {int(grade.iloc[i])} is negative: releval's grades are 0.."
                           "max_grade (write a judged non-relevant document as 0)")
    pairs = frame[[S.QUERY_ID, S.DOC_ID]].astype(str)
    twice = pairs.duplicated().to_numpy()
    S.fail_first(frame, source, twice,
                 lambda i: f"duplicate judgment of query {pairs[S.QUERY_ID].iloc[i]!r}, "
                           f"document {pairs[S.DOC_ID].iloc[i]!r}")
    kept = [S.QUERY_ID, S.DOC_ID, S.GRADE, *([S.HARD_NEGATIVE] if S.HARD_NEGATIVE in
                                             frame.columns else [])]
    out = frame.loc[:, kept].copy()
    out[S.QUERY_ID] = out[S.QUERY_ID].astype(str)
    out[S.DOC_ID] = out[S.DOC_ID].astype(str)
    out[S.GRADE] = grade.astype(np.int64)
    return out


def untimed_queries(ids: list[str]) -> pd.DataFrame:
    """The queries contract for bare query ids: no text, no tags, issued at 1970-01-01, each
    its own user."""
    n = len(ids)
    return pd.DataFrame({
        S.QUERY_ID: pd.Series(ids, dtype="str"), S.TEXT: _constant("", n),
        S.ISSUED_AT: _constant(EPOCH, n, TIME), S.USER_ID: pd.Series(ids, dtype="str"),
        S.TENANT: _constant("default", n), S.GROUPS: [[] for _ in range(n)],
        S.ROLE: _constant("employee", n), S.TAGS: [[] for _ in range(n)],
        S.WEIGHT: np.ones(n)})


def read_runs_only(qrels: str | Path, queries: str | Path | None = None,
                   run_queries: list[pd.Series] = ()) -> RealData:
    """A project without a corpus: the qrels (``read_runs_qrels``), the queries of the
    queries file (``read_query_file``) or else every query id of the qrels, then of the runs
    (``run_queries``: each run's query ids) in order of appearance, and an empty documents
    table (``no_documents``). It defines no split (every query is test, or the split is cut
    forward in time when the queries carry times)."""
    judged = read_runs_qrels(qrels)
    if queries is not None:
        table, timed = read_query_file(queries)
    else:
        ids = pd.concat([judged[S.QUERY_ID], *(q.astype(str) for q in run_queries)],
                        ignore_index=True)
        table, timed = untimed_queries(list(dict.fromkeys(ids))), False
    splits = pd.DataFrame({c: pd.Series(dtype="str") for c in SPLIT_COLUMNS})
    return RealData(no_documents(), table, judged.reset_index(drop=True), splits,
                    has_query_times=timed, must_not_return=no_must_not_return())
