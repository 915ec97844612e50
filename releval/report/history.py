"""The report's history section (index.html and summary.md), drawn from the run ledger
(reports/runs/, as ``releval.project.history.entries`` reads it: one row per kept run, oldest
first; a run is numbered by its place in the ledger, 1 the oldest, unreadable files too).

The section shows one lineage (``releval.project.history.lineage``: mode, data source,
measures): ``own`` picks the page's own run's rows and says in ``others`` how many other
lineages and runs the ledger holds. Every function below reads the rows it is given:

- a chart per measure (``measures``: the newest run's figures, the headline measure first;
  ``releval.report.plots.history_chart`` draws ``points``): the mean over the runs, baseline
  and candidate on the live window (solid) and on the pinned fixture (dashed), each with its
  95% CI as a band, and the gate's decision of each run on the candidate's live line; a run
  without figures shows its headline value (no band) on the headline measure and nothing on
  the others (``caption`` says so);
- ``run_rows``: the runs table (finished, window, receipt, baseline and candidate headline
  with CI, the fixture's candidate, the decision and its failed rules);
- ``over_time_rows``: the newest run against the one before it, UNCONTROLLED (different
  query samples): per system and measure traffic-weighted before → after, Δ = rate + mix,
  equal-slice before → after, the composition flag and the attribution verdict with its why.

Fewer than two readable runs: ``too_few`` (``ONE_RUN``, ``NO_RUN``) stands for the charts and
the comparison. ``history_lines`` is the section in markdown (summary.md).

The rows are ``entries``' typed rows (``releval.documents.ledger``: ``Entry``, ``Unreadable``),
read by attribute like the page's receipt; ``figure`` gives a run's figure as a ``Point``.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from releval.documents.fixture import FixtureSummary
from releval.documents.ledger import Entry, Row
from releval.documents.receipt import Figures, Previous, Receipt
from releval.project.history import lineage
from releval.report.formats import interval, markdown_table, number

ONE_RUN = "One run kept so far: history starts with the next run."
NO_RUN = "No run kept so far: history starts with the next run."
UNCONTROLLED = "UNCONTROLLED"
COMPOSITION = "the query mix moved the aggregate; no slice moved that way"
LIVE, FIXTURE = "live window", "pinned fixture"
DECISION_COLORS = {"PASS": "#1a7f37", "FAIL": "#c62828"}
RUN_HEADER = ["#", "finished (UTC)", "window", "receipt", "baseline", "candidate",
              "fixture: candidate", "decision"]
OVER_TIME_HEADER = ["system", "measure", "traffic-weighted before → after", "Δ = rate + mix",
                    "equal-slice before → after", "composition", "attribution"]


class Point(NamedTuple):
    """One figure as the section draws it: the mean and its 95% CI (None: no CI)."""

    mean: float
    ci_low: float | None
    ci_high: float | None


def kept(rows: list[Row]) -> list[tuple[int, Entry]]:
    """(run number, row) of every readable run, oldest first."""
    return [(r.run, r) for r in rows if isinstance(r, Entry)]


def own(rows: list[Row], receipt: Receipt | None) -> tuple[list[Row], str]:
    """The rows of the page's lineage and one line on what else the ledger holds. The page's
    lineage: its run's row in the ledger (by ``receipt``'s sha256), else the lineage of
    ``receipt`` where it records params, else the newest readable run's (the line says so)."""
    found = kept(rows)
    if not found:
        return rows, ""
    sha = (receipt.sha256 if receipt else "")[:12]
    mine = next((r.lineage for _, r in found if sha and r.sha256 == sha), None)
    whose = ""
    if mine is None and receipt and receipt.receipt.params:
        mine = lineage(receipt.model_dump(by_alias=True, exclude_unset=True))
    if mine is None:
        mine, whose = found[-1][1].lineage, " (this run is not in the ledger: the newest run's)"
    same: list[Row] = [r for _, r in found if r.lineage.key == mine.key]
    others = {r.lineage.key for _, r in found} - {mine.key}
    line = (f"Lineage{whose}: {mine.mode} · data {mine.data} · "
            f"{len(mine.measures)} measure(s): "
            f"{number(len(same), 'd')} of the ledger's "
            f"{number(len(rows), 'd')} run(s).")
    rest = len(found) - len(same)
    if others:
        line += (f" {number(len(others), 'd')} other lineage(s) ({number(rest, 'd')} run(s)) "
                 "are not drawn: a different mode, data source or measure set.")
    if len(rows) > len(found):
        line += f" {number(len(rows) - len(found), 'd')} file(s) unreadable."
    derived = sorted({d for _, r in kept(same) for d in r.lineage.derived})
    if derived:
        line += f" Derived for older receipts: {'; '.join(derived)}."
    return same, line


