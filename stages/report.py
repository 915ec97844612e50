"""Stage ``report``: reports/summary.md from the evaluation, split and candidate stats,
then the decision: the comparison, slices, no-answer and safety, and the release gate (also
alone in reports/decision.md, which ``releval demo`` prints)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from releval import worksheet
from stages.common import (
    guarded,
    params_of,
    parser,
    read_doc,
    read_table,
    system_stats,
)

SHOWN = ("nDCG@10", "R@100", "RR@10", "Judged@10")


def _cell(entry: dict | None) -> str:
    return "—" if entry is None or entry["value"] is None else f"{entry['value']:.4f}"


def _notes(stats: dict) -> str:
    """Route-specific facts worth a glance: ANN recall, fusion, cache use, flagged docs."""
    notes = [f"{k} {v:.3f}" for k, v in stats.items() if k.startswith("ann_recall")]
    if "fusion" in stats:
        notes.append(f"{json.dumps(stats['fusion'])} ({stats['tuning']})")
    emb = stats.get("embeddings")
    if emb:
        notes.append(f"encoded {emb['documents_encoded']} docs, {emb['documents_cached']} "
                     "from cache")
    vis = stats.get("visibility")
    if vis:
        notes.append(f"flagged: {vis['forbidden']} forbidden/future documents returned")
    return "; ".join(notes)


def _split_section(r: dict) -> list[str]:
    """Cut points, counts per split and tag, and the leakage findings."""
    cuts = " → ".join(r["cuts"]) if r.get("cuts") else "none"
    lines = ["## Split", "", f"Method: {r['method']} · cuts: {cuts}"]
    if r.get("rule"):
        lines.append(f"Rule: {r['rule']}")
    if r.get("note"):
        lines.append(f"Note: {r['note']}")
    splits = list(r["counts"])
    tags = sorted({t for by_tag in r.get("counts_by_tag", {}).values() for t in by_tag})
    lines += ["", "| | " + " | ".join(splits) + " |", "|---" * (len(splits) + 1) + "|",
              "| queries | " + " | ".join(str(r["counts"][s]) for s in splits) + " |"]
    for tag in tags:
        lines.append(f"| {tag} | " + " | ".join(
            str(r["counts_by_tag"].get(s, {}).get(tag, 0)) for s in splits) + " |")
    shared, dupes = r["leakage"]["shared_sources"], r["leakage"]["duplicate_texts"]
    lines += ["", "Leakage:",
              f"- {shared['count']} source(s) relevant in both train and test, affecting "
              f"{shared['test_queries_affected']} test queries"
              + (": " + ", ".join(x["source_id"] for x in shared["sources"][:5])
                 + (" …" if shared["count"] > 5 else "") if shared["count"] else ""),
              f"- {dupes['count']} test queries repeat a train query's normalised text"
              + (": " + ", ".join(x["query_id"] for x in dupes["examples"][:5])
                 if dupes["count"] else "")]
    return lines


def _judgments_section(judging: dict) -> list[str]:
    """Where the qrels came from, how many rows were quarantined, and judge agreement."""
    counts, agree = judging["ingest"], judging["agreement"]
    lines = ["## Judgments", "", f"Qrels: {counts['qrels']}.",
             f"Rows in {counts['rows_in']} = accepted {counts['accepted_new']} + already "
             f"accepted {counts['already_accepted']} + quarantined {counts['quarantined']}"
             + (" (" + ", ".join(f"{reason}: {n}" for reason, n in counts["by_reason"].items()
                                 if n) + ")" if counts["quarantined"] else "")
             + "."]
    overall = {k: v for k, v in agree.items() if not isinstance(v, dict | list)}
    if overall:
        lines.append("Agreement: " + ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in overall.items()))
    for pair in agree.get("low_agreement", []):
        lines.append(f"Low agreement: {json.dumps(pair)}")
    if judging.get("unjudged"):
        lines.append(f"Unjudged top-k candidates kept for the next pooling round: "
                     f"{judging['unjudged']}.")
    return lines


def _f(value, spec: str = ".4f") -> str:
    """A number for a table; — where undefined (None / NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return format(value, spec)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|",
            *("| " + " | ".join(map(str, r)) + " |" for r in rows)]


