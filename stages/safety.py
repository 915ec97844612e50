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

import pandas as pd

from releval.artifacts import reads
from releval.data import contracts as S
from releval.decision.no_answer import refusals
from releval.decision.safety import in_splits, summary, violations
from releval.params import Params


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``safety.<field>`` (``releval.artifacts``)."""

    violations: pd.DataFrame
    report: dict


@dataclass(frozen=True)
class Inputs:
    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="system")
    queries: pd.DataFrame = reads("raw.queries")
    documents: pd.DataFrame = reads("raw.documents")
    must_not_return: pd.DataFrame = reads("raw.must_not_return")
    split: pd.DataFrame = reads("split.split")


def run(p: Params, inputs: Inputs) -> Outputs:
    runs, queries, documents = inputs.runs, inputs.queries, inputs.documents
    must_not_return, split = inputs.must_not_return, inputs.split
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


def line(p: Params, result: Outputs) -> str:
    systems = result.report["systems"]
    worst = {name: s["violations"] for name, s in systems.items() if s["violations"]}
    return (f"safety: {len(result.violations):,} violation(s) in {len(systems)} system "
            "window(s)" + (f" ({', '.join(f'{n}: {v}' for n, v in worst.items())})"
                           if worst else ""))
