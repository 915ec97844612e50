"""Stage ``fuse@<system>``: a hybrid window from two systems' windows, tuned on validation.

The fusion grid (RRF k; linear weights × score normalisations) is scored on the validation
split only, the best entry is frozen and applied to every query; the test split is never
looked at. Outputs (data/fused/<system>/): run.parquet per the run contract (route
``hybrid``, at most ``candidates.depth`` per query: the same budget as every other system),
latency.parquet and run_stats.json (the chosen fusion, the validation grid, candidates per
query, latency). A fused query's latency is the serial bound: its two source routes'
latencies plus its share of the fusion's wall time (fusion runs for all queries at once).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from releval import schema as S
from releval.errors import InputError
from releval.fusion import expand_grid, fuse, tune
from releval.params import Params
from releval.retrievers.base import LATENCY_MS, Candidates, latency_table, run_stats
from releval.visibility import judgments_of
from stages.common import guarded, params_of, parser, write_json, write_parquet

ROUTE = "hybrid"


def run(p: Params, system: str, runs: dict[str, pd.DataFrame], judgments: pd.DataFrame,
        split: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame,
        latencies: dict[str, pd.DataFrame] | None = None
        ) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    if system not in p.fusion.systems:
        raise InputError(f"no system {system!r} in fusion.systems", "params")
    c = p.fusion.systems[system]
    missing = [s for s in (c.lexical, c.dense) if s not in runs]
    if missing:
        raise InputError(f"fusion {system} needs the windows of {', '.join(missing)}, which "
                         "candidates.systems does not define", "params")
    windows = {s: runs[s][[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]] for s in (c.lexical, c.dense)}
    grid = [entry for method in c.methods for entry in expand_grid(
        method, c.rrf_k, c.weights, c.norms, (c.lexical, c.dense))]
    validation = split.loc[split[S.SPLIT] == "validation", S.QUERY_ID]
    qrels, visible = judgments_of(judgments, queries, documents, validation)
    qrels = qrels[visible]
    depth = p.candidates.depth
    if len(validation) and (qrels[S.GRADE] >= 1).any():
        tuning = tune({s: w[w[S.QUERY_ID].isin(validation)] for s, w in windows.items()},
                      qrels, list(validation), depth, grid, c.objective, p.prepare.max_grade)
        best, note = tuning.best, f"tuned on {len(validation)} validation queries"
        table = tuning.table.to_dict(orient="records")
    else:
        best, note, table = grid[0], "no judged validation queries: first grid entry, untuned", []
    tick = time.perf_counter()
    fused = fuse(windows, depth, best)
    share = (time.perf_counter() - tick) * 1e3 / max(1, len(queries))
    latency = share + sum(_latency(latencies, s, queries) for s in (c.lexical, c.dense))
    found = Candidates(fused, latency)
    stats = run_stats(found, queries) | {
        "system": system, "route": ROUTE, "depth": depth, "sources": [c.lexical, c.dense],
        "fusion": best, "objective": c.objective, "tuning": note, "grid": table,
        "latency_note": f"serial bound: {c.lexical} + {c.dense} + fusion share per query"}
    return (fused.assign(**{S.SYSTEM: system, S.ROUTE: ROUTE})[list(S.RUN_COLUMNS)], stats,
            latency_table(queries, latency))


def _latency(latencies: dict[str, pd.DataFrame] | None, system: str,
             queries: pd.DataFrame) -> np.ndarray:
    """A source route's per-query latency in ``queries``' order; NaN where not measured."""
    if not latencies or system not in latencies:
        return np.full(len(queries), np.nan)
    table = latencies[system].set_index(S.QUERY_ID)[LATENCY_MS]
    return table.reindex(queries[S.QUERY_ID]).to_numpy(dtype=float)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--system", required=True)
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--qrels", default="data/judgments/qrels.parquet")
    ap.add_argument("--split", default="data/split/split.parquet")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    p = params_of(args)
    c = p.fusion.systems.get(args.system)
    names = (c.lexical, c.dense) if c else ()
    runs = {s: pd.read_parquet(Path(args.candidates) / s / "run.parquet") for s in names}
    latencies = {s: pd.read_parquet(Path(args.candidates) / s / "latency.parquet")
                 for s in names}
    raw = Path(args.raw)
    table, stats, latency = run(p, args.system, runs, pd.read_parquet(args.qrels),
                                pd.read_parquet(args.split),
                                pd.read_parquet(raw / "queries.parquet"),
                                pd.read_parquet(raw / "documents.parquet"), latencies)
    write_parquet(Path(args.out) / "run.parquet", table)
    write_parquet(Path(args.out) / "latency.parquet", latency)
    write_json(Path(args.out) / "run_stats.json", stats)
    print(f"fuse@{args.system}: {json.dumps(stats['fusion'])} ({stats['tuning']})")


if __name__ == "__main__":
    guarded(main)