def _comparison_section(c: dict) -> list[str]:
    """The paired comparison, the conditions held fixed, aggregates and the mix check."""
    label = "controlled" if c["controlled"] else "UNCONTROLLED"
    lines = [f"## Comparison: {c['candidate']} vs {c['baseline']} ({label})", ""]
    if not c["controlled"]:
        lines += ["**UNCONTROLLED** — conditions differ; read every number below as "
                  "indicative only:", *(f"- {d}" for d in c["differences"]), ""]
    held = "; ".join(f"{k}: {v}" for k, v in c["conditions"][c["baseline"]].items())
    lines += [("Held fixed: " if c["controlled"] else "Baseline's conditions: ") + held, ""]
    unit = c.get("unit") or "query"
    rows = [[r["measure"], r["n"], _f(r["mean_baseline"]), _f(r["mean_candidate"]),
             _f(r["mean_diff"], "+.4f"), f"[{_f(r['ci_low'], '+.4f')}, {_f(r['ci_high'], '+.4f')}]",
             f"{r['wins']}/{r['ties']}/{r['losses']}", _f(r["p_value"]), _f(r["p_holm"]),
             _f(r["min_effect"], ".3f"), r["verdict"]] for r in c["paired"]]
    lines += _table(["measure", "n", c["baseline"], c["candidate"], "Δ mean", "95% CI",
                     "W/T/L", "p", "p (Holm)", "min effect", "verdict"], rows)
    if c["paired"]:
        r = c["paired"][0]
        lines += ["", f"Paired by query; bootstrap ({r['resamples']} resamples, seed "
                  f"{r['seed']}) and sign-flip test over {r['units']} {unit}s; Holm over the "
                  "measures."]
    agg = c.get("aggregates", {})
    if agg:
        lines += ["", f"Aggregates (equal-slice: each `{c['strata']}` slice weighted alike):", ""]
        rows = [[m, system, _f(a["macro"]), _f(a["micro"]), _f(a["traffic_weighted"]),
                 _f(a["equal_slice"]), a["n"]]
                for system, by_measure in agg.items() for m, a in by_measure.items()]
        lines += _table(["measure", "system", "macro", "micro", "traffic-weighted",
                         "equal-slice", "n"], rows)
    for m, d in c.get("composition", {}).items():
        flag = "FLAGGED: the aggregate moved while no slice did (mix shift)" if d["mix_shift"] \
            else "no mix shift"
        lines.append(f"- {m}: traffic-weighted {_f(d['before'])} → {_f(d['after'])} "
                     f"(Δ {_f(d['delta'], '+.4f')} = rate {_f(d['rate'], '+.4f')} + mix "
                     f"{_f(d['mix'], '+.4f')}); {flag}")
    return lines


def _slices_section(slices: pd.DataFrame, c: dict, min_n: int) -> list[str]:
    """The tested slices of the first compared measure, then the ones too small to test; the
    full table (every measure and system) is slices.parquet."""
    measure, base, cand = c["measures"][0], c["baseline"], c["candidate"]
    rows = slices[(slices["measure"] == measure) & (slices["dimension"] != "all")]
    tested = int((~slices["too_small"]).sum())
    lines = ["", f"## Slices ({measure}; {cand} − {base})", "",
             f"Holm over all {tested} measure × slice tests; every system and measure is in "
             "data/slices/slices.parquet.", ""]
    body = [[r["dimension"], r["slice"], r["n"], _f(r[f"mean_{base}"]), _f(r[f"mean_{cand}"]),
             f"{_f(r['mean_diff'], '+.4f')} [{_f(r['ci_low'], '+.3f')}, "
             f"{_f(r['ci_high'], '+.3f')}]", _f(r["p_holm"], ".3f"), r["verdict"]]
            for _, r in rows[~rows["too_small"]].iterrows()]
    lines += _table(["dimension", "slice", "n", base, cand, "Δ [95% CI]", "p (Holm)",
                     "verdict"], body)
    small = rows[rows["too_small"]]
    if len(small):
        lines += ["", f"Too small to test (n < {min_n}): " + ", ".join(
            f"{r['dimension']}={r['slice']} ({r['n']})" for _, r in small.iterrows()) + "."]
    return lines


