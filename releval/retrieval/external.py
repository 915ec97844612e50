"""The external route: a team's own run file (e.g. a retrained production model), evaluated
like the built-in routes.

``index`` only remembers the documents table. ``search`` reads the run with
``readers.read_run`` (a TREC run file, or a CSV/parquet table) and answers each query of the
queries table with the run's own list:

- one system: ``system`` selects it when the file holds several (the ``system`` column, a TREC
  run's tag); a file without that column is one system;
- the run contract (``data.contracts.check_run``, the evaluator's rules): a doc_id at
  most once per query, ranks distinct integers ≥ 1, a score on every row and never NaN; with
  an explicit rank, scores must not increase with rank. A breach is an InputError naming the
  file, the line/row and the rule;
- the engine's order: by ``rank`` when the table has one, else score descending with ties by
  doc_id descending (trec_eval's order; TREC files lose their rank column), then re-ranked
  1..n and cut at ``depth``;
- only the queries searched: run queries missing from the queries table are counted, dropped.

A recommendation team's table (CSV/parquet) names users and items instead: columns user_id,
item_id (read as strings) and an optional ``split`` (validation | test; "test" without the
column) become query_id = ``user_query_id(user_id, split)`` and doc_id = item_id, the rest as
above. Any table may carry ``S.PROBABILITY``, the system's P(relevant) for the pair: a number
in [0, 1] on every row (else an InputError naming the file and row), kept in the run.

The run is never filtered by visibility (the point is to evaluate what the system returned):
each returned pair the query may not see is flagged in ``stats["visibility"]`` under one
reason, the first that applies in the order of ``releval.data.visibility.REASONS``
(``visibility.forbidden_reasons``), so ``forbidden`` is the sum of the reason counts.
Latency is not measured: NaN per query. A table (CSV/parquet) may carry ``S.RUN_STATUS``, the
system's outcome for the query: one of ``S.RUN_STATUSES`` on every row of the system and the
same on every row of a query (else an InputError naming the file, the row and the rule). A
query the run does not hold, or every query of a run without the column, has status NaN: not
recorded.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from releval.data import contracts as S
from releval.data.history import user_query_id
from releval.data.readers import existing, read_parquet, read_run, sha256_of, text_of
from releval.data.visibility import REASONS, Visibility, forbidden_reasons
from releval.errors import InputError
from releval.retrieval.base import Candidates

log = logging.getLogger(__name__)

MAX_EXAMPLES = 10
LATENCY = "not measured (external run)"
_POSITION = "_position"  # the query's row in the queries table; -1 when unknown
REC_IDS = (S.USER_ID, S.ITEM_ID)
DELIMITERS = {".csv": ",", ".tsv": "\t"}


def _columns(path: Path) -> list[str]:
    """A table's column names (none for a TREC file or a parquet file pyarrow cannot read:
    ``read_run`` then reports it)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            return pq.read_schema(path).names
        except (pa.ArrowException, OSError):
            return []
    if suffix in DELIMITERS:  # the header only: the table itself is read through the gate
        with path.open(encoding="utf-8-sig", errors="replace") as handle:
            return handle.readline().strip().split(DELIMITERS[suffix])
    return []


def _numbers(frame: pd.DataFrame, column: str, integer: bool) -> pd.Series:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if integer:
        bad |= values.notna() & (values != np.floor(values))
    S.fail_first(frame, "run", bad.to_numpy(), lambda i: f"{column} must be "
                 f"{'an integer' if integer else 'a number'}, got {frame[column].tolist()[i]!r}")
    return values.astype("int64") if integer and values.notna().all() else values


def _rec_table(path: Path) -> pd.DataFrame:
    """A recommendation table (user_id, item_id[, split], score/rank, ...) as a run table:
    query_id = user_query_id(user_id, split), doc_id = item_id (module docstring); indexed
    by row (parquet) or line (CSV) for messages."""
    if path.suffix.lower() == ".parquet":
        frame, unit, first = read_parquet(path), "row", 1
    else:
        try:
            frame = pd.read_csv(io.StringIO(text_of(path)), sep=DELIMITERS[path.suffix.lower()],
                                dtype=dict.fromkeys((*REC_IDS, S.SPLIT, S.SYSTEM), str),
                                keep_default_na=False, na_values=[""])
        except pd.errors.ParserError as exc:  # "Expected 3 fields in line 7, saw 4"
            raise InputError(f"{str(exc).strip().splitlines()[-1].rstrip('.')} (more fields "
                             "than the header)", str(path)) from None
        unit, first = "line", 2
    frame.index = pd.RangeIndex(first, first + len(frame))
    frame.attrs.update(source=str(path), unit=unit)
    S.require_columns(frame, REC_IDS, "run")
    for column in REC_IDS:
        S.fail_first(frame, "run", frame[column].isna().to_numpy(), f"{column} is missing")
    split = (frame[S.SPLIT] if S.SPLIT in frame.columns
             else pd.Series("test", index=frame.index))
    S.fail_first(frame, "run", (~split.isin(S.SPLITS)).to_numpy(),
                 lambda i: f"split must be one of {', '.join(S.SPLITS)}, got {split.iloc[i]!r}")
    out = frame.drop(columns=[*REC_IDS, S.SPLIT], errors="ignore")
    out.insert(0, S.QUERY_ID, [user_query_id(u, s) for u, s in
                               zip(frame[S.USER_ID].astype(str), split.astype(str), strict=True)])
    out.insert(1, S.DOC_ID, frame[S.ITEM_ID].astype(str))
    for column, integer in ((S.SCORE, False), (S.RANK, True)):
        if column in out.columns:
            out[column] = _numbers(out, column, integer)
    return out


