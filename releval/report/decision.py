"""The decision document (reports/decision.md, also the end of reports/summary.md): the
comparison with the kind of change it declares (what it holds fixed, its inspections) and
the further comparisons, the training variance over seeds, its slices, no-answer and safety,
failures by layer, system health with freshness and the rollback thresholds, the query set's
coverage, the off-policy evaluation, and the release gate with the evaluated set's reuse
(its looks)."""

from __future__ import annotations

import pandas as pd

from releval import artifacts
from releval.data import contracts as S
from releval.decision.looks import sentence
from releval.decision.significance import TESTS
from releval.diagnosis import worksheet
from releval.documents.comparison import Comparison, Family
from releval.documents.decision import Decision
from releval.documents.failures import Failures
from releval.documents.health import Health
from releval.documents.offpolicy import OffPolicyDoc
from releval.documents.receipt import Receipt
from releval.documents.safety import Safety
from releval.report import change, health, offpolicy, training
from releval.report import recommendation as rec
from releval.report.formats import (
    NOT_APPLICABLE,
    NOT_APPLICABLE_HEADING,
    count,
    interval,
    mark,
    markdown_table,
    number,
    plural,
    significant,
    split_applicable,
    verdict,
    wins_ties_losses,
)

TOO_SMALL = "too_small"  # slices.parquet's column: a slice below min_n, not tested
WORKSHEET_ROWS = 8  # rows of the inspection worksheet shown; the rest are in its CSV
SAFETY_COUNTS = (
    "violations = one per returned (query, document) pair and rule it breaks: must_not_return "
    "plus the access/time rule (the other reason columns; one reason per pair, so a pair "
    "counts twice only when it breaks both). The access/time columns sum to the Candidates "
    "table's not-filtered count of an external run.")


def family_lines(block: Family | None) -> list[str]:
    """``compare.systems`` as one family: per measure the leaderboard with its letter groups
    (a shared letter: not told apart at α after the correction), then every pair."""
    if not block:
        return []
    test = TESTS[block.test].label
    query_set = block.query_set
    lines = [f"## Many systems: {', '.join(block.systems)}", "",
             f"Family {block.family}, {test}, {block.correction} over each measure's "
             f"pairs; query set ({query_set.choice}): {query_set.label}."
             + (f" Left out (no evaluated values): {', '.join(block.left_out_systems)}."
                if block.left_out_systems else ""), ""]
    for f in block.measures:
        lines += [f"**{f.measure}** ({f.n} queries; {f.left_out} undefined for a "
                  "system, left out)", "", *markdown_table(
                      ["rank", "system", "mean", "95% CI", "group"],
                      [[r.rank, r.system, number(r.mean), interval(r.ci_low, r.ci_high, ".4f"),
                        r.group] for r in f.leaderboard]), "", *markdown_table(
                      ["baseline", "candidate", "Δ mean", "95% CI", "d_z", "p",
                       f"p ({f.correction})", "verdict"],
                      [[r.baseline, r.candidate, number(r.mean_diff, "+.4f"),
                        interval(r.ci_low, r.ci_high), number(r.effect_size, "+.2f"),
                        number(r.p_value), number(r.p_adjusted), r.verdict]
                       for r in f.pairs]), ""]
    return lines