def _safety_section(safety: dict) -> list[str]:
    """No-answer behaviour and safety violations: outside the relevance means."""
    lines = ["", "## No-answer queries (outside the relevance means)", ""]
    rows = [[system, a["no_answer_queries"], a["correct_refusals"],
             _f(a["correct_refusal_rate"], ".3f"), a["answerable_queries"], a["no_result"],
             _f(a["no_result_rate"], ".3f"), _f(a["threshold"], ".3f")]
            for system, a in safety["no_answer"].items()]
    lines += _table(["system", "no-answer queries", "correct refusals", "refusal rate",
                     "answerable", "no result", "no-result rate", "threshold"], rows)
    lines += ["", "A correct refusal: an empty window, or nothing scoring at least the "
              "system's threshold.", "",
              f"## Safety (every rank of every route's window; zero tolerance; top k = "
              f"{safety['top_k']})", ""]
    reasons = list(dict.fromkeys(r for s in safety["systems"].values() for r in s["by_reason"]))
    rows = [[system, "+".join(s["routes"]), s["violations"], s["own"],
             *(s["by_reason"].get(r, 0) for r in reasons), s["below_top_k"],
             s["queries_affected"]] for system, s in safety["systems"].items()]
    return lines + _table(["system", "routes", "violations", "own window", *reasons,
                           "below top k", "queries"], rows)


def _failures_section(failures: dict, sheet: str) -> list[str]:
    """Missed relevant documents by the layer that lost them, baseline against candidate."""
    base, cand = failures["baseline"], failures["candidate"]
    lines = ["", f"## Failures by layer (relevant documents outside the top {failures['k']})",
             "", f"Each missed (query, relevant document) pair of {base} and {cand} on "
             f"{failures['queries']} queries, traced to the first layer that lost it (routes "
             f"re-searched exactly to depth {failures['deep_k']}; "
             + ("the chunk layer from the generator's answer map" if failures["chunk_map"]
                else "chunk layer unknown: no answer map") + ").", ""]
    rows = [[r["layer"], r["baseline"], r["candidate"], f"{r['difference']:+d}"]
            for r in failures["by_layer"]]
    lines += _table(["layer", base, cand, "change"], rows)
    safety = ", ".join(f"{s} {n}" for s, n in failures["safety"].items())
    lines += ["", f"Safety failures (layer filter): {safety}."]
    review = failures.get("review")
    if review:
        rate = review["disagreement_rate"]
        lines.append(f"Reviewed: {review['reviewed']} of {review['rows_in']} worksheet rows "
                     f"({review['quarantined']} quarantined); the reviewers disagreed with the "
                     f"automatic layer on {_f(rate, '.1%')} of them.")
    return lines + ["", "Manual inspection worksheet (data/failures/worksheet.csv; fill in "
                    "reviewer_layer and set failures.review to ingest it):", "", sheet]


def _cell_value(value) -> str:
    return _f(value, ".4g") if isinstance(value, float) or value is None else str(value)


def _gate_section(decision: dict) -> list[str]:
    verdict = "PASS" if decision["passed"] else "FAIL"
    label = "" if decision.get("controlled", True) else " (UNCONTROLLED)"
    lines = ["", f"## Release gate: {verdict}{label}", "",
             f"{decision['candidate']} against {decision['baseline']}.", ""]
    rows = [["✓" if o["passed"] else "✗", o["name"], _cell_value(o["value"]),
             _cell_value(o["threshold"]), o["reason"]] for o in decision["rules"]]
    return lines + _table(["", "rule", "value", "threshold", "reason"], rows)


def render_decision(comparison: dict, slices: pd.DataFrame, safety: dict, failures: dict,
                    sheet: str, decision: dict, min_n: int) -> str:
    """The decision sections: comparison, slices, no-answer and safety, failures, gate."""
    lines = [*_comparison_section(comparison), *_slices_section(slices, comparison, min_n),
             *_safety_section(safety), *_failures_section(failures, sheet),
             *_gate_section(decision)]
    return "\n".join(lines) + "\n"


