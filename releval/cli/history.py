"""How ``releval history`` prints the ledger: one row per kept run (when, window, receipt,
the headline measure of baseline and candidate, live and on the pinned fixture, the gate
decision), then what moved from the run before the newest to the newest."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from releval.report.formats import number


def _figure(block: dict | None, system: str, measure: str) -> str:
    figure = ((block or {}).get("systems") or {}).get(system, {}).get(measure) or {}
    if figure.get("mean") is None:
        return "—"
    ci = (f" [{number(figure['ci_low'])}, {number(figure['ci_high'])}]"
          if figure.get("ci_low") is not None else "")
    return number(figure["mean"]) + ci


def _window(row: dict) -> str:
    schedule = row.get("schedule") or {}
    window = schedule.get("window") or {}
    return ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in window.items()) or (
        "scheduled" if schedule else "—")


def table(rows: list[dict], ledger: Path) -> Table:
    """The ledger as a table (``releval.project.history.entries`` rows)."""
    measure = next((r["measure"] for r in reversed(rows) if r.get("measure")), "?")
    out = Table(title=f"runs kept in {ledger} ({measure}, mean [95% CI])")
    for col in ("finished (UTC)", "window", "receipt", "baseline", "candidate",
                "fixture: candidate", "decision", "since the run before"):
        out.add_column(col)
    for r in rows:
        if "problem" in r:
            out.add_row(r["file"], "", "[red]" + r["problem"] + "[/red]", *[""] * 5)
            continue
        live = r["figures"] or {"systems": {s: {r["measure"]: {"mean": v}}
                                            for s, v in r["values"].items()}}
        moved = r.get("over_time") or {}
        change = _change(moved, r["candidate"], r["measure"])
        out.add_row(str(r["finished_at"] or "?")[:16].replace("T", " "), _window(r),
                    r["sha256"], f"{r['baseline']} {_figure(live, r['baseline'], measure)}",
                    f"{r['candidate']} {_figure(live, r['candidate'], measure)}",
                    _figure(r["fixture"], r["candidate"], measure),
                    (r["decision"] or "?") + ("" if r["controlled"] else " UNCONTROLLED"),
                    change)
    return out


def _change(moved: dict, system: str, measure: str) -> str:
    if not moved.get("comparable"):
        return moved.get("why", "—") if moved else "—"
    parts = moved["systems"].get(system, {}).get(measure)
    verdict = moved.get("attribution", {}).get(system, {}).get(measure, {}).get("verdict")
    if not parts:
        return "—"
    return (f"Δ {parts['delta']:+.4f} = rate {parts['rate']:+.4f} + mix {parts['mix']:+.4f}"
            + (" COMPOSITION" if parts["mix_shift"] else "") + (f"; {verdict}" if verdict
                                                                 else ""))


def over_time_lines(row: dict) -> list[str]:
    """The newest run against the one before it: per system and measure the uncontrolled
    decomposition and the attribution, one line each."""
    moved = row.get("over_time") or {}
    if not moved.get("comparable"):
        return [f"over time: {moved.get('why', 'no earlier run')}"] if moved else []
    lines = [f"over time, {row['sha256']} against {moved['previous']['sha256']} "
             f"(UNCONTROLLED: {moved['note']}; slices by {moved['dimension']}):"]
    for system, measures in moved["systems"].items():
        for measure, d in measures.items():
            why = moved.get("attribution", {}).get(system, {}).get(measure, {})
            lines.append(
                f"  {system} {measure}: traffic-weighted {d['before']:.4f} → {d['after']:.4f} "
                f"(Δ {d['delta']:+.4f} = rate {d['rate']:+.4f} + mix {d['mix']:+.4f}); "
                f"equal-slice {d['equal_slice_before']:.4f} → {d['equal_slice_after']:.4f}"
                + ("; COMPOSITION: the mix moved the aggregate, no slice moved that way"
                   if d["mix_shift"] else "")
                + (f"; {why['verdict']}: {why['why']}" if why else ""))
    return lines
