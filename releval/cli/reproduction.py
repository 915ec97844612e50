"""``releval compare ORIGINAL REPRODUCED [ORIGINAL_BASELINE REPRODUCED_BASELINE] --qrels Q
--reproduction``: how close a reproduced run is to its original (``releval.decision.
reproduction``: RMSE per measure, KTU and RBO of the ranked lists, and with a reproduced
baseline the pair's ER and ΔRI), as tables or JSON."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.table import Table

from releval.cli.output import console, emit
from releval.data import contracts as S
from releval.data.readers import read_qrels, read_run
from releval.decision import reproduction as R
from releval.errors import InputError
from releval.metrics.engine import evaluate
from releval.report.formats import number

MEASURES = ("nDCG@10", "R@100", "RR@10")  # as ``releval compare`` on runs
RUN, BASELINE = "run", "baseline"  # the reproduced pairs' roles, as the rows name them

# a printed section: its key in the document -> its title
SECTIONS = {
    "rmse": "effectiveness: RMSE of the per-query values (0 = identical)",
    "order": "document order: mean over queries (1 = identical)",
    "effects": "overall effects, run over baseline (ER 1, ΔRI 0 = reproduced exactly)",
}


def _run(path: Path) -> pd.DataFrame:
    run = read_run(path)
    if run.empty:
        raise InputError("the run holds no ranked document (nothing to reproduce)", str(path))
    return run


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as JSON objects, NaN as null."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def measured(original: Path, reproduced: Path, qrels: Path, measures: list[str] | None, *,
             baseline_pair: tuple[Path, Path] | None = None, max_grade: int = 3) -> dict:
    """The reproduction's document: per role (``RUN``: ORIGINAL → REPRODUCED; ``BASELINE``:
    ``baseline_pair``, original → reproduced) the queries each run ranks and the ``SECTIONS``'
    rows; ``effects`` only with ``baseline_pair``. Each run is evaluated over every qrels
    query (one it misses scores 0, as ``releval compare``'s default). InputError on bad
    input."""
    truth = read_qrels(qrels)
    pairs = {RUN: (original, reproduced)} | ({BASELINE: baseline_pair} if baseline_pair else {})
    runs = {role: tuple(map(_run, paths)) for role, paths in pairs.items()}
    scored = {role: tuple(evaluate(run, truth, measures or MEASURES, max_grade=max_grade)
                          .per_query for run in two) for role, two in runs.items()}
    close = R.closeness(scored, runs)
    doc = {role: [str(p) for p in paths] for role, paths in pairs.items()}
    doc |= {"depth": R.DEPTH, "rbo_p": R.RBO_P, "queries": {
        role: dict(zip(("original", "reproduced", "both"), _ranked(*two), strict=True))
        for role, two in runs.items()}}
    doc |= {key: _records(frame) for key, frame in close.items()}
    if baseline_pair:
        doc["effects"] = _records(R.effects(scored[BASELINE][0], scored[RUN][0],
                                            scored[BASELINE][1], scored[RUN][1]))
    return doc


def _ranked(original: pd.DataFrame, reproduced: pd.DataFrame) -> tuple[int, int, int]:
    """The queries the original ranks, the reproduction ranks, and both rank."""
    a, b = (set(run[S.QUERY_ID].astype(str)) for run in (original, reproduced))
    return len(a), len(b), len(a & b)


def _cell(value) -> str:
    return number(value) if value is None or isinstance(value, float) else str(value)


def reproduction_report(original: Path, reproduced: Path, qrels: Path,
                        measures: list[str] | None, *,
                        baseline_pair: tuple[Path, Path] | None = None, fmt: str = "table",
                        max_grade: int = 3) -> None:
    """Print the reproduction's measures (``measured``) as tables, or as JSON when ``fmt``
    is "json"; bad input raises InputError (one line)."""
    doc = measured(original, reproduced, qrels, measures, baseline_pair=baseline_pair,
                   max_grade=max_grade)
    if fmt == "json":
        emit(doc)
        return
    out = console()
    for role, q in doc["queries"].items():
        out.print(f"{role}: {doc[role][1]} reproducing {doc[role][0]}; queries ranked "
                  f"{q['original']} (original), {q['reproduced']} (reproduced), {q['both']} "
                  "by both", highlight=False)
    out.print(f"KTU: Kendall's τ Union; RBO: rank-biased overlap (Clarke et al.'s, as "
              f"repro_eval), p = {doc['rbo_p']}; both to depth {doc['depth']}",
              highlight=False)
    for key, title in SECTIONS.items():
        if key not in doc or not doc[key]:
            continue
        table = Table(title=title)
        for col in doc[key][0]:
            table.add_column(col, justify="left" if col in (S.SYSTEM, S.MEASURE) else "right")
        for row in doc[key]:
            table.add_row(*map(_cell, row.values()))
        out.print(table)
