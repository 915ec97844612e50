"""Stage ``fuse@<system>``: a hybrid window from two systems' windows, tuned on validation.

The fusion grid (RRF k; linear weights × score normalisations) is scored on the validation
split only, the best entry is frozen and applied to every query; the test split is never
looked at (``releval.retrieval.fusion``). Outputs (data/fused/<system>/): run.parquet per the
run contract (route ``hybrid``, at most ``candidates.depth`` per query: the same budget as
every other system), latency.parquet and run_stats.json (the chosen fusion, the validation
grid, candidates per query, latency, status). A fused query's latency is the serial bound: its
two source routes' latencies plus its share of the fusion's wall time (fusion runs for all
queries at once); its status follows its sources' (``releval.retrieval.fusion.fused_status``:
"ok" when both are, "partial" when one is not).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pandas as pd

from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.errors import InputError
from releval.params import Params
from releval.retrieval.base import Candidates, latency_of, latency_table, run_stats, status_of
from releval.retrieval.fusion import choose, expand_grid, fuse, fused_status
from releval.retrieval.routes import FUSED


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``fused.<field>`` (``releval.artifacts``)."""

    run: pd.DataFrame
    stats: dict
    latency: pd.DataFrame


@dataclass(frozen=True)
class Inputs:
    """system: the stage's item; runs, latencies: its source systems' runs and latencies."""

    system: str = ""
    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="source")
    judgments: pd.DataFrame = reads("judgments.qrels")
    split: pd.DataFrame = reads("split.split")
    queries: pd.DataFrame = reads("raw.queries")
    documents: pd.DataFrame = reads("raw.documents")
    latencies: dict[str, pd.DataFrame] | None = reads("candidates.latency", each="source")


def run(p: Params, inputs: Inputs) -> Outputs:
    system, runs, judgments = inputs.system, inputs.runs, inputs.judgments
    split, queries, documents = inputs.split, inputs.queries, inputs.documents
    latencies = inputs.latencies
    if system not in p.fusion.systems:
        raise InputError(f"no system {system!r} in fusion.systems", "params")
    c = p.fusion.systems[system]
    sources = p.sources(system)
    missing = [s for s in sources if s not in runs]
    if missing:
        raise InputError(f"fusion {system} needs the windows of {', '.join(missing)}, which "
                         "candidates.systems does not define", "params")
    windows = {s: runs[s][[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]] for s in sources}
    grid = [entry for method in c.methods
            for entry in expand_grid(method, c.rrf_k, c.weights, c.norms, sources)]
    validation = split.loc[split[S.SPLIT] == "validation", S.QUERY_ID]
    qrels, visible = judgments_of(judgments, queries, documents, validation)
    depth = p.candidates.depth
    best, note, table = choose(windows, qrels[visible], validation, depth, grid, c.objective,
                               p.prepare.max_grade)
    tick = time.perf_counter()
    fused = fuse(windows, depth, best)
    share = (time.perf_counter() - tick) * 1e3 / max(1, len(queries))
    latency = share + sum(latency_of((latencies or {}).get(s), queries) for s in sources)
    status = fused_status(*(status_of((latencies or {}).get(s), queries) for s in sources))
    stats = run_stats(Candidates(fused, latency, status=status), queries) | {
        "system": system, "route": FUSED, "depth": depth, "sources": list(sources),
        "fusion": best, "objective": c.objective, "tuning": note, "grid": table,
        "latency_note": f"serial bound: {c.lexical} + {c.dense} + fusion share per query"}
    return Outputs(fused.assign(**{S.SYSTEM: system, S.ROUTE: FUSED})[list(S.RUN_COLUMNS)],
                   stats, latency_table(queries, latency, status))


def line(p: Params, result: Outputs) -> str:
    return (f"fuse@{result.stats['system']}: {json.dumps(result.stats['fusion'])} "
            f"({result.stats['tuning']})")
