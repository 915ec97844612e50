"""Stage ``candidates@<system>``: one system's candidate window for every query.

Outputs (data/candidates/<system>/): run.parquet per the run contract (system, route,
query_id, doc_id, rank, score), latency.parquet (query_id, latency_ms; NaN where not
measured) and run_stats.json (latency percentiles, candidates per query). Every route
applies the visibility rule to its whole window.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.errors import InputError
from releval.inputs import pinned
from releval.params import Params
from releval.retrievers import make_retriever
from releval.retrievers.base import latency_table, run_stats
from releval.visibility import Visibility
from stages.common import guarded, params_of, parser, write_json, write_parquet


def run(p: Params, system: str, documents: pd.DataFrame,
        queries: pd.DataFrame) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    if system not in p.candidates.systems:
        raise InputError(f"no system {system!r} in candidates.systems "
                         f"({', '.join(p.candidates.systems)})", "params")
    config = p.candidates.systems[system].model_dump()
    route = config.pop("route")
    if "path" in config:  # an external run: read the pinned copy (releval.inputs)
        config["path"] = str(pinned(p, f"candidates.systems.{system}.path"))
    retriever = make_retriever(route, **config)
    retriever.index(documents)
    found = retriever.search(queries, p.candidates.depth, Visibility(documents))
    run_table = found.run.assign(**{S.SYSTEM: system, S.ROUTE: route})
    run_table = run_table[list(S.RUN_COLUMNS)]
    stats = run_stats(found, queries) | {"system": system, "route": route,
                                         "depth": p.candidates.depth, "params": config}
    return run_table, stats, latency_table(queries, found.latency_ms)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--system", required=True)
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    raw, out = Path(args.raw), Path(args.out)
    run_table, stats, latency = run(params_of(args), args.system,
                           pd.read_parquet(raw / "documents.parquet"),
                           pd.read_parquet(raw / "queries.parquet"))
    write_parquet(out / "run.parquet", run_table)
    write_parquet(out / "latency.parquet", latency)
    write_json(out / "run_stats.json", stats)
    print(f"candidates@{args.system}: {len(run_table):,} candidates for "
          f"{run_table[S.QUERY_ID].nunique():,} queries")


if __name__ == "__main__":
    guarded(main)