def headline(rows: list[Row]) -> str | None:
    """The newest run's headline measure (None: no run names one)."""
    return next((r.measure for _, r in reversed(kept(rows)) if r.measure), None)


def measures(rows: list[Row]) -> list[str]:
    """The measures the section charts: the headline measure, then the others of the newest
    run with figures (its candidate's, in their order)."""
    head = headline(rows)
    last = next((r for _, r in reversed(kept(rows)) if r.figures), None)
    found = (last.figures.systems.get(last.candidate, {})
             if last and last.figures and last.candidate else {})
    return list(dict.fromkeys([*([head] if head else []), *found]))


def _of(block: Figures | FixtureSummary | None, system: str | None,
        measure: str) -> Point | None:
    """``system``'s figure of ``measure`` in ``block``; None where it has no mean."""
    found = block.systems.get(system, {}).get(measure) if block and system else None
    if found is None or found.mean is None:
        return None
    return Point(found.mean, found.ci_low, found.ci_high)


def figure(row: Entry, instrument: str, system: str | None, measure: str) -> Point | None:
    """The run's figure of ``system`` and ``measure`` (None where it has none): the live
    window's (a run without figures: its headline value, no CI) or the pinned fixture's."""
    found = _of(row.figures if instrument == LIVE else row.fixture, system, measure)
    if found is not None:
        return found
    headline_only = row.figures is None and measure == row.measure
    value = row.values.get(system) if system else None
    if instrument == LIVE and headline_only and value is not None:
        return Point(value, None, None)
    return None


def _cell(row: Entry, instrument: str, system: str | None, measure: str) -> str:
    found = figure(row, instrument, system, measure)
    if found is None:
        return "—"
    low, high = found.ci_low, found.ci_high
    ci = low is not None and high is not None
    return number(found.mean) + (f" {interval(low, high, '.4f')}" if ci else "")


def finished(row: Entry | Previous) -> str:
    """The finish time as "YYYY-MM-DD HH:MM" (UTC), ? where unknown."""
    return str(row.finished_at or "?")[:16].replace("T", " ")


def window(row: Entry) -> str:
    """A scheduled run's window (params key=value), else —."""
    schedule = row.schedule
    shown = ", ".join(f"{k}={v}" for k, v in (schedule.window if schedule else {}).items())
    return shown or ("scheduled" if schedule else "—")


def decision(row: Entry) -> str:
    """PASS or FAIL, the failed rules, and UNCONTROLLED where the run's comparison was."""
    text = (row.decision or "?") + (f": {'; '.join(row.failed)}" if row.failed else "")
    return text + ("" if row.controlled else f" ({UNCONTROLLED})")


def intro(rows: list[Row]) -> str:
    """The runs table's first line: where the runs are kept and what it shows."""
    return (f"{number(len(rows), 'd')} run(s) kept in the ledger (reports/runs/), oldest "
            f"first; {headline(rows) or '?'}: mean [95% CI].")


def run_rows(rows: list[Row]) -> list[list[str]]:
    """One row per kept run (``RUN_HEADER``), the headline measure's mean [95% CI]."""
    measure = headline(rows)
    out = []
    for r in rows:
        if not isinstance(r, Entry):
            out.append([str(r.run), "?", "—", r.file, "—", "—", "—", r.problem])
            continue
        out.append([str(r.run), finished(r), window(r), r.sha256,
                    f"{r.baseline} {_cell(r, LIVE, r.baseline, measure)}",
                    f"{r.candidate} {_cell(r, LIVE, r.candidate, measure)}",
                    _cell(r, FIXTURE, r.candidate, measure), decision(r)])
    return out


def too_few(rows: list[Row]) -> str | None:
    """What the section says instead of charts and a comparison with fewer than two readable
    runs; None from two on."""
    n = len(kept(rows))
    return None if n >= 2 else ONE_RUN if n else NO_RUN


def newest(rows: list[Row]) -> Entry | None:
    """The newest readable run's row."""
    found = kept(rows)
    return found[-1][1] if found else None


