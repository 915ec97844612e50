"""reports/index.html: the whole report in one self-contained page that opens offline from disk.

Top to bottom: the decision, one screen to decide from (the gate's verdict with the headline
Δ, 95% CI and verdict of each gate measure beside it, controlled or not, the failed rules
with their reasons, the passing and the n/a rules folded, what was held fixed in one line,
links down); the metrics per system (n, undefined and Judged@k beside every figure,
HardNeg@k right after P@k, the header of a measure where lower is better saying so, n/a
where a measure does not apply; for a recommendation evaluation the protocol in words, then
the ranking, calibration and beyond-accuracy measures); the plots of the evaluation's mode
(``releval.report.plots.PLOTS``, inline SVG); the per-query table (sortable by a click on a
header, filterable by a text box: the one small inline script); the first rows of the
failure worksheet; the comparison in full (conditions, every paired measure, the kind of
change, training variance, health and rollback, the receipt); the off-policy evaluation
(the estimates with their CIs beside the on-policy value and the reference, the diagnostics,
the estimates' and the importance weights' plots; one line without a log); then the
appendix: the history
of the page's lineage in the ledger (``releval.report.history``: a chart per measure, the
runs, the newest run against the one before it, uncontrolled; one line on the other
lineages), the self-test, and the summary page's candidates, judgments (pooling and
agreement; then the automatic judge validated against people, ``releval.report.automatic``),
route hits and split (with leakage) sections (``releval.report.summary.sections``,
the same facts as reports/summary.md; for recommendation the split section compares the
forward-in-time split with a random one and leaves the risk categories out, saying so).

Layout: no table wider than the page at 1,280 px (headers wrap, long cells break); printed,
every ``<details>`` opens and nothing is sticky.

No network: inline CSS, system fonts, inline SVG, no external reference. Deterministic: the
same inputs give the same bytes (no timestamp). Every string from the inputs is escaped;
every number is written with ``releval.report.formats``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.diagnosis import worksheet
from releval.documents.comparison import Comparison, Paired
from releval.documents.decision import Rule
from releval.documents.receipt import Receipt
from releval.documents.summary import Entry
from releval.errors import InputError
from releval.metrics.curves import FAMILY, K
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure
from releval.metrics.spec import Measure
from releval.report import automatic, change, health, history, offpolicy, training
from releval.report import recommendation as rec
from releval.report.decision import WORKSHEET_ROWS, family_lines, reuse
from releval.report.formats import (
    HARD_NEGATIVES,
    HARD_NEGATIVES_LEGEND,
    NOT_APPLICABLE,
    NOT_APPLICABLE_HEADING,
    TIES_LEGEND,
    beside_precision,
    family_and_cutoff,
    interval,
    mark,
    number,
    significant,
    split_applicable,
    tie_note,
    verdict,
    wins_ties_losses,
)
from releval.report.inputs import RECOMMENDATION, ReportInputs
from releval.report.plots import PLOTS, history_chart, svg
from releval.report.selftest import selftest_lines
from releval.report.summary import sections as summary_sections

QUERY_ROWS = 2000  # rows of the per-query table at most: the largest |Δ| are kept
NOT_APPLICABLE_LEGEND = ("n/a = not applicable: the data lacks what the measure needs (e.g. "
                         "HardNeg@k where the qrels mark no hard negative)")
REPRODUCE = "releval reproduce reports/receipt.json"


class Raw(str):
    """Markup already built (and escaped) here: written as is."""


def esc(value) -> str:
    """Text for HTML: escaped, unless it is ``Raw`` markup."""
    return value if isinstance(value, Raw) else html.escape(str(value))


def _tag(name: str, body, **attrs) -> Raw:
    attributes = "".join(f' {k.rstrip("_").replace("_", "-")}="{html.escape(str(v))}"'
                         for k, v in attrs.items() if v is not None)
    return Raw(f"<{name}{attributes}>{esc(body)}</{name}>")


def _table(header: Iterable, rows: Iterable[Iterable], **attrs) -> Raw:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(c if isinstance(c, Raw) and c.startswith("<td")
                                    else f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    table = _tag("table", Raw(f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody>"), **attrs)
    return Raw(f'<div class="scroll">{table}</div>')


def _count(value) -> str:
    return number(None if value is None else int(value), "d")


# --- markdown lines (the summary page's sections, the worksheet) as HTML ----------------

_PIPE = re.compile(r"(?<!\\)\|")


def _inline(text: str) -> str:
    text = html.escape(text.replace("\\|", "|"))
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


def markdown(lines: list[str]) -> Raw:
    """The markdown the reports write (# to ###### headings, tables, - lists, plain lines) as
    HTML."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            cells = [[c.strip() for c in _PIPE.split(row.strip())[1:-1]] for row in block]
            body = [r for r in cells[1:] if not all(set(c) <= set("-:") and c for c in r)]
            head = "".join(f"<th>{_inline(c)}</th>" for c in cells[0])
            rows = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>"
                           for r in body)
            out.append(f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
                       f"<tbody>{rows}</tbody></table></div>")
            continue
        if line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        heading = re.match(r"^(#{1,6}) (.*)$", line)
        if heading:
            level = len(heading[1])
            out.append(f"<h{level}>{_inline(heading[2])}</h{level}>")
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return Raw("\n".join(out))


