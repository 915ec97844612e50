"""How ``releval history`` prints the ledger: the runs table and the newest run's over-time
comparison, with the report's wording (``releval.report.history``)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from releval.documents.ledger import Row
from releval.project.history import reuse
from releval.report import history as h


def _table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    out = Table(title=title, title_justify="left")
    for col in header:
        out.add_column(col)
    for row in rows:
        out.add_row(*row)
    return out


def tables(rows: list[Row], ledger: Path) -> list[Table | str]:
    """What ``releval history`` prints, in order: the runs, how many decisions the newest
    run's evaluated set has informed, then what the newest run is set against and its
    decomposition per system and measure (UNCONTROLLED)."""
    out: list[Table | str] = [_table(f"runs kept in {ledger}, oldest first "
                                     f"({h.headline(rows) or '?'}: mean [95% CI])",
                                     h.RUN_HEADER, h.run_rows(rows))]
    if reuse(rows):
        out.append(f"reuse: {reuse(rows)}")
    if h.too_few(rows):
        return [*out, h.too_few(rows)]
    last = h.newest(rows)
    out.append(h.over_time_note(last))
    found = h.over_time_rows(last)
    if found:
        out.append(_table("over time, the newest run against the one before it "
                          f"({h.UNCONTROLLED})", h.OVER_TIME_HEADER, found))
    return out
