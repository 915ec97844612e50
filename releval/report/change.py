"""The kind of change a comparison declares (comparison.json's ``change``): what it holds
fixed with both sides' values, and its inspections as tables; then each ``also``
comparison (its paired rows, differences and change): the markdown lines of a section of
decision.md (the page renders the same lines, ``releval.report.html.markdown``)."""

from __future__ import annotations

from dataclasses import dataclass

from releval.documents.comparison import Comparison, Inspection
from releval.documents.health import Health
from releval.report.formats import interval, mark, markdown_table, number, significant

HEADERS = {"mean_diff": "Δ mean", "ci_low": "CI low", "ci_high": "CI high",
           "p_holm": "p (Holm)"}
FORMATS = {"mean_diff": "+.4f", "ci_low": "+.4f", "ci_high": "+.4f", "p_holm": ".4f"}
PAIRED_HEADER = ["measure", "n", "Δ mean", "95% CI", "p (Holm)", "verdict"]


@dataclass(frozen=True)
class Block:
    """One piece of the section: a heading (``level``, ``text``), a paragraph (``text``), a
    list (``items``) or a table (``header``, ``rows``)."""

    kind: str
    text: str = ""
    level: int = 0
    items: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


def cell(value) -> str:
    """A table cell: — where undefined, ✓/✗ for a flag, four significant digits for a float,
    anything else as text."""
    if isinstance(value, bool):
        return mark(value)
    return significant(value) if isinstance(value, float) or value is None else str(value)


def _table(records: list[dict]) -> Block:
    """Records as a table: one column per key, paired-row fields under ``HEADERS`` in
    ``FORMATS``."""
    header = tuple(dict.fromkeys(k for r in records for k in r))
    return Block("table", header=tuple(HEADERS.get(h, h) for h in header),
                 rows=tuple(tuple(number(r.get(h), FORMATS[h]) if h in FORMATS
                                  else cell(r.get(h)) for h in header) for r in records))


def _measured(found: Inspection, health: Health | None) -> list[dict]:
    """An inspection's rows, or for one that names ``measured`` systems their latency
    percentiles from health.json (— where not measured)."""
    systems = health.systems if health else {}
    return found.rows or [
        {"system": s, **{f"{p} ms": systems[s].figure(f"latency_{p}_ms") if s in systems
                         else None for p in ("p50", "p95", "p99")}} for s in found.measured]


def _change(c: Comparison, level: int, health: Health | None) -> list[Block]:
    """The kind, what it holds fixed on both sides, and each inspection."""
    ch = c.change
    base, cand = c.baseline, c.candidate
    if not ch.kind:
        return [Block("p", f"Kind of change: {ch.label}.")]
    blocks = [Block("h", f"Change: {ch.kind} ({ch.label}), {cand} vs {base}", level),
              Block("p", "Held fixed for this kind of change, besides the general conditions:"),
              Block("table", header=("condition", "what", f"{base} (baseline)",
                                     f"{cand} (candidate)", "same"),
                    rows=tuple((f.condition, f.what, cell(f.baseline), cell(f.candidate),
                                mark(f.same)) for f in ch.holds_fixed))]
    for name, found in ch.inspections.items():
        blocks += [Block("h", name.replace("_", " "), level + 1),
                   Block("p", found.definition)]
        rows = _measured(found, health)
        blocks.append(_table(rows) if rows else Block("p", "None."))
        if found.has_delta:
            delta = number(found.delta, "+.4g")
            blocks.append(Block("p", f"Δ ({cand} − {base}): {delta}"))
    return blocks


def _also(c: Comparison, level: int, health: Health | None) -> list[Block]:
    """One further comparison: heading, differences when uncontrolled, paired rows, change."""
    state = "controlled" if c.controlled else "UNCONTROLLED"
    kind = c.change.kind or "no kind declared"
    blocks = [Block("h", f"{c.candidate} vs {c.baseline} ({kind}; {state})", level)]
    if c.differences:
        blocks.append(Block("ul", items=tuple(c.differences)))
    rows = tuple((r.measure, cell(r.n), number(r.mean_diff, "+.4f"),
                  interval(r.ci_low, r.ci_high), number(r.p_holm), r.verdict)
                 for r in c.paired)
    blocks.append(Block("table", header=tuple(PAIRED_HEADER), rows=rows) if rows
                  else Block("p", "No paired rows."))
    return blocks + _change(c, level + 1, health)


def blocks(comparison: Comparison, health: Health | None) -> list[Block]:
    """The primary comparison's change, then every ``also`` comparison; ``health``:
    health.json, the measured latencies an inspection names."""
    out = _change(comparison, 2, health)
    also = comparison.also or []
    if also:
        out.append(Block("h", "Also compared", 2))
        out += [b for c in also for b in _also(c, 3, health)]
    return out


def markdown(comparison: Comparison, health: Health | None = None) -> list[str]:
    """The section as markdown lines (cells' pipes escaped); ``health``: health.json (the
    measured latencies; none: shown as not measured)."""
    lines: list[str] = []
    for b in blocks(comparison, health):
        if b.kind == "h":
            lines += [*([""] if lines and lines[-1] else []), "#" * b.level + " " + b.text, ""]
        elif b.kind == "p":
            lines += [b.text, ""]
        elif b.kind == "ul":
            lines += [*(f"- {item}" for item in b.items), ""]
        else:
            lines += [*markdown_table([h.replace("|", "\\|") for h in b.header],
                                      [[v.replace("|", "\\|") for v in r] for r in b.rows]), ""]
    return lines