# --- the decision -----------------------------------------------------------------------


def _receipt(receipt: Receipt | None) -> Raw:
    if receipt and receipt.sha256:
        return Raw(f'<p class="receipt">Run receipt <code>{esc(receipt.sha256[:12])}</code>'
                   f" (reports/receipt.json): reproduce this run with <code>{esc(REPRODUCE)}"
                   "</code>.</p>")
    return Raw('<p class="receipt">No receipt describes these outputs yet: '
               "<code>releval run</code> writes one (reports/receipt.json), to reproduce the run "
               f"with <code>{esc(REPRODUCE)}</code>.</p>")


def _conditions(c: Comparison) -> Raw:
    """What was held fixed: each condition of the baseline and the candidate, side by side."""
    base, cand = c.baseline, c.candidate
    b, k = c.conditions.get(base, {}), c.conditions.get(cand, {})
    rows = [[key, b.get(key, "—"), k.get(key, "—"),
             Raw(f'<td class="mark">{esc(mark(b.get(key) == k.get(key)))}</td>')]
            for key in dict.fromkeys([*b, *k])]
    title = "Held fixed" if c.controlled else "Conditions (they differ: UNCONTROLLED)"
    return Raw(f"<h3>{esc(title)}</h3>"
               + _table(["condition", f"{base} (baseline)", f"{cand} (candidate)", "same"],
                        rows))


def held_line(c: Comparison) -> str:
    """What was held fixed, in one line: the conditions the baseline and the candidate share,
    then those that differ with both values."""
    b, k = c.conditions.get(c.baseline, {}), c.conditions.get(c.candidate, {})
    keys = list(dict.fromkeys([*b, *k]))
    if not keys:
        return "Held fixed: no conditions recorded in the comparison."
    same = [key for key in keys if b.get(key) == k.get(key)]
    differ = [f"{key} ({b.get(key, '—')} vs {k.get(key, '—')})" for key in keys
              if b.get(key) != k.get(key)]
    return (f"Held fixed ({len(same)} of {len(keys)} conditions): {', '.join(same) or 'none'}"
            + (f"; they differ in {', '.join(differ)}" if differ else "") + ".")


def _paired(c: Comparison) -> Raw:
    rows = [[r.measure, _count(r.n), number(r.mean_baseline),
             number(r.mean_candidate), number(r.mean_diff, "+.4f"),
             interval(r.ci_low, r.ci_high), wins_ties_losses(r), number(r.p_value),
             number(r.p_holm), number(r.min_effect, ".3f"), r.verdict]
            for r in c.paired]
    if not rows:
        return Raw("")
    r = c.paired[0]
    unit = c.unit or "query"
    note = (f"Paired by query; bootstrap ({_count(r.resamples)} resamples, seed "
            f"{esc(r.seed)}) and sign-flip test over {_count(r.units)} "
            f"{esc(unit)}(s); Holm over the measures.")
    return Raw("<h3>Paired comparison</h3>" + _table(
        ["measure", "n", c.baseline, c.candidate, "Δ mean", "95% CI", "W/T/L", "p",
         "p (Holm)", "min effect", "verdict"], rows) + f'<p class="note">{note}</p>')


def _horizons(c: Comparison) -> Raw:
    """The primary pair at each further horizon (recommend.horizons_days) and the novelty
    flag per measure; nothing without them."""
    block = c.horizons
    if not block:
        return Raw("")
    rows = [[r.measure, f"{r.horizon_days} days", _count(r.n), number(r.baseline),
             number(r.candidate), number(r.delta, "+.4f"),
             interval(r.ci_low, r.ci_high), r.verdict] for r in block.rows]
    notes = "".join(f"<p>{esc(f.measure)}: {esc(rec.novelty_text(f))}</p>"
                    for f in block.novelty)
    return Raw("<h3>By horizon</h3>" + _table(
        ["measure", "horizon", "users", c.baseline, c.candidate, "Δ mean", "95% CI",
         "verdict"], rows) + notes + '<p class="note">The positives of each horizon are the '
        "purchases within it; the candidates are the same (they see only the history before "
        "the cut); the figures above are those of recommend.horizon_days.</p>")


def _detectable(r: Paired) -> str:
    """The smallest effect the comparison could detect (MDE at ``plan.power``), and, for an
    inconclusive verdict whose MDE exceeds ``min_effect``, the queries it would need."""
    if r.mde is None:
        return number(None)
    needed = r.needed_queries
    more = (f" (> {number(r.min_effect, 'g')}: ~{needed:,} queries needed)"
            if r.verdict == "inconclusive" and r.mde > r.min_effect
            and needed is not None else "")
    return f"{number(r.mde, '.3f')}{more}"