def _comparison_section(c: Comparison) -> list[str]:
    """The paired comparison, the conditions held fixed, aggregates and the mix check."""
    block = c.query_set
    label = ("UNCONTROLLED" if not c.controlled else
             "controlled, MISSING QUERIES" if block and not block.complete else "controlled")
    lines = [f"## Comparison: {c.candidate} vs {c.baseline} ({label})", ""]
    if block:
        lines += [f"Query set ({block.choice}): {block.label}.", ""]
    if not c.controlled:
        lines += ["**UNCONTROLLED** — conditions differ; read every number below as "
                  "indicative only:", *(f"- {d}" for d in c.differences), ""]
    held = "; ".join(f"{k}: {v}" for k, v in c.conditions[c.baseline].items())
    lines += [("Held fixed: " if c.controlled else "Baseline's conditions: ") + held, ""]
    unit = c.unit or "query"
    rows = [[r.measure, r.n, number(r.mean_baseline), number(r.mean_candidate),
             number(r.mean_diff, "+.4f"), interval(r.ci_low, r.ci_high),
             wins_ties_losses(r), number(r.p_value), number(r.p_holm),
             number(r.min_effect, ".3f"), r.verdict, number(r.mde, ".3f"),
             count(r.needed_queries)] for r in c.paired]
    lines += markdown_table(["measure", "n", c.baseline, c.candidate, "Δ mean", "95% CI",
                             "W/T/L", "p", "p (Holm)", "min effect", "verdict", "MDE",
                             "queries for min effect"], rows)
    if c.paired:
        r = c.paired[0]
        lines += ["", f"Paired by query; bootstrap ({r.resamples} resamples, seed "
                  f"{r.seed}) and {TESTS[r.test].label} over "
                  f"{r.units} {plural(unit, r.units)}; Holm over the measures."]
    if c.horizons:
        lines += ["", "By horizon (the positives within each; the candidates the same):",
                  *(f"- {line}" for line in rec.horizon_lines(c.horizons))]
    agg = c.aggregates
    if agg:
        lines += ["", f"Aggregates (equal-slice: each `{c.strata}` slice weighted alike):", ""]
        rows = [[m, system, number(a.macro), number(a.micro), number(a.traffic_weighted),
                 number(a.equal_slice), a.n]
                for system, by_measure in agg.items() for m, a in by_measure.items()]
        lines += markdown_table(["measure", "system", "macro", "micro", "traffic-weighted",
                                 "equal-slice", "n"], rows)
    for m, d in c.composition.items():
        flag = "FLAGGED: the aggregate moved while no slice did (mix shift)" if d.mix_shift \
            else "no mix shift"
        lines.append(f"- {m}: traffic-weighted {number(d.before)} → {number(d.after)} "
                     f"(Δ {number(d.delta, '+.4f')} = rate {number(d.rate, '+.4f')} + mix "
                     f"{number(d.mix, '+.4f')}); {flag}")
    return lines


def _slices_section(slices: pd.DataFrame, c: Comparison, min_n: int) -> list[str]:
    """The tested slices of the first compared measure, then the ones too small to test; the
    full table (every measure and system) is slices.parquet (its rows read by column)."""
    measure, base, cand = c.measures[0], c.baseline, c.candidate
    rows = slices[(slices[S.MEASURE] == measure) & (slices[S.DIMENSION] != "all")]
    tested = int((~slices[TOO_SMALL]).sum())
    lines = ["", f"## Slices ({measure}; {cand} − {base})", "",
             f"Holm over all {tested} measure × slice tests; every system and measure is in "
             f"{artifacts.at('slices.table')}.", ""]
    body = [[r["dimension"], r["slice"], r["n"], number(r[f"mean_{base}"]),  # column
             number(r[f"mean_{cand}"]),
             f"{number(r['mean_diff'], '+.4f')} "  # column
             f"{interval(r['ci_low'], r['ci_high'], '+.3f')}",  # column
             number(r["p_holm"], ".3f"), r["verdict"], number(r.get("mde"), ".3f"),  # column
             count(r.get("needed_queries"))]  # column
            for _, r in rows[~rows[TOO_SMALL]].iterrows()]
    lines += markdown_table(["dimension", "slice", "n", base, cand, "Δ [95% CI]", "p (Holm)",
                             "verdict", "MDE", "queries for min effect"], body)
    small = rows[rows[TOO_SMALL]]
    if len(small):
        lines += ["", f"Too small to test (n < {min_n}): " + ", ".join(
            f"{r['dimension']}={r['slice']} ({r['n']})" for _, r in small.iterrows())  # column
            + "."]
    return lines


def _safety_section(safety: Safety) -> list[str]:
    """No-answer behaviour and safety violations: outside the relevance means."""
    lines = ["", "## No-answer queries (outside the relevance means)", ""]
    rows = [[system, a.no_answer_queries, a.correct_refusals,
             number(a.correct_refusal_rate, ".3f"), a.answerable_queries, a.no_result,
             number(a.no_result_rate, ".3f"), number(a.threshold, ".3f")]
            for system, a in safety.no_answer.items()]
    lines += markdown_table(["system", "no-answer queries", "correct refusals", "refusal rate",
                             "answerable", "no result", "no-result rate", "threshold"], rows)
    lines += ["", "A correct refusal: an empty window, or nothing scoring at least the "
              "system's threshold.", "",
              f"## Safety (every rank of every route's window; zero tolerance; top k = "
              f"{safety.top_k})", ""]
    reasons = list(dict.fromkeys(r for s in safety.systems.values() for r in s.by_reason))
    rows = [[system, "+".join(s.routes), s.violations, s.own,
             *(s.by_reason.get(r, 0) for r in reasons), s.below_top_k,
             s.queries_affected] for system, s in safety.systems.items()]
    return lines + markdown_table(["system", "routes", "violations", "own window", *reasons,
                                   "below top k", "queries"], rows) + ["", SAFETY_COUNTS]


