"""Stage ``safety``: safety violations in every system's whole window, and no-answer refusals.

Safety is zero tolerance and is counted over every query that has candidates, in every split
(a leak is a leak, whichever split it is in): each returned pair the query may not see, or
that must_not_return lists, at any rank (``releval.safety``). A fused system answers for its
own window and for the windows of the systems it fuses (``fusion.systems.<name>.lexical`` and
``.dense``). No-answer refusals (``releval.no_answer``) are reported over the queries of
``evaluate.splits``, with ``no_answer.tag`` and ``no_answer.thresholds``; systems with an empty
run (no data) are listed under ``skipped`` and get no refusal figures.

Outputs (data/safety/): violations.parquet (system, route, query_id, doc_id, rank, reason,
in_top_k, split; split ``unassigned`` for a query the split table lacks) and safety.json
({"top_k", "systems": {name: {"routes", "violations", "by_reason", "queries_affected",
"below_top_k", "own"}}, "no_answer": {name: refusals}, "skipped": [...]}).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.errors import InputError
from releval.no_answer import refusals
from releval.params import Params
from releval.safety import summary, violations
from stages.common import (
    guarded,
    params_of,
    parser,
    read_table,
    system_runs,
    write_json,
    write_parquet,
)

TOP_K = 10  # violations ranked below this are also counted apart (below_top_k)
UNASSIGNED = "unassigned"


def systems_routes(p: Params, names) -> dict[str, list[str]]:
    """Each system's windows it answers for: itself, plus the two systems a fused one fuses."""
    fused = p.fusion.systems
    return {name: [name, fused[name].lexical, fused[name].dense] if name in fused else [name]
            for name in names}


def run(p: Params, runs: dict[str, pd.DataFrame], queries: pd.DataFrame,
        documents: pd.DataFrame, must_not_return: pd.DataFrame, split: pd.DataFrame,
        top_k: int = TOP_K) -> tuple[pd.DataFrame, dict]:
    unknown = sorted(set(p.no_answer.thresholds) - set(p.systems()))
    if unknown:
        raise InputError(f"no_answer.thresholds names unknown system(s) {', '.join(unknown)} "
                         f"(systems: {', '.join(p.systems())})", "params")
    found = violations(runs, queries, documents, must_not_return, top_k=top_k)
    where = pd.Series(split[S.SPLIT].astype("str").to_numpy(),
                      index=split[S.QUERY_ID].astype("str").to_numpy())
    found[S.SPLIT] = found[S.QUERY_ID].map(where).fillna(UNASSIGNED).astype("str")
    routes = systems_routes(p, runs)
    counts = summary(found, routes)
    skipped = sorted(name for name, table in runs.items() if table.empty)
    evaluated = split.loc[split[S.SPLIT].isin(p.evaluate.splits), S.QUERY_ID]
    refused = refusals({n: t for n, t in runs.items() if n not in skipped}, queries, evaluated,
                       tag=p.no_answer.tag, thresholds=p.no_answer.thresholds)
    report = {"top_k": top_k,
              "systems": {name: {"routes": routes[name], **counts[name]} for name in runs},
              "no_answer": refused, "skipped": skipped}
    return found, report


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--split", default="data/split/split.parquet")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--fused", default="data/fused")
    ap.add_argument("--out", default="data/safety")
    args = ap.parse_args()
    p = params_of(args)
    raw, out = Path(args.raw), Path(args.out)
    runs = system_runs(p, args.candidates, args.fused)
    found, report = run(p, runs, read_table(raw / "queries.parquet"),
                        read_table(raw / "documents.parquet"),
                        read_table(raw / "must_not_return.parquet"), read_table(args.split))
    write_parquet(out / "violations.parquet", found)
    write_json(out / "safety.json", report)
    worst = {name: s["violations"] for name, s in report["systems"].items() if s["violations"]}
    print(f"safety: {len(found):,} violation(s) in {len(runs)} system window(s)"
          + (f" ({', '.join(f'{n}: {v}' for n, v in worst.items())})" if worst else ""))


if __name__ == "__main__":
    guarded(main)