def _headline(inputs: ReportInputs) -> Raw:
    """Beside the verdict: per gate measure the paired Δ (candidate − baseline), its 95% CI,
    the comparison's verdict and what it could detect (``_detectable``)."""
    rows = []
    for measure in inputs.gate_measures():
        r = inputs.paired(measure)
        rows.append([measure, f"{number(r.mean_baseline)} → {number(r.mean_candidate)}",
                     Raw(f'<td class="delta">{esc(number(r.mean_diff, "+.4f"))}</td>'),
                     interval(r.ci_low, r.ci_high),
                     Raw(f'<td class="v-{esc(r.verdict.split()[0])}">'
                         f'{esc(r.verdict)}</td>'), _detectable(r)])
    if not rows:
        return Raw('<p class="absent">No paired comparison of a gate measure.</p>')
    return _table(["gate measure", f"{inputs.baseline} → {inputs.candidate}", "Δ", "95% CI",
                   "verdict", "MDE"], rows, class_="headline")


def _rule_rows(outcomes: list[Rule]) -> list[list]:
    return [[Raw(f'<td class="mark {"ok" if o.passed else "bad"}">'
                 f'{esc(mark(o.passed))}</td>'), o.name, significant(o.value),
             significant(o.threshold), o.reason] for o in outcomes]


def decision_section(inputs: ReportInputs) -> Raw:
    """The first screen: the verdict with the headline Δ per gate measure beside it,
    controlled or not, the failed rules with their reasons, the passing and the n/a rules
    folded (a count, expandable), what was held fixed in one line and a link to the
    comparison in full (``comparison_section``)."""
    gate, c = inputs.gate, inputs.comparison
    passed = bool(gate.passed)
    controlled = bool(gate.controlled)
    block = c.query_set
    incomplete = bool(block) and not block.complete
    status = (Raw('<span class="badge warn">UNCONTROLLED</span>') if not controlled
              else Raw('<span class="badge warn">MISSING QUERIES</span>') if incomplete
              else Raw('<span class="badge ok">controlled</span>'))
    parts = [Raw(f'<div class="first"><div class="verdict {"pass" if passed else "fail"}">'
                 f"{esc(verdict(passed))}</div>{_headline(inputs)}</div>"),
             Raw(f'<p class="lead"><strong>{esc(gate.candidate)}</strong> (candidate) '
                 f'against <strong>{esc(gate.baseline)}</strong> (baseline) · {status}'
                 "</p>")]
    if reuse(gate):
        parts.append(_tag("p", reuse(gate), class_="note"))
    if block:
        parts.append(_tag("p", f"Query set ({block.choice}): {block.label}",
                          class_="warn" if incomplete else "note"))
    differences = gate.differences or c.differences or []
    if not controlled:
        parts.append(Raw('<p class="warn">UNCONTROLLED: the conditions differ; read every '
                         "number as indicative only.</p><ul>"
                         + "".join(f"<li>{esc(d)}</li>" for d in differences) + "</ul>"))
    checked, apart = split_applicable(gate.rules)
    failed = [o for o in checked if not o.passed]
    ok = [o for o in checked if o.passed]
    header = ["", "rule", "value", "threshold", "reason"]
    if not checked:
        parts.append(Raw("<p>No rules configured.</p>"))
    elif failed:
        parts += [Raw(f'<h3 id="failed-rules">Failed rules ({_count(len(failed))} of '
                      f"{_count(len(checked))})</h3>"),
                  _table(header, _rule_rows(failed), class_="rules failed")]
    else:
        parts.append(_tag("p", f"Every rule passed ({_count(len(checked))}).", class_="ok"))
    if ok and failed:
        parts.append(Raw(f"<details><summary>{_count(len(ok))} rule(s) passed</summary>"
                         + _table(header, _rule_rows(ok), class_="rules") + "</details>"))
    elif ok:
        parts.append(Raw("<details><summary>The rules</summary>"
                         + _table(header, _rule_rows(ok), class_="rules") + "</details>"))
    if apart:
        parts.append(Raw(f"<details><summary>{_count(len(apart))} rule(s) "
                         f"{esc(NOT_APPLICABLE_HEADING.lower())}</summary><ul class=\"na\">"
                         + "".join(f"<li>{esc(o.name)}: {esc(o.reason)}</li>"
                                   for o in apart) + "</ul></details>"))
    parts.append(_tag("p", held_line(c), class_="held"))
    if gate.note:
        parts.append(_tag("p", gate.note, class_="note"))
    parts.append(Raw('<p class="note">The comparison in full (every paired measure, the '
                     "conditions, the kind of change, seeds, health, rollback, receipt): "
                     '<a href="#comparison">below</a>.</p>'))
    return Raw("".join(parts))


