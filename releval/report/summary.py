"""The summary page of reports/summary.md: the headline measures per system (HardNeg@k beside
P@k; n/a where a measure does not apply; for a recommendation evaluation: the protocol, then
every measure in its group with n and undefined), the candidate budget, each system's
candidates, where the qrels came from and how many hard negatives they mark, which route
found each relevant document, and the split with its leakage findings (and, for
recommendation, the forward-in-time against random split), and the runs kept in the ledger
(``releval.report.history``)."""

from __future__ import annotations

import json

from releval.documents.agreement import Agreement
from releval.documents.ingest import Ingest
from releval.documents.receipt import Receipt
from releval.documents.run_stats import RunStats
from releval.documents.source import Source
from releval.documents.split_report import QuerySet, SplitReport
from releval.documents.summary import Answered, Entry, Summary
from releval.report import recommendation as rec
from releval.report.formats import (
    HARD_NEGATIVES,
    HARD_NEGATIVES_LEGEND,
    TIES_LEGEND,
    UNDEFINED,
    family_and_cutoff,
    hard_negatives,
    markdown_table,
    number,
    tie_counts,
)
from releval.report.history import history_lines

# the headline measures, where evaluated (HardNeg@k beside P@k)
SHOWN = ("nDCG@10", "R@100", "RR@10", "P@10", "HardNeg@10", "Judged@10")


def _cell(entry: Entry | None, n: int) -> str:
    """A headline figure, with its own n where it is not the row's."""
    text = rec.value_text(entry)
    own = n if entry is None else entry.n
    return text if own == n or (entry is not None and not entry.applicable) \
        else f"{text} (n {own})"


def _headline(systems: dict[str, dict[str, Entry]],
              answered: dict[str, Answered] | None = None) -> list[str]:
    """One row per system: the headline measures (n/a where one does not apply; a figure
    over other queries than the first one's with its own n), n and undefined (of the first
    one) and the judged queries its run misses (scored 0); what HardNeg@k means, where it is
    shown."""
    shown = [m for m in SHOWN if any(m in s for s in systems.values())]
    lines = ["| system | " + " | ".join(shown) + " | n | undefined | missing |",
             "|---" * (len(shown) + 4) + "|"]
    for name, measures in systems.items():
        first = measures[shown[0]] if shown else None
        n, undefined = (first.n, first.undefined) if first else (0, 0)
        mine = (answered or {}).get(name)
        gone = None if mine is None else mine.missing
        lines.append(f"| {name} | " + " | ".join(_cell(measures.get(m), n) for m in shown)
                     + f" | {n} | {undefined} | " + ("?" if gone is None else str(gone)) + " |")
    lines += ["", "n, undefined: the first figure's (undefined: no relevant judgment, left out "
              "of the mean); missing: judged queries the run does not answer, scored 0."]
    if any(family_and_cutoff(m)[0] == HARD_NEGATIVES for m in shown):
        lines += ["", f"{HARD_NEGATIVES_LEGEND}."]
    return lines


def _rec_cell(entry: Entry | None) -> str:
    counts = rec.counts_text(entry)
    return rec.value_text(entry) + (f" ({counts})" if counts else "")


def _groups(summary: Summary) -> list[str]:
    """The protocol in words, then per group one row per system: each measure's figure with
    its n and undefined (n/a: not applicable)."""
    systems = summary.systems
    lines = [*rec.protocol(summary.recommendation)]
    for name, measures in rec.grouped(systems).items():
        lines += ["", f"**{name}**: {rec.GROUPS[name]}", "", *markdown_table(
            ["system", *measures],
            [[system, *(_rec_cell(by.get(m)) for m in measures)]
             for system, by in systems.items()])]
    level = rec.system_level(systems)
    if level:
        lines += ["", f"One value per system (n = users contributing): {', '.join(level)}."]
    return lines


def _ties_lines(systems: dict[str, dict[str, Entry]]) -> list[str]:
    """One line per system whose figures a score tie could move (none: no line)."""
    notes = {name: [f"{m} {tie_counts(e)}" for m, e in by.items() if tie_counts(e)]
             for name, by in systems.items()}
    notes = {name: found for name, found in notes.items() if found}
    if not notes:
        return []
    return ["", f"Score ties ({TIES_LEGEND}):", "",
            *(f"- {name}: " + "; ".join(found) for name, found in notes.items())]


def _systems_section(summary: Summary, source: Source) -> list[str]:
    """The headline table (recommendation: the protocol and the grouped measures)."""
    recommendation = bool(summary.recommendation)
    lines = ["# releval summary", "",
             f"Data: {source.source} · qrels: {summary.qrels} · evaluated split(s): "
             f"{', '.join(summary.splits)} ({summary.queries} queries)", "",
             *(_groups(summary) if recommendation
               else _headline(summary.systems, summary.answered))]
    lines += _ties_lines(summary.systems)
    if summary.horizons:
        lines += ["", *(f"- {line}" for line in rec.horizon_summary_lines(summary))]
    if summary.skipped:
        lines += ["", f"Skipped (empty run): {', '.join(summary.skipped)}"]
    lines += ["", f"Candidate budget: every system gets at most {summary.depth} candidates "
              "per query."]
    j = summary.judgments
    return lines + [
        "", rec.LEGEND if recommendation else "n = queries averaged; undefined = queries "
        "with no relevant judgment visible to the user (excluded, never scored).",
        f"Judgments of documents the user may not see were left out: "
        f"{j.invisible_left_out} ({j.relevant_invisible_left_out} relevant)."]