def read_team_run(path: str) -> pd.DataFrame:
    """The run as ``read_run`` gives it, or a recommendation table mapped to one."""
    columns = _columns(existing(path))
    if set(REC_IDS) <= set(columns) and S.QUERY_ID not in columns:
        return _rec_table(Path(path))
    return read_run(path)


def _probability(run: pd.DataFrame) -> None:
    """InputError at the first row whose probability is not a number in [0, 1]."""
    values = pd.to_numeric(run[S.PROBABILITY], errors="coerce")
    S.fail_first(run, "run", ~((values >= 0) & (values <= 1)).to_numpy(),
                 lambda i: f"{S.PROBABILITY} must be a number in [0, 1] on every row, got "
                           f"{run[S.PROBABILITY].tolist()[i]!r}")
    run[S.PROBABILITY] = values.astype(np.float64)


def _status(run: pd.DataFrame) -> pd.Series:
    """query_id -> the run's status of that query: a value of ``S.RUN_STATUSES`` on every row
    (else InputError at the first row without one), the same on every row of a query (else
    InputError at the first row differing from its query's first row)."""
    values, query = run[S.RUN_STATUS].astype(object), run[S.QUERY_ID]
    S.fail_first(run, "run", (~values.isin(S.RUN_STATUSES)).to_numpy(),
                 lambda i: f"{S.RUN_STATUS} must be one of {', '.join(S.RUN_STATUSES)} on "
                           f"every row, got {values.iloc[i]!r}")
    first = values.groupby(query, sort=False).transform("first")
    S.fail_first(run, "run", (values != first).to_numpy(),
                 lambda i: f"{S.RUN_STATUS} {values.iloc[i]!r} differs from {first.iloc[i]!r} "
                           f"on the first row of query {query.iloc[i]!r}: one status per query")
    return values.groupby(query, sort=False).first()


def _select(run: pd.DataFrame, system: str | None) -> pd.DataFrame:
    """The rows of ``system`` (all rows when the run has no system column, or holds one
    system and ``system`` is None); InputError listing the systems otherwise."""
    if S.SYSTEM not in run.columns:
        return run
    names = run[S.SYSTEM].astype(str)
    systems = sorted(names.unique())
    if system is None and len(systems) > 1:
        raise InputError(f"the run holds {len(systems)} systems ({', '.join(systems)}); "
                         "choose one with system", run.attrs["source"])
    if system is None:
        return run
    if system not in systems:
        raise InputError(f"system {system!r} is not in the run; it holds "
                         f"{', '.join(systems) or 'no rows'}", run.attrs["source"])
    return run[names == system]


def _ordered(run: pd.DataFrame, position: np.ndarray) -> pd.DataFrame:
    """``run`` validated (module docstring) and sorted by query position, query_id, then the
    engine's order within a query; index labels (lines/rows) are kept for messages."""
    source = run.attrs["source"]
    if S.SCORE not in run.columns:
        raise InputError(f"missing column {S.SCORE}; found {list(run.columns)}", source)
    nan = run[S.SCORE].isna().to_numpy()
    if nan.any():
        raise InputError("score is NaN or missing", source, S.where(run, run.index[nan.argmax()]))
    S.check_run(run)  # duplicate doc_id, rank rules
    by, ascending = (([S.RANK], [True]) if S.RANK in run.columns
                     else ([S.SCORE, S.DOC_ID], [False, False]))
    ordered = run.assign(**{_POSITION: position}).sort_values(
        [_POSITION, S.QUERY_ID, *by], ascending=[True, True, *ascending])
    if S.RANK in run.columns:
        query, score, rank = ordered[S.QUERY_ID], ordered[S.SCORE], ordered[S.RANK]
        rises = (query.eq(query.shift()) & score.gt(score.shift())).to_numpy()
        if rises.any():
            i = int(rises.argmax())
            raise InputError(f"score {score.iloc[i]} at rank {rank.iloc[i]} is above score "
                             f"{score.iloc[i - 1]} at rank {rank.iloc[i - 1]} in query "
                             f"{query.iloc[i]!r}: scores must not increase with rank",
                             source, S.where(run, ordered.index[i]))
    return ordered