def comparison_section(inputs: ReportInputs) -> Raw:
    """The comparison in full: the conditions side by side, the paired comparison, the kind
    of change with its inspections and the further comparisons, the training variance,
    system health with the rollback thresholds, and the receipt."""
    c = inputs.comparison
    return Raw("".join([
        _conditions(c), _paired(c), _horizons(c),
        *([markdown(family_lines(c.family)), _figures(inputs, "family")]
          if c.family else []),
        markdown([*change.markdown(c, inputs.health), *training.markdown(c)]),
        markdown(health.markdown(inputs.health, inputs.gate, inputs.receipt)),
        _receipt(inputs.receipt)]))


# --- metrics per system -------------------------------------------------------------------


def _parsed(measure: str) -> Measure | None:
    """The measure a name means, None if it is not one the registry knows."""
    try:
        return parse_measure(measure)
    except InputError:
        return None


def _cutoff(measure: str, depth) -> int | None:
    """The cutoff of a measure's figure (the depth when it has none), None if unparsable."""
    m = _parsed(measure)
    if m is None:
        return None
    return m.cutoff if m.cutoff is not None else depth


def _header(measure: str) -> str:
    """A measure's column header: its name, and "lower is better" where the registry says
    so."""
    m = _parsed(measure)
    lower = m is not None and MEASURES[m.family].better == "lower"
    return f"{measure} (lower is better)" if lower else measure


def _judged(inputs: ReportInputs) -> dict[tuple[str, int], float]:
    """(system, k) -> Judged@k: the evaluation's own Judged@k measures, else the curves'."""
    out = {}
    c = inputs.curves
    if c is not None and not c.empty:
        j = c[c[FAMILY] == "Judged"]
        out = dict(zip(zip(j[S.SYSTEM], j[K].astype(int), strict=True),
                       j[S.VALUE].astype(float), strict=True))
    for system, measures in inputs.summary.systems.items():
        for name, entry in measures.items():
            if name.startswith("Judged@") and entry.value is not None:
                out[(system, _cutoff(name, None))] = entry.value
    return out


def _ties_legend(systems: dict) -> str:
    """What a score-ties note means, where some figure has one."""
    shown = any(tie_note(e) for by in systems.values() for e in by.values())
    return f" {esc(TIES_LEGEND[0].upper() + TIES_LEGEND[1:])}." if shown else ""


def _rec_cell(entry: Entry | None, level: bool) -> Raw:
    """A recommendation measure's figure with n and undefined; n/a (no number) where it does
    not apply."""
    if entry is None:
        return Raw('<td><span class="fig">—</span></td>')
    if not rec.applicable(entry):
        return Raw(f'<td class="na"><span class="fig">{esc(NOT_APPLICABLE)}</span>'
                   f'<span class="meta">{esc(rec.note_text(entry))}</span></td>')
    meta = [rec.counts_text(entry), *(["one value per system"] if level else []),
            *filter(None, [tie_note(entry)])]
    return Raw(f'<td><span class="fig">{esc(rec.value_text(entry))}</span>'
               + "".join(f'<span class="meta">{esc(x)}</span>' for x in meta) + "</td>")


def _rec_metrics(inputs: ReportInputs) -> Raw:
    """The protocol in words, then per group one row per system, one column per measure."""
    s = inputs.summary
    systems = s.systems
    level = set(rec.system_level(systems))
    parts = [Raw("<h3>Protocol</h3>"), Raw("".join(
        f"<p>{esc(line)}</p>" for line in rec.protocol(s.recommendation)))]
    for name, measures in rec.grouped(systems).items():
        rows = [[Raw(f"<td><strong>{esc(system)}</strong></td>"),
                 *(_rec_cell(by.get(m), m in level) for m in measures)]
                for system, by in systems.items()]
        parts += [Raw(f'<h3 id="group-{esc(name)}">{esc(name.capitalize())}</h3>'),
                  _tag("p", rec.GROUPS[name], class_="note"),
                  _table(["system", *measures], rows, class_="metrics")]
    parts.append(Raw(
        f'<p class="note">Evaluated split(s): {esc(", ".join(s.splits))} '
        f"({_count(s.queries)} user-queries); every system gets at most "
        f"{esc(s.depth)} candidates per user. {esc(rec.LEGEND)}"
        f"{_ties_legend(systems)}</p>"))
    if s.skipped:
        parts.append(_tag("p", "Skipped (empty run): " + ", ".join(s.skipped),
                          class_="note"))
    return Raw("".join(parts))


