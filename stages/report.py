"""Stage ``report``: reports/summary.md from the evaluation, split and candidate stats."""

from __future__ import annotations

import json
from pathlib import Path

from stages.common import guarded, params_of, parser, system_dirs

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
    ap.add_argument("--out", default="reports/summary.md")
    args = ap.parse_args()
    p = params_of(args)
    stats = {name: json.loads((folder / "run_stats.json").read_text())
             for name, folder in system_dirs(p, args.candidates, args.fused).items()}
    summary = json.loads(Path(args.summary).read_text())
    judging = {"ingest": json.loads((Path(args.judgments) / "ingest.json").read_text()),
               "agreement": json.loads((Path(args.judgments) / "agreement.json").read_text()),
               "unjudged": summary.get("unjudged")}
    page = render(summary, json.loads(Path(args.split_report).read_text()),
                  json.loads((Path(args.raw) / "source.json").read_text()), stats, judging)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(page)
    print(f"report: {args.out}")


if __name__ == "__main__":
    guarded(main)
