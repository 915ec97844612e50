"""Differential parity: the metrics engine against pytrec_eval, ranx and ir_measures, path by
path.

The cases (``releval.selftest.paths``) are generated queries, each tagged with the code paths
it exercises; each oracle (``releval.selftest.oracles``) maps releval measure names to its own
and states where its semantics differ. Every oracle scores 0 where releval's measure is
undefined (NaN); that 0 is read as undefined on the queries without a relevant document, and
there only. ``differential`` returns one row per (oracle, measure, path).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.errors import InputError
from releval.metrics.engine import evaluate, resolve
from releval.metrics.spec import Measure
from releval.selftest.oracles import ORACLES, Entry, Oracle
from releval.selftest.paths import DEFINED_WITHOUT_RELEVANT, MEASURES, Cases, cases

TOLERANCE = 1e-9
COLUMNS = ("oracle", "version", "measure", "oracle_measure", "path", "cases", "agreed",
           "max_abs_delta", "status", "note")


def _row(name: str, version, m: Measure, path: str, status: str, *, oracle_measure="",
         cases=0, agreed=0, delta=np.nan, note="") -> dict:
    return dict(zip(COLUMNS, (name, version, m.name, oracle_measure, path, cases, agreed, delta,
                              status, note), strict=True))


def _oracle_values(oracle: Oracle, c: Cases, entries: dict[str, Entry],
                   comparable: dict[str, np.ndarray]) -> pd.DataFrame:
    """The oracle's values, query_id × releval name: each measure computed on its comparable
    queries only (a query on an excluded path never reaches the oracle), NaN elsewhere."""
    groups: dict[bytes, list[str]] = {}
    for name in entries:
        groups.setdefault(comparable[name].tobytes(), []).append(name)
    parts = [oracle.compute(c.only(comparable[names[0]]), {n: entries[n] for n in names})
             for names in groups.values() if comparable[names[0]].any()]
    return pd.concat([pd.DataFrame(index=c.tags.index), *parts], axis=1).reindex(c.tags.index)


def _compared(name: str, version, m: Measure, entry: Entry, paths: pd.DataFrame,
              comparable: np.ndarray, ours: np.ndarray, theirs: np.ndarray,
              c: Cases) -> list[dict]:
    """One row per path of ``m``: releval's values against the oracle's on the ``comparable``
    queries of the path (those on no excluded path)."""
    n = c.tags["ranked"].to_numpy()
    if entry.rescale:
        theirs = entry.rescale[1](theirs, n)
    if m.family not in DEFINED_WITHOUT_RELEVANT:
        theirs = np.where(c.tags["no_relevant"].to_numpy() & (theirs == 0), np.nan, theirs)
    both_nan = np.isnan(ours) & np.isnan(theirs)
    with np.errstate(invalid="ignore"):
        delta = np.where(both_nan, 0.0, np.abs(ours - theirs))
    delta = np.where(np.isnan(delta), np.inf, delta)  # one side undefined: a disagreement
    rows = []
    for path in paths.columns:
        if path in entry.excluded:
            rows.append(_row(name, version, m, path, f"not comparable: {entry.excluded[path]}",
                             oracle_measure=entry.name, note=entry.note(m)))
            continue
        on = comparable & paths[path].to_numpy()
        count, agreed = int(on.sum()), int((on & (delta <= TOLERANCE)).sum())
        status = ("not comparable: each of its cases is also on an excluded path" if not count
                  else "agree" if agreed == count else "differ")
        rows.append(_row(name, version, m, path, status, oracle_measure=entry.name, cases=count,
                         agreed=agreed, delta=float(delta[on].max()) if count else np.nan,
                         note=entry.note(m)))
    return rows


def differential(seed: int = 0, n_cases: int = 450, measures: Iterable[str] = MEASURES,
                 oracles: Iterable[str] | None = None) -> pd.DataFrame:
    """The engine against each oracle (default: all of ``ORACLES``) on ``cases(seed,
    n_cases, measures)``: one row per (oracle, measure, path), ``COLUMNS``: the oracle's
    version, its name for the measure, cases compared, agreed (|Δ| ≤ ``TOLERANCE``, or both
    undefined), max |Δ| (inf where one side is undefined), status (``agree``, ``differ``,
    ``not installed``, ``not comparable: <why>``) and a note on how the values were
    matched. cutoff_beyond_list is a path only of measures with a cutoff."""
    wanted = resolve(measures)
    chosen = list(ORACLES) if oracles is None else list(oracles)
    unknown = sorted(set(chosen) - set(ORACLES))
    if unknown:
        raise InputError(f"unknown oracle {', '.join(unknown)}; known: {', '.join(ORACLES)}",
                         "differential")
    c = cases(seed, n_cases, measures)
    ours = evaluate(c.run, c.qrels, wanted).per_query.pivot(
        index="query_id", columns="measure", values="value").reindex(c.tags.index)
    paths = {m.name: c.paths(m) for m in wanted}
    rows: list[dict] = []
    for name in chosen:
        oracle = ORACLES[name]
        version = oracle.version() if oracle.installed() else None
        entries = {resolve([key])[0].name: entry for key, entry in oracle.entries.items()}
        usable = [m for m in wanted if isinstance(entries.get(m.name), Entry)]
        comparable = {m.name: ~paths[m.name][[p for p in entries[m.name].excluded
                                               if p in paths[m.name]]].any(axis=1).to_numpy()
                      for m in usable}
        theirs = _oracle_values(oracle, c, {m.name: entries[m.name] for m in usable},
                                comparable) if version is not None else None
        for m in wanted:
            entry = entries.get(m.name, f"{name} has no counterpart of {m.name} here")
            if version is None:
                rows += [_row(name, None, m, p, "not installed") for p in paths[m.name]]
            elif isinstance(entry, str):
                rows += [_row(name, version, m, p, f"not comparable: {entry}")
                         for p in paths[m.name]]
            else:
                rows += _compared(name, version, m, entry, paths[m.name],
                                  comparable[m.name], ours[m.name].to_numpy(),
                                  theirs[m.name].to_numpy(dtype=float), c)
    return pd.DataFrame(rows, columns=list(COLUMNS))
