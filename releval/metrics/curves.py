"""Measures as curves over the cutoff: R@k, nDCG@k and Judged@k at a fixed grid of k for every
system, from the engine's own ``evaluate`` (the report plots them)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from releval.data import contracts as S
from releval.metrics.engine import evaluate_systems
from releval.metrics.measures import MEASURES
from releval.metrics.spec import Measure

GRID = (1, 2, 3, 5, 10, 20, 50, 100)  # the cutoffs, up to the candidate budget
FAMILIES = ("R", "nDCG", "Judged")
FAMILY, K, N = "family", "k", "n"
CURVE_COLUMNS = (S.SYSTEM, FAMILY, K, S.MEASURE, S.VALUE, N)


def cutoffs(depth: int, grid: Iterable[int] = GRID) -> list[int]:
    """The grid's cutoffs below ``depth``, then ``depth`` itself: a curve ends at the budget."""
    return sorted({k for k in grid if k < depth} | {depth})


def curves(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame, depth: int, *, rel: int = 1,
           max_grade: int = 3, queries: Iterable[str] | None = None,
           families: Iterable[str] = FAMILIES, grid: Iterable[int] = GRID) -> pd.DataFrame:
    """One row per (system, family, k): the measure ``family@k`` (``measure``, its canonical
    name; ``rel`` applies to the families that take it) averaged over the evaluated queries
    as ``evaluate`` averages it (``value``: NaN where no query is defined; ``n``: queries
    averaged), for k in ``cutoffs(depth, grid)``. Runs, qrels, ``rel``, ``max_grade`` and
    ``queries`` as for ``evaluate_systems``; empty runs are skipped. Rows: systems in order,
    then ``families`` in order, then k ascending."""
    families, ks = list(families), cutoffs(depth, grid)
    measures = [Measure(f, k, rel if "rel" in MEASURES[f].params else 1)
                for f in families for k in ks]
    scored = evaluate_systems(runs, qrels, measures, rel=rel, max_grade=max_grade,
                              queries=queries)
    rows = [(system, m.family, m.cutoff, m.name, by_measure[m.name]["value"],
             by_measure[m.name]["n"])
            for system, by_measure in scored.summary.items() for m in measures]
    table = pd.DataFrame(rows, columns=list(CURVE_COLUMNS))
    return table.astype({K: "int64", S.VALUE: "float64", N: "int64"})
