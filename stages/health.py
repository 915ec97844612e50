"""Stage ``health``: every system's health beside its relevance.

Per system (candidate systems, then fused ones): latency percentiles and the error, timeout,
partial and fallback rates (latency.parquet), candidates per query, the near-duplicate ratio
of its windows, the embedding cache's hit rate (run_stats.json), its cost per query under
``health.cost`` and the freshness of its windows (new documents' first appearance, deleted
documents' propagation), each defined in ``releval.decision.health``.

Outputs (data/health/): health.parquet (one row per system, ``releval.decision.health.COLUMNS``;
NaN where undefined) and health.json ({"systems": {name: the same figures (null where
undefined), "undefined": {figure: why}, "status", "near_duplicates", "cost_model",
"revisions"}, "definitions": {figure: text}, "qrels": {"path", "sha256"}}).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.data.readers import sha256_of
from releval.decision.health import health
from releval.errors import InputError
from releval.params import Params
from stages.common import (
    guarded,
    params_of,
    parser,
    read_table,
    system_files,
    system_runs,
    system_stats,
    write_outputs,
)


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``health.<field>`` (``releval.artifacts``)."""

    table: pd.DataFrame
    report: dict


def run(p: Params, runs: dict[str, pd.DataFrame], latencies: dict[str, pd.DataFrame],
        stats: dict[str, dict], documents: pd.DataFrame, queries: pd.DataFrame,
        qrels: dict | None = None) -> Outputs:
    """Every system's health (``releval.decision.health.health``) with ``health.cost``;
    ``qrels``: the judgments' revision ({"path", "sha256"}) the decision was made on. A cost
    model for a system that is not evaluated is an InputError."""
    unknown = sorted(set(p.health.cost) - set(runs))
    if unknown:
        raise InputError(f"health.cost names {', '.join(unknown)}, not evaluated systems "
                         f"({', '.join(runs)})", "params.yaml", "health.cost")
    table, report = health(runs, latencies, stats, documents, queries, p.health.cost,
                           {name: p.sources(name) for name in runs})
    return Outputs(table, report | {"qrels": qrels})


def revision(path: str | Path) -> dict:
    """A file's revision: its path and the sha256 of its bytes (InputError when missing)."""
    return {"path": str(path), "sha256": sha256_of(path)}


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default=artifacts.folder("raw"))
    ap.add_argument("--qrels", default=artifacts.at("judgments.qrels"))
    ap.add_argument("--candidates", default=artifacts.group_folder("candidates"))
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--out", default=artifacts.folder("health"))
    args = ap.parse_args()
    p = params_of(args)
    raw, out = Path(args.raw), Path(args.out)
    result = run(p, system_runs(p, args.candidates, args.fused),
                 {name: read_table(path) for name, path
                  in system_files(p, args.candidates, args.fused, "latency").items()},
                 system_stats(p, args.candidates, args.fused),
                 read_table(artifacts.within(raw, "raw.documents")),
                 read_table(artifacts.within(raw, "raw.queries")),
                 revision(args.qrels))
    write_outputs(result, "health", out)
    undefined = {name: len(s["undefined"]) for name, s in result.report["systems"].items()
                 if s["undefined"]}
    print(f"health: {len(result.table)} system(s)"
          + (f"; undefined figures: {', '.join(f'{n} {k}' for n, k in undefined.items())}"
             if undefined else ""))


if __name__ == "__main__":
    guarded(main)
