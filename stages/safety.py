"""Stage ``safety``: safety violations in every system's whole window, and no-answer refusals.

Safety is zero tolerance and is counted over every query that has candidates, in every split
(a leak is a leak, whichever split it is in): each returned pair the query may not see, or
that must_not_return lists, at any rank (``releval.decision.safety``). A fused system
answers for its own window and for the windows of the systems it fuses
(``Params.windows``: ``fusion.systems.<name>.lexical`` and ``.dense``); violations ranked
below ``safety.top_k`` are also counted apart (``below_top_k``). No-answer refusals
(``releval.decision.no_answer``) are reported over the queries of ``evaluate.splits``, with
``no_answer.tag`` and ``no_answer.thresholds``; systems with an empty run (no data) are
listed under ``skipped`` and get no refusal figures.

Outputs (data/safety/): violations.parquet (system, route, query_id, doc_id, rank, reason,
in_top_k, split; split ``unassigned`` for a query the split table lacks) and safety.json
({"top_k", "systems": {name: {"routes", "violations", "by_reason", "queries_affected",
"below_top_k", "own"}}, "no_answer": {name: refusals}, "skipped": [...], and
``not_applicable``: why safety cannot be told, where there are no documents and no
must_not_return pairs: a project of team runs without a corpus).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.data import contracts as S
from releval.decision.no_answer import refusals
from releval.decision.safety import in_splits, summary, violations
from releval.params import Params
from stages.common import (
    guarded,
    params_of,
    parser,
    read_table,
    system_runs,
    write_outputs,
)


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``safety.<field>`` (``releval.artifacts``)."""

    violations: pd.DataFrame
    report: dict


def run(p: Params, runs: dict[str, pd.DataFrame], queries: pd.DataFrame,
        documents: pd.DataFrame, must_not_return: pd.DataFrame, split: pd.DataFrame) -> Outputs:
    found = in_splits(violations(runs, queries, documents, must_not_return,
                                 top_k=p.safety.top_k), split)
    windows = {name: p.windows(name) for name in runs}
    counts = summary(found, windows)
    skipped = sorted(name for name, table in runs.items() if table.empty)
    evaluated = split.loc[split[S.SPLIT].isin(p.evaluate.splits), S.QUERY_ID]
    refused = refusals({n: t for n, t in runs.items() if n not in skipped}, queries, evaluated,
                       tag=p.no_answer.tag, thresholds=p.no_answer.thresholds)
    report = {"top_k": p.safety.top_k,
              "systems": {name: {"routes": windows[name], **counts[name]} for name in runs},
              "no_answer": refused, "skipped": skipped}
    if documents.empty and must_not_return.empty:
        report["not_applicable"] = NO_DOCUMENTS
    return Outputs(found, report)


NO_DOCUMENTS = ("no documents and no must_not_return pairs (prepare.source runs: the team's "
                "runs alone): no tenant, ACL, status, deletion or publication to check a "
                "returned document against, so no violation can be told; the counts are not "
                "a clean record")


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default=artifacts.folder("raw"))
    ap.add_argument("--split", default=artifacts.at("split.split"))
    ap.add_argument("--candidates", default=artifacts.group_folder("candidates"))
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--out", default=artifacts.folder("safety"))
    args = ap.parse_args()
    p = params_of(args)
    raw, out = Path(args.raw), Path(args.out)
    runs = system_runs(p, args.candidates, args.fused)
    result = run(p, runs, *(read_table(artifacts.within(raw, f"raw.{name}"))
                            for name in ("queries", "documents", "must_not_return")),
                 read_table(args.split))
    write_outputs(result, "safety", out)
    systems = result.report["systems"]
    worst = {name: s["violations"] for name, s in systems.items() if s["violations"]}
    print(f"safety: {len(result.violations):,} violation(s) in {len(runs)} system window(s)"
          + (f" ({', '.join(f'{n}: {v}' for n, v in worst.items())})" if worst else ""))


if __name__ == "__main__":
    guarded(main)
