"""Stage ``report``: reports/summary.md from the evaluation, split and candidate stats,
then the decision: the comparison, slices, no-answer and safety, and the release gate (also
alone in reports/decision.md, which ``releval demo`` prints).

The pages are rendered by ``releval.report.summary`` and ``releval.report.decision``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.params import Params
from releval.report.decision import render_decision
from releval.report.summary import render_summary
from stages.common import (
    guarded,
    params_of,
    parser,
    read_doc,
    read_table,
    system_stats,
)


@dataclass(frozen=True)
class Outputs:
    summary: str  # reports/summary.md
    decision: str  # reports/decision.md


def run(p: Params, summary: dict, split_report: dict, source: dict, stats: dict[str, dict],
        ingest: dict, agreement: dict, comparison: dict, slices: pd.DataFrame, safety: dict,
        failures: dict, sheet: pd.DataFrame, gate: dict) -> Outputs:
    """summary.md: the summary page, a blank line, then the decision; decision.md: the
    decision alone."""
    decision = render_decision(comparison, slices, safety, failures, sheet, gate,
                               p.slices.min_n)
    page = render_summary(summary, split_report, source, stats, ingest, agreement)
    return Outputs(summary=page + "\n" + decision, decision=decision)


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
    judgments, failures = Path(args.judgments), Path(args.failures)
    result = run(p, read_doc(args.summary), read_doc(args.split_report),
                 read_doc(Path(args.raw) / "source.json"),
                 system_stats(p, args.candidates, args.fused),
                 read_doc(judgments / "ingest.json"), read_doc(judgments / "agreement.json"),
                 read_doc(args.compare), read_table(args.slices), read_doc(args.safety),
                 read_doc(failures / "failures.json"),
                 pd.read_csv(failures / "worksheet.csv", keep_default_na=False),
                 read_doc(args.gate))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.summary)
    out.with_name("decision.md").write_text(result.decision)
    print(f"report: {args.out}")


if __name__ == "__main__":
    guarded(main)