def _notes(stats: RunStats) -> str:
    """Route-specific facts worth a glance: ANN recall, fusion, cache use, and for a run that
    is not filtered (an external run) the returned pairs the access/time rule forbids."""
    notes = [f"{k} {number(v, '.3f')}" if v is not None
             else f"{k} n/a (no query with an exact window)"
             for k, v in (stats.model_extra or {}).items() if k.startswith("ann_recall@")]
    if stats.ann_recall_sample is not None:
        notes.append(f"over {stats.ann_recall_sample} sampled queries")
    if stats.fusion is not None:
        notes.append(f"{json.dumps(stats.fusion)} ({stats.tuning})")
    emb = stats.embeddings
    if emb:
        notes.append(f"encoded {emb['documents_encoded']} docs, {emb['documents_cached']} "
                     "from cache")
    vis = stats.visibility
    if vis:
        notes.append(f"not filtered: {vis['forbidden']} returned (query, document) pairs the "
                     "query may not see (access/time rule; the safety violations add "
                     "must_not_return)")
    return "; ".join(notes)


def _candidates_section(stats: dict[str, RunStats]) -> list[str]:
    """Each system's route, depth, candidates per query, empty windows and latency."""
    rows = [[name, s.route, s.depth, number(s.candidates_per_query.mean, ".1f"),
             s.candidates_per_query.empty,
             *(number(getattr(s.latency_ms, p), ".2f") for p in ("p50", "p95", "p99")),
             _notes(s)]
            for name, s in stats.items()]
    return ["## Candidates", "", *markdown_table(
        ["system", "route", "depth", "candidates/query", "empty windows", "p50 ms", "p95 ms",
         "p99 ms", "notes"], rows)]


def _judgments_section(ingest: Ingest, agreement: Agreement, unjudged) -> list[str]:
    """Where the qrels came from, how many rows were quarantined, and judge agreement."""
    lines = ["## Judgments", "", f"Qrels: {ingest.qrels}.",
             f"Rows in {ingest.rows_in} = accepted {ingest.accepted_new} + already "
             f"accepted {ingest.already_accepted} + quarantined {ingest.quarantined}"
             + (" (" + ", ".join(f"{reason}: {n}" for reason, n in ingest.by_reason.items()
                                 if n) + ")" if ingest.quarantined else "")
             + "."]
    lines.append(hard_negatives(ingest.hard_negatives))
    overall = {k: v for k, v in agreement.model_dump(exclude_unset=True).items()
               if not isinstance(v, dict | list)}
    if overall:
        lines.append("Agreement: " + ", ".join(
            f"{k} {number(v, '.3f')}" if isinstance(v, float) else f"{k} {v}"
            for k, v in overall.items()))
    for pair in agreement.low_agreement:
        lines.append(f"Low agreement: {json.dumps(pair.model_dump())}")
    if unjudged:
        lines.append(f"Unjudged top-k candidates kept for the next pooling round: {unjudged}.")
    return lines


def _route_hits_section(route_hits: dict[str, dict]) -> list[str]:
    """For each fused pair, how many relevant documents each route (or both) found."""
    lines = []
    for pair, counts in route_hits.items():
        a, b = pair.split("|")
        lines += ["", f"## Which route found each relevant document ({a} vs {b})", "",
                  *markdown_table(list(counts), [list(counts.values())])]
    return lines


def _share(value: float | None) -> str:
    """A share as a percentage with one decimal; — where undefined."""
    return number(value, ".1%")


RISK_LEFT_OUT = ("Risk categories: left out: they classify search queries (tags, text), which "
                 "a recommendation evaluation's user-queries do not have.")