def render(summary: dict, split_report: dict, source: dict, stats: dict[str, dict],
           judging: dict) -> str:
    """The summary page: one row per system, then the data's provenance and caveats."""
    systems = summary["systems"]
    shown = [m for m in SHOWN if any(m in s for s in systems.values())]
    lines = ["# releval summary", "",
             f"Data: {source['source']} · qrels: {summary['qrels']} · evaluated split(s): "
             f"{', '.join(summary['splits'])} ({summary['queries']} queries)", "",
             "| system | " + " | ".join(shown) + " | n | undefined |",
             "|---" * (len(shown) + 3) + "|"]
    for name, measures in systems.items():
        first = measures[shown[0]] if shown else {"n": 0, "undefined": 0}
        lines.append(f"| {name} | " + " | ".join(_cell(measures.get(m)) for m in shown)
                     + f" | {first['n']} | {first['undefined']} |")
    if summary.get("skipped"):
        lines += ["", f"Skipped (empty run): {', '.join(summary['skipped'])}"]
    lines += ["", f"Candidate budget: every system gets at most {summary['depth']} candidates "
              "per query."]
    j = summary["judgments"]
    lines += ["", "n = queries averaged; undefined = queries with no relevant judgment visible "
              "to the user (excluded, never scored).",
              f"Judgments of documents the user may not see were left out: "
              f"{j['invisible_left_out']} ({j['relevant_invisible_left_out']} relevant).", "",
              "## Candidates", "", "| system | route | depth | candidates/query | "
              "empty windows | p50 ms | p95 ms | p99 ms | notes |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, s in stats.items():
        lines.append(f"| {name} | {s['route']} | {s['depth']} | "
                     f"{s['candidates_per_query']['mean']:.1f} | "
                     f"{s['candidates_per_query']['empty']} | "
                     + " | ".join("—" if s["latency_ms"][p] is None else f"{s['latency_ms'][p]:.2f}"
                                  for p in ("p50", "p95", "p99")) + f" | {_notes(s)} |")
    lines += ["", *_judgments_section(judging)]
    for pair, counts in summary.get("route_hits", {}).items():
        a, b = pair.split("|")
        lines += ["", f"## Which route found each relevant document ({a} vs {b})", "",
                  "| " + " | ".join(counts) + " |", "|---" * len(counts) + "|",
                  "| " + " | ".join(str(v) for v in counts.values()) + " |"]
    lines += ["", *_split_section(split_report)]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--split-report", default="data/split/split_report.json")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--fused", default="data/fused")
    ap.add_argument("--summary", default="data/evaluate/summary.json")
    ap.add_argument("--judgments", default="data/judgments")
    ap.add_argument("--compare", default="data/compare/comparison.json")
    ap.add_argument("--slices", default="data/slices/slices.parquet")
    ap.add_argument("--safety", default="data/safety/safety.json")
    ap.add_argument("--gate", default="data/gate/decision.json")
    ap.add_argument("--failures", default="data/failures")
    ap.add_argument("--out", default="reports/summary.md")
    args = ap.parse_args()
    p = params_of(args)
    stats = system_stats(p, args.candidates, args.fused)
    summary = read_doc(args.summary)
    judging = {"ingest": read_doc(Path(args.judgments) / "ingest.json"),
               "agreement": read_doc(Path(args.judgments) / "agreement.json"),
               "unjudged": summary.get("unjudged")}
    page = render(summary, read_doc(args.split_report),
                  read_doc(Path(args.raw) / "source.json"), stats, judging)
    decision = render_decision(
        read_doc(args.compare), read_table(args.slices),
        read_doc(args.safety),
        read_doc(Path(args.failures) / "failures.json"),
        worksheet.markdown(pd.read_csv(Path(args.failures) / "worksheet.csv",
                                       keep_default_na=False), limit=8),
        read_doc(args.gate), p.slices.min_n)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page + "\n" + decision)
    out.with_name("decision.md").write_text(decision)
    print(f"report: {args.out}")


if __name__ == "__main__":
    guarded(main)
