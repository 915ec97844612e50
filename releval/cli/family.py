"""``releval compare`` over several systems: each file's per-query values (a table, or a run
evaluated against the qrels), the query set chosen over all of them, one family comparison
per measure (``releval.decision.family``), printed as a leaderboard with its groups and the
pairs' table, or as JSON."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from releval.cli.inputs import Side
from releval.cli.output import console
from releval.data import contracts as S
from releval.decision.family import FamilyResult, compare_family, groups_text
from releval.decision.missing import chosen
from releval.decision.significance import TESTS
from releval.errors import InputError
from releval.metrics.engine import resolve
from releval.metrics.measures import MEASURES
from releval.report.formats import interval, number


def names_of(paths: list[Path]) -> list[str]:
    """Each file's system name: its stem, numbered where two stems are equal."""
    seen: dict[str, int] = {}
    out = []
    for path in paths:
        seen[path.stem] = seen.get(path.stem, 0) + 1
        out.append(path.stem if seen[path.stem] == 1 else f"{path.stem}#{seen[path.stem]}")
    return out


def families(sides: dict[str, Side], measures: list[str] | None, judged: set[str] | None, *,
             query_set: str, **options) -> dict:
    """The query set over every side and one ``compare_family`` per measure (named, or those
    every side has), JSON-ready."""
    tables = {name: side.per_query for name, side in sides.items()}
    if judged is None:
        judged = set().union(*(set(map(str, t[S.QUERY_ID])) for t in tables.values()))
    kept, block = chosen(query_set, judged, {n: s.answers for n, s in sides.items()})
    every = set.intersection(*(set(t[S.MEASURE]) for t in tables.values()))
    wanted = [m.name for m in resolve(measures)] if measures else sorted(every)
    absent = [m for m in wanted if m not in every]
    if absent or not wanted:
        raise InputError(f"measure(s) {', '.join(absent) or 'none'} not in every table "
                         f"(all have: {', '.join(sorted(every)) or 'none'})", "compare")
    frame = pd.concat([t.assign(**{S.SYSTEM: n}) for n, t in tables.items()], ignore_index=True)
    frame = frame[~frame[S.QUERY_ID].astype(str).isin(judged - kept)]
    results = [compare_family(frame, list(tables), m, higher_is_better=_higher(m), **options)
               for m in wanted]
    return {"query_set": block, "families": [r.to_dict() for r in results]}


def _higher(measure: str) -> bool:
    return MEASURES[resolve([measure])[0].family].better == "higher"


def print_families(doc: dict, out: Console | None = None) -> None:
    """Per measure: the leaderboard with its groups, then every pair of the family; ``doc``
    holds ``query_set`` and ``families`` (or a comparison.json's ``family``: ``measures``)."""
    out = out or console()
    for f in doc.get("families", doc.get("measures", [])):
        result = FamilyResult(**f)
        test = TESTS[result.test].label
        board = Table(title=f"{result.measure}: {len(result.leaderboard)} systems, "
                            f"{result.n} queries")
        for col in ("rank", "system", "mean", "95% CI", "n", "group"):
            board.add_column(col, justify="left" if col in ("system", "group") else "right")
        for r in result.leaderboard:
            board.add_row(str(r["rank"]), escape(r["system"]), number(r["mean"]),
                          interval(r["ci_low"], r["ci_high"], ".4f"), str(r["n"]), r["group"])
        out.print(board)
        pairs = Table(title=f"{result.measure}: family {result.family}, {test}, "
                            f"{result.correction} over {len(result.pairs)} pairs")
        for col in ("baseline", "candidate", "Δ mean", "95% CI", "d_z", "p", "p (adj.)",
                    "verdict"):
            pairs.add_column(col, justify="left" if col in ("baseline", "candidate",
                                                            "verdict") else "right")
        for r in result.pairs:
            pairs.add_row(escape(r["baseline"]), escape(r["candidate"]),
                          number(r["mean_diff"], "+.4f"), interval(r["ci_low"], r["ci_high"]),
                          number(r["effect_size"], "+.2f"), number(r["p_value"]),
                          number(r["p_adjusted"]), r["verdict"])
        out.print(pairs)
        out.print(f"groups (a shared letter: not told apart at α {result.alpha:g} after "
                  f"{result.correction}): {escape(groups_text(result))}; queries left out "
                  f"(undefined for a system): {result.left_out}", highlight=False,
                  soft_wrap=True)
    block = doc["query_set"]
    out.print(f"query set ({block['choice']}): {escape(block['label'])}", highlight=False,
              soft_wrap=True)