class ExternalRetriever:
    """A team's run file as a route; see the module docstring for the search contract."""

    route = "external"

    def __init__(self, path: str, system: str | None = None):
        self.path, self.system = str(path), system
        self._documents: pd.DataFrame | None = None

    def index(self, documents: pd.DataFrame) -> None:
        """Remember ``documents`` (doc_id unique, else InputError): there is nothing to build."""
        S.require_unique(documents, S.DOC_ID, "documents")
        self._documents = documents

    def search(self, queries: pd.DataFrame, depth: int, visibility: Visibility) -> Candidates:
        """The run's first ``depth`` documents per query, flagged but not filtered by
        ``visibility`` (module docstring). ``visibility`` must be built from the indexed
        documents table; query_id must be unique. Both are InputErrors otherwise.

        ``stats``: ``latency`` (a note), ``source`` (path, sha256, system, row and query
        counts; rows_in = rows_out + rows_other_systems + rows_unknown_queries +
        truncated_to_depth) and ``visibility`` (forbidden, one count per reason of
        ``releval.data.visibility.REASONS`` under the reason's name, examples).
        """
        depth = S.integer("depth", depth, source="retriever")
        if self._documents is None:
            raise RuntimeError("ExternalRetriever.search called before index")
        if not np.array_equal(visibility.doc_ids, self._documents[S.DOC_ID].to_numpy()):
            raise InputError("visibility was built from a different documents table than the "
                             "one indexed", "visibility")
        S.require_unique(queries, S.QUERY_ID, "queries")
        table = read_team_run(self.path)
        run = _select(table, self.system)
        if S.PROBABILITY in run.columns:
            run = run.copy()
            _probability(run)
        status = (_status(run).reindex(queries[S.QUERY_ID]).to_numpy(dtype=object)
                  if S.RUN_STATUS in run.columns else np.full(len(queries), np.nan, object))
        position = pd.Index(queries[S.QUERY_ID]).get_indexer(run[S.QUERY_ID])
        ordered = _ordered(run, position)
        known = ordered[ordered[_POSITION] >= 0]
        rank = known.groupby(_POSITION).cumcount().to_numpy() + 1
        within = rank <= depth
        kept = known[within]
        out = pd.DataFrame({
            S.QUERY_ID: pd.Series(kept[S.QUERY_ID].to_numpy(), dtype="str"),
            S.DOC_ID: pd.Series(kept[S.DOC_ID].to_numpy(), dtype="str"),
            S.RANK: rank[within].astype(np.int64),
            S.SCORE: kept[S.SCORE].to_numpy(dtype=np.float64),
        } | ({S.PROBABILITY: kept[S.PROBABILITY].to_numpy(dtype=np.float64)}
             if S.PROBABILITY in kept.columns else {}))

        reasons = forbidden_reasons(out, queries, self._documents, visibility)
        forbidden = reasons != ""
        pairs = out.loc[forbidden, [S.QUERY_ID, S.DOC_ID]].reset_index(drop=True)
        reason = reasons[forbidden]
        counts = pd.Series(reason, dtype=object).value_counts()
        stats = {
            "latency": LATENCY,
            "source": {
                "path": self.path, "sha256": sha256_of(self.path), "system": self.system,
                "rows_in": len(table), "rows_other_systems": len(table) - len(run),
                "rows_unknown_queries": len(run) - len(known),
                "truncated_to_depth": len(known) - len(kept), "rows_out": len(out),
                "queries_in_run": run[S.QUERY_ID].nunique(),
                "queries_unknown": run.loc[position < 0, S.QUERY_ID].nunique(),
            },
            "visibility": {"forbidden": int(forbidden.sum())}
            | {r: int(counts.get(r, 0)) for r in REASONS}
            | {"examples": pairs.head(MAX_EXAMPLES).assign(reason=reason[:MAX_EXAMPLES])
               .to_dict("records")},
        }
        log.info("external: %s: %d rows in, %d candidates for %d queries (%d forbidden)",
                 Path(self.path).name, len(table), len(out), len(queries), forbidden.sum())
        return Candidates(run=out, latency_ms=np.full(len(queries), np.nan), stats=stats,
                          status=status)