def over_time_note(row: Entry) -> str:
    """What the newest run is set against, and why it is uncontrolled or not comparable."""
    moved = row.over_time
    if moved is None:
        return (f"The newest run ({row.sha256}) keeps no over-time "
                "comparison in its receipt.")
    before = moved.previous
    against = f"The newest run ({row.sha256})" + (
        f" against the one before it ({before.sha256}, finished "
        f"{finished(before)})" if before else "")
    if not moved.comparable:
        return f"{against}: not comparable: {'?' if moved.why is None else moved.why}."
    note = "different query samples" if moved.note is None else moved.note
    return (f"{against}, {UNCONTROLLED}: {note}; "
            f"slices by {moved.dimension}.")


def over_time_rows(row: Entry) -> list[list[str]]:
    """Per system and measure of the newest run's comparison (``OVER_TIME_HEADER``): the
    decomposition, the composition flag and the attribution; [] where the runs are not
    comparable (``over_time_note`` says why)."""
    moved = row.over_time
    if moved is None or not moved.comparable:
        return []
    out = []
    for system, by in moved.systems.items():
        for measure, d in by.items():
            said = moved.attribution.get(system, {}).get(measure)
            out.append([
                system, measure, f"{number(d.before)} → {number(d.after)}",
                f"Δ {number(d.delta, '+.4f')} = rate {number(d.rate, '+.4f')} + mix "
                f"{number(d.mix, '+.4f')}",
                f"{number(d.equal_slice_before)} → {number(d.equal_slice_after)}",
                f"COMPOSITION: {COMPOSITION}" if d.mix_shift else "—",
                f"{said.verdict}: {said.why}" if said else "—"])
    return out


def points(rows: list[Row], measure: str) -> pd.DataFrame:
    """The chart's data: one row per run, role (baseline, candidate) and instrument with a
    mean: run, system, role, instrument, series, mean, ci_low, ci_high, decision."""
    out = []
    for i, r in kept(rows):
        for role, system in (("baseline", r.baseline), ("candidate", r.candidate)):
            for instrument in (LIVE, FIXTURE):
                found = figure(r, instrument, system, measure)
                if found is not None:
                    out.append({"run": i, "system": system, "role": role,
                                "instrument": instrument,
                                "series": f"{system} ({role}), {instrument}",
                                "mean": float(found.mean), "ci_low": found.ci_low,
                                "ci_high": found.ci_high, "decision": r.decision or "?"})
    return pd.DataFrame(out, columns=["run", "system", "role", "instrument", "series", "mean",
                                      "ci_low", "ci_high", "decision"])


def without_figures(rows: list[Row]) -> int:
    """How many readable runs kept no figures (their headline value stands alone)."""
    return sum(r.figures is None for _, r in kept(rows))


def caption(rows: list[Row], measure: str) -> str:
    """The chart's caption: what it draws and what the runs without figures show."""
    text = ("The mean over the runs kept in the ledger (x: the run's place, oldest first, "
            "with its finish time): baseline and candidate on the live window (solid) and on "
            "the pinned fixture (dashed), each with its 95% CI as a band; the large points "
            "mark the gate's decision of each run on the candidate's live line. Live "
            "windows of different runs are different query samples: uncontrolled.")
    missing = without_figures(rows)
    if missing:
        where = ("its headline value (no band)" if measure == headline(rows)
                 else "nothing (they kept only the headline measure)")
        text += (f" {number(missing, 'd')} run(s) kept no figures: the live window shows "
                 f"{where}.")
    return text


def history_lines(rows: list[Row] | None, receipt: Receipt | None = None) -> list[str]:
    """The section in markdown (without its heading), like the page's: the line on the
    lineages (``own``), then the page's lineage alone: the runs table and the newest run's
    over-time comparison (``too_few``: its sentence instead)."""
    if rows is None:
        return []
    if not rows:
        return [NO_RUN]
    rows, line = own(rows, receipt)
    table = [[c.replace("|", "\\|") for c in r] for r in run_rows(rows)]
    lines = [*([line, ""] if line else []), intro(rows), "",
             *markdown_table(RUN_HEADER, table)]
    if too_few(rows):
        return [*lines, "", too_few(rows)]
    last = newest(rows)
    lines += ["", over_time_note(last)]
    found = over_time_rows(last)
    if found:
        lines += ["", *markdown_table(OVER_TIME_HEADER, [[c.replace("|", "\\|") for c in r]
                                                        for r in found])]
    return lines
