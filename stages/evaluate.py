"""Stage ``evaluate``: per-query metrics for every system on the evaluated split.

Relevance is judged against what the user may see: judgments of documents invisible to
the query (time, status, tenant, ACL) are left out and counted, so no system is credited
or blamed for a forbidden document. Outputs (data/evaluate/): per_query.parquet (system,
query_id, measure, value), metrics.json (``dvc metrics``: system -> measure -> mean),
summary.json (n, undefined, empty per measure, and where the qrels came from),
route_hits.parquet (for each fused pair of systems, which one found each relevant document),
labels.parquet (query_id, dimension, slice: the slices each evaluated query belongs to, for
``slices.dimensions`` and ``compare.strata``) and
unjudged.parquet (each system's unjudged top-k candidates: the next pooling round).
Queries tagged ``no_answer.tag`` have no answer to find: they are left out of every
relevance mean and counted (the safety stage reports how each system treats them).
Every system gets the same candidate budget (``candidates.depth``); an empty run (e.g. an
external run that has no rows for this data) is reported as skipped, not scored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.diagnostics import CLASS, hit_counts, route_hits
from releval.metrics import evaluate
from releval.params import Params
from releval.pooling import unjudged
from releval.slices import labels as query_labels
from releval.visibility import judgments_of
from stages.common import (
    evaluated_queries,
    guarded,
    params_of,
    parser,
    system_runs,
    write_json,
    write_parquet,
)


def run(p: Params, runs: dict[str, pd.DataFrame], judgments: pd.DataFrame,
        split: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame
        ) -> tuple[pd.DataFrame, dict, dict, pd.DataFrame, pd.DataFrame]:
    c = p.evaluate
    evaluated, no_answer = evaluated_queries(p, split, queries)
    qrels, visible = judgments_of(judgments, queries, documents, evaluated)
    relevant = qrels[S.GRADE] >= c.rel
    per_query, metrics, summary = [], {}, {}
    skipped = sorted(name for name, table in runs.items() if table.empty)
    for system, table in runs.items():
        if table.empty:
            continue
        result = evaluate(table, qrels[visible], c.measures, rel=c.rel,
                          max_grade=p.prepare.max_grade, queries=evaluated)
        per_query.append(result.per_query.assign(**{S.SYSTEM: system}))
        rows = result.summary.set_index(S.MEASURE)
        metrics[system] = {m: None if pd.isna(v) else round(float(v), 6)
                           for m, v in rows[S.VALUE].items()}
        summary[system] = {m: {"value": metrics[system][m], "n": int(r["n"]),
                               "undefined": int(r["undefined"]), "empty": int(r["empty"])}
                           for m, r in rows.iterrows()}
    table = pd.concat(per_query, ignore_index=True)[
        [S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE]] if per_query else pd.DataFrame(
        columns=[S.SYSTEM, S.QUERY_ID, S.MEASURE, S.VALUE])
    hits = [route_hits(f.lexical, runs[f.lexical], f.dense, runs[f.dense], qrels[visible],
                       c.rel).assign(pair=f"{f.lexical}|{f.dense}")
            for f in p.fusion.systems.values() if f.lexical in runs and f.dense in runs]
    hits = pd.concat(hits, ignore_index=True) if hits else pd.DataFrame(columns=[CLASS, "pair"])
    dimensions = list(dict.fromkeys([*p.slices.dimensions, p.compare.strata]))
    labels = query_labels(queries, qrels[visible], documents, hits, evaluated,
                          p.slices.model_copy(update={"dimensions": dimensions}), rel=c.rel)
    report = {"splits": c.splits, "queries": int(len(evaluated)), "systems": summary,
              "no_answer_left_out": int(len(no_answer)),
              "skipped": skipped, "depth": p.candidates.depth,
              "route_hits": {pair: hit_counts(group) for pair, group in hits.groupby("pair")},
              "judgments": {"evaluated": int(len(qrels)),
                            "invisible_left_out": int((~visible).sum()),
                            "relevant_invisible_left_out": int((~visible & relevant).sum())}}
    return table, metrics, report, hits, labels


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--qrels", default="data/judgments/qrels.parquet")
    ap.add_argument("--judgments", default="data/judgments/ingest.json")
    ap.add_argument("--split", default="data/split/split.parquet")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--fused", default="data/fused")
    ap.add_argument("--out", default="data/evaluate")
    args = ap.parse_args()
    p = params_of(args)
    raw, out = Path(args.raw), Path(args.out)
    runs = system_runs(p, args.candidates, args.fused)
    split, qrels = pd.read_parquet(args.split), pd.read_parquet(args.qrels)
    table, metrics, report, hits, labels = run(p, runs, qrels, split,
                                       pd.read_parquet(raw / "queries.parquet"),
                                       pd.read_parquet(raw / "documents.parquet"))
    report["qrels"] = json.loads(Path(args.judgments).read_text())["qrels"]
    pooled = split.loc[split[S.SPLIT].isin(p.pool.splits), S.QUERY_ID]
    holes = unjudged({name: r[r[S.QUERY_ID].isin(pooled)] for name, r in runs.items()}, qrels,
                     p.evaluate.judged_k)
    report["unjudged"] = int(len(holes))
    write_parquet(out / "per_query.parquet", table)
    write_json(out / "metrics.json", metrics)
    write_json(out / "summary.json", report)
    write_parquet(out / "route_hits.parquet", hits)
    write_parquet(out / "labels.parquet", labels)
    write_parquet(out / "unjudged.parquet", holes)
    print(f"evaluate: {len(runs)} system(s) on {report['queries']} queries "
          f"({', '.join(report['splits'])})")


if __name__ == "__main__":
    guarded(main)
