"""Stage ``pool``: the top candidates of the pooled systems, blinded for judges.

Pools the top ``pool.depth`` of each system in ``pool.systems`` for the ``pool.splits``
queries. The pool persists between runs (a pool with another seed, depth or corpus starts
afresh): when a system joins, only its pairs not yet in the pool are added (a new round),
so nothing is judged twice. Outputs (data/pool/):
pool.parquet, identity.json, and for judges the pairs of the latest round (what is left to
judge) as judging.csv, label_studio_tasks.json and label_config.xml (shuffled per query;
never systems, ranks or scores).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.guidelines import load_guideline
from releval.params import Params
from releval.pooling import (
    blind_export,
    build_pool,
    corpus_digest,
    label_config,
    pool_id_of,
    write_csv,
    write_label_studio,
)
from stages.common import guarded, params_of, parser, write_json, write_parquet


def run(p: Params, runs: dict[str, pd.DataFrame], documents: pd.DataFrame,
        queries: pd.DataFrame, split: pd.DataFrame, previous: pd.DataFrame | None):
    """The pool (incremental over ``previous`` when it is the same pool) and its export."""
    pooled = split.loc[split[S.SPLIT].isin(p.pool.splits), S.QUERY_ID]
    runs = {name: run[run[S.QUERY_ID].isin(pooled)] for name, run in runs.items()}
    digest = corpus_digest(documents)
    same = previous is not None and not previous.empty and (
        previous["pool_id"].iloc[0] == pool_id_of(p.base.seed, p.pool.depth, digest))
    pool = build_pool(runs, p.pool.depth, p.base.seed, digest, previous if same else None)
    latest = int(pool.table["round"].max()) if len(pool.table) else None
    return pool, blind_export(pool.table, documents, queries, p.base.seed, round=latest)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--split", default="data/split/split.parquet")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--out", default="data/pool")
    args = ap.parse_args()
    p = params_of(args)
    raw, out = Path(args.raw), Path(args.out)
    runs = {s: pd.read_parquet(Path(args.candidates) / s / "run.parquet") for s in p.pool.systems}
    existing = out / "pool.parquet"
    previous = pd.read_parquet(existing) if existing.exists() else None
    pool, export = run(p, runs, pd.read_parquet(raw / "documents.parquet"),
                       pd.read_parquet(raw / "queries.parquet"), pd.read_parquet(args.split),
                       previous)
    guideline = load_guideline(p.pool.guideline)
    write_parquet(out / "pool.parquet", pool.table)
    write_json(out / "identity.json", pool.identity | {"guideline": guideline.version})
    write_csv(export, out / "judging.csv")
    write_label_studio(export, out / "label_studio_tasks.json", guideline)
    (out / "label_config.xml").write_text(label_config(guideline))
    rounds = pool.table["round"].value_counts().sort_index()
    print(f"pool {pool.identity['pool_id']}: {len(pool.table):,} pairs "
          f"({json.dumps({int(k): int(v) for k, v in rounds.items()})} per round)")


if __name__ == "__main__":
    guarded(main)