def _query_set_lines(q: QuerySet, recommendation: bool = False) -> list[str]:
    """The evaluated query set (``releval.data.query_set.describe``): per sampling source its
    queries and weight, then per risk category count, share, weight share, minimum, whether
    covered and the gate rules it underwrites; the under-covered categories last. For a
    recommendation evaluation the risk categories are left out (``RISK_LEFT_OUT``)."""
    head = f"Query set evaluated ({', '.join(q.splits)}): {q.queries} queries, weight " \
           f"{number(q.weight, '.1f')}"
    if q.untagged:
        head += f"; {q.untagged} untagged, their categories recognised from the text"
    lines = ["", head + ".", *([f"Note: {q.note}."] if q.note else []), ""]
    lines += markdown_table(["source", "queries", "share", "weight", "weight share"], [
        [name, s.count, _share(s.share), number(s.weight, ".1f"), _share(s.weight_share)]
        for name, s in q.sources.items()])
    if recommendation:
        return [*lines, "", RISK_LEFT_OUT]
    covered = {True: "yes", False: "**no**", None: UNDEFINED}
    rows = [[name, str(c.count) + (f" ({c.from_text} from text)" if c.from_text else ""),
             _share(c.share), _share(c.weight_share),
             UNDEFINED if c.minimum is None else c.minimum, covered[c.covered],
             ", ".join(c.underwrites) or UNDEFINED] for name, c in q.categories.items()]
    lines += ["", "Risk categories (minimum: query_set.min_per_category, checked by the gate "
              "rule coverage; underwrites: the gate rules whose figures rest on them):", "",
              *(["Minimums: auto, derived at the gate from the comparison's power plan (the "
                 "coverage rule's reasons state them).", ""] if q.minimums == "auto"
                else []),
              *markdown_table(["category", "count", "share", "weight share", "minimum",
                               "covered", "underwrites"], rows)]
    if q.undercovered:
        lines += ["", f"Under-covered: {', '.join(q.undercovered)}."]
    return lines


def query_set_section(split_report: SplitReport, recommendation: bool = False) -> list[str]:
    """decision.md's "## Query set" section: the evaluated query set and its coverage (the
    split section's table; ``recommendation``: without the risk categories); none when the
    split report does not describe it."""
    q = split_report.query_set
    return ["", "## Query set", *_query_set_lines(q, recommendation)] if q else []


def _split_section(r: SplitReport, recommendation: bool = False) -> list[str]:
    """Cut points, counts per split and tag, the leakage findings and the evaluated query set
    (where the report describes it; ``recommendation``: without the risk categories)."""
    cuts = " → ".join(r.cuts) if r.cuts else "none"
    lines = ["## Split", "", f"Method: {r.method} · cuts: {cuts}"]
    if r.rule:
        lines.append(f"Rule: {r.rule}")
    if r.note:
        lines.append(f"Note: {r.note}")
    splits = list(r.counts)
    tags = sorted({t for by_tag in r.counts_by_tag.values() for t in by_tag})
    lines += ["", "| | " + " | ".join(splits) + " |", "|---" * (len(splits) + 1) + "|",
              "| queries | " + " | ".join(str(r.counts[s]) for s in splits) + " |"]
    for tag in tags:
        lines.append(f"| {tag} | " + " | ".join(
            str(r.counts_by_tag.get(s, {}).get(tag, 0)) for s in splits) + " |")
    shared, dupes = r.leakage.shared_sources, r.leakage.duplicate_texts
    lines += ["", "Leakage:",
              f"- {shared.count} source(s) relevant in both train and test, affecting "
              f"{shared.test_queries_affected} test queries"
              + (": " + ", ".join(x.source_id for x in shared.sources[:5])
                 + (" …" if shared.count > 5 else "") if shared.count else ""),
              f"- {dupes.count} test queries repeat a train query's normalised text"
              + (": " + ", ".join(x.query_id for x in dupes.examples[:5])
                 if dupes.count else "")]
    if r.query_set:
        lines += _query_set_lines(r.query_set, recommendation)
    random = rec.random_split(r)
    if random:
        protocol, rows = random
        lines += ["", f"Forward-in-time against a random split ({protocol}): trained on a "
                  "random share of the log, a route also learns from the future; inflation = "
                  "random − forward, ratio = random / forward.", "",
                  *markdown_table(rec.SPLIT_HEADER, rows)]
    return lines


def sections(summary: Summary, split_report: SplitReport, stats: dict[str, RunStats],
             ingest: Ingest, agreement: Agreement) -> dict[str, list[str]]:
    """The summary page's sections after the headline table, each as its markdown lines:
    candidates, judgments (pooling and agreement), route hits and split (with leakage); the
    HTML report shows the same facts."""
    return {"candidates": _candidates_section(stats),
            "judgments": _judgments_section(ingest, agreement, summary.unjudged),
            "route_hits": _route_hits_section(summary.route_hits),
            "split": _split_section(split_report, bool(summary.recommendation))}


def render_summary(summary: Summary, split_report: SplitReport, source: Source,
                   stats: dict[str, RunStats], ingest: Ingest, agreement: Agreement,
                   history: list[dict] | None = None, receipt: Receipt | None = None,
                   automatic: str | None = None) -> str:
    """The summary page, from the evaluation's summary.json, the split report, the data's
    source.json, each system's run_stats.json and the judgments' ingest.json and
    agreement.json (with ``automatic``, the automatic judge's line, at the judgments' end);
    then, where ``history`` (the ledger's ``entries`` rows) is given, its "## History" part:
    the lineage of ``receipt`` (``releval.report.history``)."""
    lines = [*_systems_section(summary, source), "", *_candidates_section(stats), "",
             *_judgments_section(ingest, agreement, summary.unjudged),
             *([automatic] if automatic else []),
             *_route_hits_section(summary.route_hits), "",
             *_split_section(split_report, bool(summary.recommendation))]
    if history is not None:
        lines += ["", "## History", "", *history_lines(history, receipt)]
    return "\n".join(lines) + "\n"