def _failures_section(failures: Failures, sheet: pd.DataFrame) -> list[str]:
    """Missed relevant documents by the layer that lost them, baseline against candidate, and
    the first rows of the inspection worksheet."""
    base, cand = failures.baseline, failures.candidate
    lines = ["", f"## Failures by layer (relevant documents outside the top {failures.k})",
             "", f"Each missed (query, relevant document) pair of {base} and {cand} on "
             f"{failures.queries} queries, traced to the first layer that lost it (routes "
             f"re-searched exactly to depth {failures.deep_k}; "
             + ("the chunk layer from the generator's answer map" if failures.chunk_map
                else "chunk layer unknown: no answer map") + ").", ""]
    rows = [[r.layer, r.baseline, r.candidate, f"{r.difference:+d}"] for r in failures.by_layer]
    lines += markdown_table(["layer", base, cand, "change"], rows)
    safety = ", ".join(f"{s} {n}" for s, n in failures.safety.items())
    lines += ["", f"Safety failures (layer filter): {safety}."]
    review = failures.review
    if review:
        rate = review.disagreement_rate
        lines.append(f"Reviewed: {review.reviewed} of {review.rows_in} worksheet rows "
                     f"({review.quarantined} quarantined); the reviewers disagreed with the "
                     f"automatic layer on {number(rate, '.1%')} of them.")
    return lines + ["", f"Manual inspection worksheet ({artifacts.at('failures.worksheet')}; "
                    "fill in reviewer_layer and set failures.review to ingest it):", "",
                    worksheet.markdown(sheet, limit=WORKSHEET_ROWS)]


def reuse(decision: Decision) -> str | None:
    """"Reuse: this test set (…) has informed N decisions since D." from decision.json's
    ``looks``; None for a decision written before looks were counted."""
    looks = decision.looks
    return None if not looks else f"Reuse: {sentence(looks.model_dump())}."


def _gate_section(decision: Decision) -> list[str]:
    """The verdict, the evaluated set's reuse, then each rule with its value, threshold and
    reason."""
    label = "" if decision.controlled else " (UNCONTROLLED)"
    line = reuse(decision)
    lines = ["", f"## Release gate: {verdict(decision.passed)}{label}", "",
             f"{decision.candidate} against {decision.baseline}.", "",
             *([line, ""] if line else [])]
    checked, apart = split_applicable(decision.rules)
    rows = [[mark(o.passed), o.name, significant(o.value), significant(o.threshold),
             o.reason] for o in checked]
    return lines + markdown_table(["", "rule", "value", "threshold", "reason"], rows) + (
        ["", f"{NOT_APPLICABLE_HEADING}:", "",
         *(f"- {NOT_APPLICABLE} {o.name}: {o.reason}" for o in apart)] if apart else [])


def render_decision(comparison: Comparison, slices: pd.DataFrame, safety: Safety,
                    failures: Failures, sheet: pd.DataFrame, decision: Decision, min_n: int,
                    system_health: Health | None, query_set: list[str],
                    receipt: Receipt | None = None,
                    offpolicy_doc: OffPolicyDoc | None = None) -> str:
    """The decision document, from comparison.json, slices.parquet, safety.json,
    failures.json with its worksheet.csv, health.json (``system_health``) and the gate's
    decision.json; ``min_n`` is the slice size below which a slice is too small to test;
    ``query_set``: the query set's section lines (``releval.report.summary``); ``receipt``:
    the run's receipt (the model digests of the revisions table), None when none describes
    these outputs; ``offpolicy_doc``: offpolicy.json (``releval.report.offpolicy``: the
    estimates over every position, the on-policy value, the reference and the diagnostics;
    one line without a log)."""
    lines = [*_comparison_section(comparison), "", *family_lines(comparison.family),
             *change.markdown(comparison, system_health),
             *training.markdown(comparison), *_slices_section(slices, comparison, min_n),
             *_safety_section(safety), *_failures_section(failures, sheet),
             *health.markdown(system_health, decision, receipt), *query_set,
             *offpolicy.lines(offpolicy_doc, detail=False), *_gate_section(decision)]
    return "\n".join(lines) + "\n"
