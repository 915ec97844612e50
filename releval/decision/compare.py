"""Candidate against baseline: a paired comparison when both answer the same queries;
otherwise refused with the differences, or (when allowed) the unpaired rate/mix view.

What else must be held fixed for a controlled comparison (qrels revision, budget, time
window, visibility) is measured in ``releval.decision.conditions``.

Inputs are per-query metric tables (query_id, measure, value), e.g. written by
``releval metrics -q --format csv``, or runs evaluated here against qrels. Optional maps
from query_id to a slice label, a traffic weight and a cluster (user) id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import existing, read_delimited, read_parquet, read_run
from releval.decision.aggregation import aggregates, decompose
from releval.decision.stats import compare_table, holm, holm_verdicts
from releval.errors import InputError
from releval.metrics.engine import evaluate, resolve

SIDES = ("baseline", "candidate")


class Uncontrolled(InputError):
    """The two sides do not answer the same queries: no paired comparison is possible."""


def _line(frame: pd.DataFrame, mask) -> str:
    return f"line {frame.index[np.flatnonzero(np.asarray(mask))[0]]}"


def canonical(measures: list[str], min_effect: float | dict[str, float],
              rel: int) -> tuple[list[str], float | dict[str, float]]:
    """``compare.measures`` and ``compare.min_effect`` under their canonical names, as the
    evaluate stage names them with ``evaluate.rel``."""
    names = [m.name for m in resolve(measures, rel)]
    if isinstance(min_effect, dict):
        min_effect = {m.name: v for name, v in min_effect.items() for m in resolve([name], rel)}
    return names, min_effect


def read_side(path: str | Path, qrels: pd.DataFrame | None, measures: list[str] | None,
              rel: int = 1, max_grade: int = 3) -> pd.DataFrame:
    """A per-query table (query_id, measure, value) from a metrics CSV/parquet, or from a
    run evaluated against ``qrels``. A value is a number or empty (undefined), never
    infinite; one (query, measure) appears once."""
    path = existing(path)
    if path.suffix.lower() in {".csv", ".parquet", ".tsv"}:
        table = (read_parquet(path) if path.suffix.lower() == ".parquet"
                 else read_delimited(path, "\t" if path.suffix.lower() == ".tsv" else ","))
        if {S.QUERY_ID, S.MEASURE, S.VALUE} <= set(table.columns):
            return _per_query(table[[S.QUERY_ID, S.MEASURE, S.VALUE]], str(path))
    if qrels is None:
        raise InputError("a run needs --qrels (or give a per-query table: query_id, measure, "
                         "value)", str(path))
    run = read_run(path)
    return evaluate(run, qrels, measures or ["nDCG@10", "R@100", "RR@10"], rel=rel,
                    max_grade=max_grade).per_query


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


def differences(baseline: pd.DataFrame, candidate: pd.DataFrame) -> dict:
    """What differs between the two sides' query sets (counts and a few examples)."""
    a, b = set(baseline[S.QUERY_ID]), set(candidate[S.QUERY_ID])
    only_a, only_b = sorted(a - b), sorted(b - a)
    return {"queries_only_in_baseline": len(only_a), "queries_only_in_candidate": len(only_b),
            "examples_baseline": only_a[:5], "examples_candidate": only_b[:5]}


def _paired(frame: pd.DataFrame, measures: list[str], slices: pd.Series | None,
            clusters: pd.Series | None, **options) -> pd.DataFrame:
    groups = [(S.ALL, frame)]
    if slices is not None:
        labelled = frame.assign(_slice=frame[S.QUERY_ID].map(slices))
        groups += [(str(k), g.drop(columns="_slice")) for k, g in labelled.groupby("_slice")]
    tables = [compare_table(g, *SIDES, measures, clusters=clusters, **options).assign(slice=k)
              for k, g in groups]
    table = pd.concat(tables, ignore_index=True)
    table["p_holm"] = holm(table["p_value"].to_numpy())  # over measures × slices
    table["verdict"] = holm_verdicts(table["verdict"], table["p_holm"], options["alpha"])
    return table


def _unpaired(baseline: pd.DataFrame, candidate: pd.DataFrame, measures: list[str],
              slices: pd.Series | None, weights: pd.Series | None) -> list[dict]:
    out = []
    for measure in measures:
        sides = []
        for side in (baseline, candidate):
            rows = side[side[S.MEASURE] == measure]
            sides.append(pd.DataFrame({
                "slice": rows[S.QUERY_ID].map(slices).fillna(S.ALL) if slices is not None
                else S.ALL,
                S.VALUE: rows[S.VALUE].to_numpy(dtype=float),
                S.WEIGHT: rows[S.QUERY_ID].map(weights).fillna(1.0).to_numpy(dtype=float)
                if weights is not None else 1.0}))
        parts = decompose(*sides).to_dict()
        out.append({S.MEASURE: measure, "aggregates_before": aggregates(sides[0]),
                    "aggregates_after": aggregates(sides[1]), **parts})
    return out


def compare(baseline: pd.DataFrame, candidate: pd.DataFrame, measures: list[str] | None = None,
            *, slices: pd.Series | None = None, weights: pd.Series | None = None,
            clusters: pd.Series | None = None, allow_uncontrolled: bool = False,
            min_effect: float | dict[str, float] = 0.0, resamples: int = 10_000,
            alpha: float = 0.05, seed: int = 0, common_measures: bool = False) -> dict:
    """The comparison as a JSON-ready dict: ``controlled`` and either ``paired`` rows (one
    per measure × slice, Holm-corrected) or ``uncontrolled`` rows (rate/mix per measure)."""
    common = sorted(set(baseline[S.MEASURE]) & set(candidate[S.MEASURE]))
    one_side = sorted(set(baseline[S.MEASURE]) ^ set(candidate[S.MEASURE]))
    if not measures and one_side and not common_measures:
        raise InputError(f"measure(s) {', '.join(one_side)} in only one of the two tables; "
                         "name the measures with -m, or pass --common-measures to compare "
                         f"{', '.join(common) or 'none'}", "compare")
    measures = [m.name for m in resolve(measures)] if measures else common
    if not measures:
        raise InputError("the two tables share no measure", "compare")
    missing = [m for m in measures if m not in common]
    if missing:
        raise InputError(f"measure(s) {', '.join(missing)} not in both tables "
                         f"(both have: {', '.join(common)})", "compare")
    diff = differences(baseline, candidate)
    controlled = not (diff["queries_only_in_baseline"] or diff["queries_only_in_candidate"])
    if not controlled and not allow_uncontrolled:
        raise Uncontrolled("not a controlled comparison, refused: "
                           f"{diff['queries_only_in_baseline']} queries only in the baseline "
                           f"(e.g. {diff['examples_baseline']}), "
                           f"{diff['queries_only_in_candidate']} only in the candidate "
                           f"(e.g. {diff['examples_candidate']}); pass --allow-uncontrolled "
                           "for the unpaired rate/mix view", "compare")
    if not controlled:
        return {"controlled": False, "differences": diff,
                "note": "different query samples: not a controlled comparison",
                "uncontrolled": _unpaired(baseline, candidate, measures, slices, weights)}
    frame = pd.concat([baseline.assign(**{S.SYSTEM: SIDES[0]}),
                       candidate.assign(**{S.SYSTEM: SIDES[1]})], ignore_index=True)
    table = _paired(frame, measures, slices, clusters, min_effect=min_effect,
                    resamples=resamples, alpha=alpha, seed=seed)
    return {"controlled": True, "differences": diff, "unit": table["unit"].iloc[0],
            "paired": table.replace({np.nan: None}).to_dict(orient="records")}