def metrics_section(inputs: ReportInputs) -> Raw:
    """One row per system, one column per measure: the figure, then n, undefined and the
    Judged@k at the figure's cutoff (recommendation: the protocol and the measures by
    group)."""
    if inputs.mode == RECOMMENDATION:
        return _rec_metrics(inputs)
    s = inputs.summary
    systems = s.systems
    measures = beside_precision(dict.fromkeys(m for by in systems.values() for m in by))
    judged = _judged(inputs)
    depth = s.depth
    rows = []
    for system, by in systems.items():
        row = [Raw(f"<td><strong>{esc(system)}</strong></td>")]
        for m in measures:
            e = by.get(m)
            if e is None:
                row.append("—")
                continue
            if not rec.applicable(e):
                row.append(Raw(f'<td class="na"><span class="fig">{esc(NOT_APPLICABLE)}'
                               f'</span><span class="meta">{esc(rec.NOT_APPLICABLE_NOTE)}'
                               "</span></td>"))
                continue
            k = _cutoff(m, depth)
            meta = [f"n {_count(e.n)} · undef. {_count(e.undefined)}"]
            if not m.startswith("Judged") and (system, k) in judged:
                meta.append(f"Judged@{k} {number(judged[(system, k)], '.3f')}")
            if note := tie_note(e):
                meta.append(note)
            row.append(Raw(f'<td><span class="fig">{esc(number(e.value))}</span>'
                           + "".join(f'<span class="meta">{esc(x)}</span>' for x in meta)
                           + "</td>"))
        rows.append(row)
    parts = [_table(["system", *map(_header, measures)], rows, class_="metrics")]
    legends = [legend for legend, shown in (
        (NOT_APPLICABLE_LEGEND, any(not rec.applicable(e) for by in systems.values()
                                    for e in by.values())),
        (HARD_NEGATIVES_LEGEND, any(family_and_cutoff(m)[0] == HARD_NEGATIVES
                                    for m in measures))) if shown]
    parts.append(Raw(
        f'<p class="note">Evaluated split(s): {esc(", ".join(s.splits))} '
        f"({_count(s.queries)} queries); every system gets at most {esc(depth)} "
        "candidates per query. n = queries averaged; undef. = queries with no relevant "
        "judgment visible to the user (excluded, never scored); Judged@k = the share of "
        "the top k with a judgment, at the figure's own cutoff (the depth for a measure "
        f"without one).{''.join(f' {esc(x)}.' for x in legends)}{_ties_legend(systems)}</p>"))
    if s.skipped:
        parts.append(_tag("p", "Skipped (empty run): " + ", ".join(s.skipped),
                          class_="note"))
    return Raw("".join(parts))


# --- history ------------------------------------------------------------------------------


def _history_charts(rows: list[dict], inputs: ReportInputs) -> Raw:
    parts = []
    for i, measure in enumerate(history.measures(rows), start=1):
        chart = history_chart(inputs, measure)
        if chart is None:
            continue
        parts.append(Raw(f'<figure id="history-plot-{i}"><h3>{esc(measure)} over the runs</h3>'
                         f'<div class="chart">{svg(chart, f"history-plot-{i}")}</div>'
                         f"<figcaption>{esc(history.caption(rows, measure))}</figcaption>"
                         "</figure>"))
    return Raw("".join(parts))


def history_section(inputs: ReportInputs) -> Raw:
    """The runs of the page's lineage kept in the ledger (``releval.report.history``, ``own``:
    one line on the other lineages): a chart per measure, the runs table and the newest run
    against the one before it (UNCONTROLLED)."""
    if inputs.history is None:
        return Raw('<p class="absent">No ledger read (the report stage\'s --ledger): no '
                   "history.</p>")
    if not inputs.history:
        return _tag("p", history.NO_RUN, class_="absent")
    rows, line = history.own(inputs.history, inputs.receipt)
    parts = [_tag("p", line, class_="lineage"), _history_charts(rows, inputs),
             Raw("<h3>Runs</h3>"), _tag("p", history.intro(rows), class_="note"),
             _table(history.RUN_HEADER, history.run_rows(rows), class_="history")]
    few = history.too_few(rows)
    if few:
        return Raw(parts[0] + _tag("p", few, class_="absent") + "".join(parts[1:]))
    last = history.newest(rows)
    uncontrolled = last.over_time is not None and last.over_time.comparable
    badge = Raw(' <span class="badge warn">UNCONTROLLED</span>' if uncontrolled else "")
    parts += [Raw(f"<h3>The newest run against the one before it{badge}</h3>"),
              _tag("p", history.over_time_note(last),
                   class_="warn" if uncontrolled else "note")]
    found = history.over_time_rows(last)
    if found:
        parts.append(_table(history.OVER_TIME_HEADER, found, class_="over-time"))
    return Raw("".join(parts))


# --- plots ----------------------------------------------------------------------------------


def plots_section(inputs: ReportInputs) -> Raw:
    """Every registered plot of the page's mode in order: its SVG, or what is missing."""
    return _figures(inputs, "plots")


