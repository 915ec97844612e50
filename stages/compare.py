"""Stage ``compare``: the candidate against the baseline, under controlled conditions.

Before comparing, each side's conditions (``releval.decision.conditions``) are taken from
the evaluation: the evaluated queries (count and digest), the qrels revision (digest of the
judgments the queries may see), the candidate budget (depth), the time window (first and
last query time) with the corpus snapshot (digest), and whether the visibility rule was
enforced by the route. Any difference refuses the comparison with the differences listed,
unless ``compare.allow_uncontrolled``: then every output says ``controlled: false``.

Outputs (data/compare/): comparison.json (conditions; paired rows per measure: mean, median,
W/T/L, bootstrap CI, sign-flip p, Holm over the measures, verdict against min_effect;
macro / micro / traffic-weighted / equal-slice aggregates over ``compare.strata``; the
rate/mix composition check; the run's ``figures`` for a later run's over-time comparison:
``releval.decision.over_time``) and per_query_diff.parquet (query_id, measure, baseline,
candidate, diff, stratum, weight).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval import executor
from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.decision.breakdown import breakdown, strata
from releval.decision.compare import canonical, compare
from releval.decision.conditions import controlled, held_fixed
from releval.decision.over_time import figures
from releval.decision.stats import clusters_of
from releval.params import Params
from stages.common import (
    guarded,
    params_of,
    parser,
    read_table,
    system_stats,
    write_json,
    write_parquet,
)


@dataclass(frozen=True)
class Outputs:
    comparison: dict  # comparison.json
    diff: pd.DataFrame  # per_query_diff.parquet


def run(p: Params, per_query: pd.DataFrame, labels: pd.DataFrame, queries: pd.DataFrame,
        documents: pd.DataFrame, judgments: pd.DataFrame, stats: dict[str, dict]) -> Outputs:
    c = p.compare
    measures, effect = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)
    evaluated = per_query[S.QUERY_ID].unique()
    qrels, visible = judgments_of(judgments, queries, documents, evaluated)
    qrels = qrels[visible]
    conds = held_fixed((c.baseline, c.candidate), per_query, queries, documents, qrels, stats)
    diffs = controlled(conds, c.baseline, c.candidate, c.allow_uncontrolled)
    side = {s: per_query.loc[per_query[S.SYSTEM] == s, [S.QUERY_ID, S.MEASURE, S.VALUE]]
            for s in (c.baseline, c.candidate)}
    result = compare(side[c.baseline], side[c.candidate], measures,
                     clusters=clusters_of(queries, c.cluster), allow_uncontrolled=True,
                     min_effect=effect, resamples=c.resamples, alpha=c.alpha, seed=p.base.seed)
    parts = breakdown(per_query, strata(evaluated, labels, queries, c.strata), qrels, measures,
                      c.baseline, c.candidate)
    doc = {"baseline": c.baseline, "candidate": c.candidate, "controlled": not diffs,
           "differences": diffs, "conditions": conds, "measures": measures,
           "note": "" if not diffs else "UNCONTROLLED: conditions differ (allow_uncontrolled)",
           "unit": result.get("unit"), "strata": c.strata,
           "paired": [r for r in result.get("paired", []) if r["slice"] == S.ALL],
           "unpaired": result.get("uncontrolled", []),
           "aggregates": parts.aggregates, "composition": parts.composition,
           "figures": figures(parts.diff, c.baseline, c.candidate, c.strata,
                              resamples=c.resamples, alpha=c.alpha, seed=p.base.seed)}
    return Outputs(doc, parts.diff)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--qrels", default="data/judgments/qrels.parquet")
    ap.add_argument("--evaluate", default="data/evaluate")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--fused", default="data/fused")
    ap.add_argument("--out", default="data/compare")
    args = ap.parse_args()
    p = params_of(args)
    raw, evaluated, out = Path(args.raw), Path(args.evaluate), Path(args.out)
    stats = system_stats(p, args.candidates, args.fused)
    with executor.of(p):  # bootstrap draw blocks on the cluster (base.executor)
        result = run(p, read_table(evaluated / "per_query.parquet"),
                     read_table(evaluated / "labels.parquet"),
                     read_table(raw / "queries.parquet"), read_table(raw / "documents.parquet"),
                     read_table(args.qrels), stats)
    write_json(out / "comparison.json", result.comparison)
    write_parquet(out / "per_query_diff.parquet", result.diff)
    doc = result.comparison
    verdicts = ", ".join(f"{r['measure']} {r['mean_diff']:+.4f} ({r['verdict']})"
                         for r in doc["paired"])
    print(f"compare: {doc['candidate']} vs {doc['baseline']}"
          f"{'' if doc['controlled'] else ' [UNCONTROLLED]'}: {verdicts}")


if __name__ == "__main__":
    guarded(main)
