"""The files ``releval compare`` reads: the two sides (a per-query table, or a run
evaluated here against qrels) and the query maps (slice, weight, cluster), each checked as
its kind requires."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import existing, read_delimited, read_parquet, read_run
from releval.decision.missing import run_queries
from releval.errors import InputError
from releval.metrics.engine import evaluate


def _line(frame: pd.DataFrame, mask) -> str:
    return f"line {frame.index[np.flatnonzero(np.asarray(mask))[0]]}"


@dataclass(frozen=True)
class Side:
    """One compared file: its per-query table (query_id, measure, value) and the query ids
    its run answers (None for a per-query table: not known)."""

    per_query: pd.DataFrame
    answers: set[str] | None


def read_side(path: str | Path, qrels: pd.DataFrame | None, measures: list[str] | None,
              rel: int = 1, max_grade: int = 3) -> Side:
    """A per-query table from a metrics CSV/parquet, or from a run evaluated against
    ``qrels`` over every qrels query (one the run misses scores 0 and is counted missing:
    ``releval.decision.missing``). A value is a number or empty (undefined), never infinite;
    one (query, measure) appears once."""
    path = existing(path)
    if path.suffix.lower() in {".csv", ".parquet", ".tsv"}:
        table = (read_parquet(path) if path.suffix.lower() == ".parquet"
                 else read_delimited(path, "\t" if path.suffix.lower() == ".tsv" else ","))
        if {S.QUERY_ID, S.MEASURE, S.VALUE} <= set(table.columns):
            return Side(_per_query(table[[S.QUERY_ID, S.MEASURE, S.VALUE]], str(path)), None)
    if qrels is None:
        raise InputError("a run needs --qrels (or give a per-query table: query_id, measure, "
                         "value)", str(path))
    run = read_run(path)
    if run.empty:
        raise InputError("the run holds no ranked document (an empty run is not a system to "
                         "compare)", str(path))
    result = evaluate(run, qrels, measures or ["nDCG@10", "R@100", "RR@10"], rel=rel,
                      max_grade=max_grade)
    return Side(result.per_query, run_queries(run))


def _per_query(table: pd.DataFrame, source: str) -> pd.DataFrame:
    values = pd.to_numeric(table[S.VALUE], errors="coerce")
    bad = values.isna() & table[S.VALUE].notna()
    if bad.any():
        raise InputError(f"value must be a number (or empty: undefined), got "
                         f"{table[S.VALUE][bad].iloc[0]!r}", source, _line(table, bad))
    if np.isinf(values).any():
        raise InputError("value must be finite", source, _line(table, np.isinf(values)))
    dup = table.duplicated([S.QUERY_ID, S.MEASURE])
    if dup.any():
        first = table[dup].iloc[0]
        raise InputError(f"query {first[S.QUERY_ID]!r} has two {first[S.MEASURE]} values",
                         source, _line(table, dup))
    return table.assign(**{S.QUERY_ID: table[S.QUERY_ID].astype(str), S.VALUE: values})


def _weight(values: pd.Series) -> tuple[pd.Series, pd.Series, str]:
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() | np.isinf(numbers) | (numbers < 0)
    return numbers, bad, "a weight must be a finite number ≥ 0"


def _label(values: pd.Series) -> tuple[pd.Series, pd.Series, str]:
    return values.astype(str), values.isna() | (values.astype(str).str.strip() == ""), \
        "a label must not be empty"


@dataclass(frozen=True)
class MapKind:
    """How one kind of query map is checked: its values (parsed, bad mask, rule), whether
    every compared query needs one, and how many distinct values the compared queries need."""

    parse: Callable[[pd.Series], tuple[pd.Series, pd.Series, str]]
    every_query: bool
    at_least: int = 1


MAP_KINDS = {"weight": MapKind(_weight, every_query=True),
             "slice": MapKind(_label, every_query=False),  # others count in "all" only
             "user_id": MapKind(_label, every_query=True, at_least=2)}  # to resample over


def read_map(path: str | Path, column: str) -> pd.Series:
    """query_id → value from a CSV/TSV with a header: query_id and ``column`` (or exactly one
    other column), each value checked for its kind (``MAP_KINDS``); the Series carries the
    file in ``attrs['source']``."""
    path = existing(path)
    table = read_delimited(path, "\t" if path.suffix.lower() in (".tsv", ".txt") else ",")
    others = [c for c in table.columns if c != S.QUERY_ID]
    value = column if column in others else (others[0] if len(others) == 1 else None)
    if S.QUERY_ID not in table.columns or value is None:
        raise InputError(f"needs a header with query_id and {column}", str(path))
    dup = table[S.QUERY_ID].duplicated()
    if dup.any():
        raise InputError(f"query_id {table[S.QUERY_ID][dup].iloc[0]!r} appears twice",
                         str(path), _line(table, dup))
    values, bad, rule = MAP_KINDS[column].parse(table[value])
    if bad.any():
        raise InputError(f"{rule}, got {str(table[value][bad].iloc[0])!r}", str(path),
                         _line(table, bad))
    out = pd.Series(values.to_numpy(), index=table[S.QUERY_ID].astype(str), name=value)
    out.attrs["source"] = str(path)
    return out


def check_coverage(mapping: pd.Series, queries: set[str], what: str) -> None:
    """The compared queries against a map read by read_map, as its kind (``MAP_KINDS``)
    requires: a value for each, and enough distinct values."""
    kind, source = MAP_KINDS[what], mapping.attrs.get("source", what)
    absent = sorted(queries - set(mapping.index))
    if absent and kind.every_query:
        raise InputError(f"no {what} for {len(absent)} compared queries (first: "
                         f"{absent[0]!r})", source)
    distinct = mapping[mapping.index.isin(queries)].nunique()
    if distinct < kind.at_least:
        raise InputError(f"the compared queries belong to {'one' if distinct == 1 else distinct}"
                         f" {what}: resampling over them needs at least {kind.at_least}", source)