def _figures(inputs: ReportInputs, section: str) -> Raw:
    parts = []
    for name, p in PLOTS.items():
        if inputs.mode not in p.modes or p.section != section:
            continue
        chart = p.build(inputs)
        body = (Raw(f'<div class="chart">{svg(chart, f"plot-{name}")}</div>') if chart is not None
                else Raw(f'<p class="absent">{esc(p.absent)}</p>'))
        parts.append(Raw(f'<figure id="plot-{esc(name)}"><h3>{esc(p.title)}</h3>{body}'
                         f"<figcaption>{esc(p.caption)}</figcaption></figure>"))
    return Raw("".join(parts))


def offpolicy_section(inputs: ReportInputs) -> Raw:
    """The off-policy evaluation (``releval.report.offpolicy``) with its plots; one line
    without a log."""
    text = offpolicy.lines(inputs.offpolicy)[2:]
    if not (inputs.offpolicy and inputs.offpolicy.applicable):
        return Raw(f'<p class="absent">{esc(text[0])}</p>')
    return Raw(markdown(text) + _figures(inputs, "offpolicy"))


# --- the per-query table ----------------------------------------------------------------------


def _layers_by_query(inputs: ReportInputs) -> dict[str, pd.Series]:
    """system -> (query_id -> "layer×n, …" in the failure analysis's layer order)."""
    f = inputs.failure_rows
    if f is None or f.empty:
        return {}
    order = {layer: i for i, layer in enumerate(inputs.failures.layers)}
    counts = (f.groupby([S.SYSTEM, S.QUERY_ID, worksheet.LAYER], sort=True).size()
              .rename("n").reset_index())
    counts["order"] = counts[worksheet.LAYER].map(order).fillna(len(order))
    counts = counts.sort_values([S.SYSTEM, S.QUERY_ID, "order", worksheet.LAYER], kind="stable")
    many = counts["n"] > 1  # column
    counts["text"] = counts[worksheet.LAYER].astype(str) + np.where(  # column
        many, "×" + counts["n"].astype(str), "")  # column
    joined = counts.groupby([S.SYSTEM, S.QUERY_ID], sort=True)["text"].agg(", ".join)  # column
    return {str(system): part.droplevel(0) for system, part in joined.groupby(level=0)}


def query_rows(inputs: ReportInputs) -> tuple[pd.DataFrame, int]:
    """The per-query table's rows (query_id, text, tags, baseline, candidate, diff, and each
    compared system's failure layers), at most ``QUERY_ROWS`` (the largest |Δ|), sorted by Δ
    (worst first, undefined last); and how many queries there are in all."""
    d = inputs.per_query_diff
    if d is None or d.empty:
        return pd.DataFrame(), 0
    d = d.loc[d[S.MEASURE] == inputs.measure, [S.QUERY_ID, "baseline", "candidate", "diff"]]
    total = len(d)
    if total > QUERY_ROWS:
        keep = d["diff"].abs().fillna(-1.0).sort_values(ascending=False, kind="stable")
        d = d.loc[keep.index[:QUERY_ROWS]]
    d = d.assign(**{S.QUERY_ID: d[S.QUERY_ID].astype(str)})
    q = inputs.queries
    if q is not None and not q.empty:
        tags = q[[S.QUERY_ID, S.TAGS]].explode(S.TAGS).dropna()
        tags = tags.assign(**{S.TAGS: tags[S.TAGS].astype(str)}).groupby(
            S.QUERY_ID, sort=True)[S.TAGS].agg(", ".join)
        first = q.drop_duplicates(S.QUERY_ID)
        text = pd.Series(first[S.TEXT].astype(str).to_numpy(),
                         index=first[S.QUERY_ID].astype(str).to_numpy())
        d = d.assign(tags=d[S.QUERY_ID].map(tags).fillna(""),
                     text=d[S.QUERY_ID].map(text).fillna(""))
    else:
        d = d.assign(tags="", text="")
    layers = _layers_by_query(inputs)
    for role, system in (("baseline", inputs.baseline), ("candidate", inputs.candidate)):
        d[f"failures_{role}"] = d[S.QUERY_ID].map(layers.get(system, pd.Series(dtype=str))) \
            .fillna("")
    d = d.sort_values(["diff", S.QUERY_ID], na_position="last", kind="stable")
    return d.reset_index(drop=True), total


def _num(value, spec: str = ".4f", cls: str | None = None) -> Raw:
    defined = value is not None and not (isinstance(value, float) and np.isnan(value))
    attrs = f' data-v="{float(value)!r}"' if defined else ' data-v=""'
    css = f' class="{cls}"' if cls and defined else ""
    return Raw(f"<td{attrs}{css}>{esc(number(value, spec))}</td>")


def queries_section(inputs: ReportInputs) -> Raw:
    rows, total = query_rows(inputs)
    if rows.empty:
        return Raw('<p class="absent">No per-query differences of the gate\'s measure '
                   "(compare/per_query_diff.parquet).</p>")
    base, cand, m = inputs.baseline, inputs.candidate, inputs.measure
    body = []
    for r in rows.itertuples(index=False):
        diff = r.diff
        cls = None if np.isnan(diff) else ("pos" if diff > 0 else "neg" if diff < 0 else None)
        body.append("<tr>" + _tag("td", r.query_id, title=r.text or None) + _tag("td", r.tags)
                    + _num(r.baseline) + _num(r.candidate) + _num(diff, "+.4f", cls)
                    + _tag("td", r.failures_baseline) + _tag("td", r.failures_candidate)
                    + "</tr>")
    header = ["query", "tags", f"{m} {base}", f"{m} {cand}", "Δ", f"failures {base}",
              f"failures {cand}"]
    head = "".join(f'<th scope="col" title="sort">{esc(h)}</th>' for h in header)
    shown = (f"all {_count(total)} queries" if total == len(rows)
             else f"the {_count(len(rows))} of {_count(total)} queries with the largest |Δ|")
    return Raw(
        f'<p class="note">{esc(m)} per query ({esc(shown)}); Δ = {esc(cand)} − {esc(base)}; '
        "failures: the layers that lost each system's missed relevant documents. Click a "
        "header to sort, type to filter.</p>"
        '<p><input type="search" id="qfilter" placeholder="filter: query id, tag, layer…" '
        'aria-label="filter the queries"> <span id="qcount"></span></p>'
        f'<div class="scroll tall"><table id="qtable" class="sortable"><thead><tr>{head}'
        f"</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


# --- the worksheet and the summary's sections ------------------------------------------------


def worksheet_section(inputs: ReportInputs) -> Raw:
    text = worksheet.markdown(inputs.sheet, limit=WORKSHEET_ROWS)
    return Raw('<p class="note">The manual inspection worksheet (data/failures/worksheet.csv; '
               "fill in reviewer_layer and set failures.review to ingest it).</p>"
               + markdown(text.splitlines()))


def selftest_section(inputs: ReportInputs) -> Raw:
    lines = selftest_lines(inputs.selftest, inputs.selftest_rows, inputs.differential)
    return markdown(lines) if lines else Raw(
        '<p class="absent">No self-test outputs (data/selftest/): run the selftest stage.</p>')


SECTIONS = (
    ("decision", "Decision", decision_section),
    ("metrics", "Metrics per system", metrics_section),
    ("plots", "Plots", plots_section),
    ("queries", "Per query", queries_section),
    ("worksheet", "Failure worksheet", worksheet_section),
    ("comparison", "The comparison in full", comparison_section),
    ("offpolicy", "Off-policy evaluation", offpolicy_section),
    ("history", "History", history_section),
    ("selftest", "Self-test", selftest_section),
)
SUMMARY_SECTIONS = (("candidates", "Candidates"), ("judgments", "Judgments and pooling"),
                    ("route_hits", "Route hits"), ("split", "Split and leakage"))

STYLE = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d8dee4;--ok:#1a7f37;--bad:#c62828;--warn:#9a6700}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1480px;padding:1rem 1.25rem 4rem;color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.3rem;margin:2.2rem 0 .6rem;
border-bottom:1px solid var(--line);padding-bottom:.3rem}h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
nav a{margin-right:.9rem;color:#0b57d0;text-decoration:none}nav{margin:.5rem 0 1rem}
.sub{color:var(--muted);margin:.2rem 0}
.first{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem 1.5rem}
.first .scroll{flex:1 1 28rem}table.headline{font-size:1rem}
table.headline td.delta{font-size:1.25rem;font-weight:700;font-variant-numeric:tabular-nums}
.v-improved{color:var(--ok);font-weight:600}.v-regressed{color:var(--bad);font-weight:600}
.verdict{display:inline-block;font-size:3rem;font-weight:800;letter-spacing:.08em;
padding:.1rem 1.2rem;border-radius:.5rem;color:#fff;margin:.3rem 0}
.verdict.pass{background:var(--ok)}.verdict.fail{background:var(--bad)}
.lead{font-size:1.1rem;margin:.3rem 0}p.ok{color:var(--ok);font-weight:600}
details{margin:.4rem 0}summary{cursor:pointer;font-weight:600}p.held{margin:.5rem 0}
.badge{padding:.05rem .5rem;border-radius:1rem;font-size:.85rem;
font-weight:600;border:1px solid}.badge.ok{color:var(--ok)}.badge.warn{color:#fff;
background:var(--warn)}p.warn{color:var(--warn);font-weight:600}
.scroll{overflow-x:auto}.scroll.tall{max-height:36rem;overflow-y:auto}
table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem;max-width:100%}
th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;
vertical-align:top;overflow-wrap:anywhere}th{background:#f6f8fa;position:sticky;top:0;
overflow-wrap:normal}table.rules td:nth-child(n+3):nth-child(-n+4){white-space:nowrap}
td[data-v]{text-align:right;font-variant-numeric:tabular-nums}
td.mark{font-weight:700;text-align:center}td.ok{color:var(--ok)}td.bad{color:var(--bad)}
td.pos{color:var(--ok)}td.neg{color:var(--bad)}
table.metrics{font-size:.85rem}table.metrics td,table.metrics th{padding:.3rem .4rem}
table.metrics td:first-child{white-space:nowrap}
.fig{display:block;font-weight:600;overflow-wrap:normal;
font-variant-numeric:tabular-nums}td.na .fig{color:var(--muted);font-weight:400}
.meta{display:block;color:var(--muted);font-size:.75rem}
table.sortable th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
figure{margin:1.2rem 0 2rem}figcaption,.note{color:var(--muted);font-size:.85rem}
.chart svg{max-width:100%;height:auto}.absent{color:var(--muted);font-style:italic}
code{background:#f6f8fa;padding:.05rem .3rem;border-radius:.25rem;font-size:.85em}
input[type=search]{font:inherit;padding:.3rem .5rem;width:22rem;max-width:100%}
footer{margin-top:3rem;color:var(--muted);font-size:.8rem}
@media print{body{max-width:none;padding:0;font-size:11pt}nav,input[type=search],#qcount
{display:none}th{position:static}.scroll,.scroll.tall{overflow:visible;max-height:none}
details::details-content{content-visibility:visible;display:block}summary{list-style:none}
section,figure{break-inside:auto}h2,h3{break-after:avoid}}
""".strip()

SCRIPT = """
window.addEventListener("beforeprint",function(){
Array.prototype.forEach.call(document.querySelectorAll("details"),function(d){d.open=true;});});
(function(){
var t=document.getElementById("qtable");if(!t)return;
var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows),
box=document.getElementById("qfilter"),count=document.getElementById("qcount");
function shown(){var n=0;rows.forEach(function(r){if(!r.hidden)n++;});
count.textContent=n+" of "+rows.length+" rows";}
box.addEventListener("input",function(){var q=box.value.toLowerCase();
rows.forEach(function(r){r.hidden=q!==""&&r.textContent.toLowerCase().indexOf(q)<0;});
shown();});
function key(r,i){var c=r.cells[i],v=c.getAttribute("data-v");
if(v===null)return c.textContent.toLowerCase();return v===""?null:parseFloat(v);}
Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){
th.addEventListener("click",function(){
var dir=th.getAttribute("aria-sort")==="ascending"?-1:1;
Array.prototype.forEach.call(t.tHead.rows[0].cells,function(h){h.removeAttribute("aria-sort");});
th.setAttribute("aria-sort",dir>0?"ascending":"descending");
rows.sort(function(a,b){var x=key(a,i),y=key(b,i);
if(x===null||y===null)return x===y?0:(x===null?1:-1);
return x<y?-dir:x>y?dir:0;});
rows.forEach(function(r){body.appendChild(r);});});});
shown();})();
""".strip()


def render_html(inputs: ReportInputs) -> str:
    """The page, from the report's inputs."""
    s, c = inputs.summary, inputs.comparison
    md = summary_sections(s, inputs.split_report, inputs.stats, inputs.ingest, inputs.agreement)
    blocks = [(key, title, Raw(f"<h2>{esc(title)}</h2>" + fn(inputs)))
              for key, title, fn in SECTIONS]
    blocks += [(key, title, markdown(md[key]))  # its own "## …" headings title it
               for key, title in SUMMARY_SECTIONS if md.get(key)]
    at = next((i + 1 for i, (key, _, _) in enumerate(blocks) if key == "judgments"),
              len(blocks))  # the automatic judge beside the human judgments
    blocks.insert(at, ("automatic", "Automatic judgments",
                       markdown(automatic.lines(inputs.automatic))))
    nav = " ".join(f'<a href="#{key}">{esc(title)}</a>' for key, title, _ in blocks)
    body = "\n".join(f'<section id="{key}">{content}</section>' for key, _, content in blocks)
    name = f"releval report: {c.candidate} vs {c.baseline}"
    header = (f"<header><h1>{esc(name)}</h1><p class=\"sub\">Data: "
              f"{esc(inputs.source.source)} · qrels: {esc(s.qrels)} · "
              f"evaluated split(s): {esc(', '.join(s.splits))} "
              f"({_count(s.queries)} queries) · gate measure: {esc(inputs.measure)}</p>"
              f"<nav>{nav}</nav></header>")
    footer = ("<footer>Written by the report stage from the pipeline's outputs (data/…); the "
              "same facts as reports/summary.md and reports/decision.md.</footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{esc(name)}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n"
            f"{header}\n<main>\n{body}\n</main>\n{footer}\n<script>\n{SCRIPT}\n</script>\n"
            "</body>\n</html>\n")
