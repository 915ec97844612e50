"""Stage ``health``: every system's health beside its relevance.

Per system (candidate systems, then fused ones): latency percentiles and the error, timeout,
partial and fallback rates (latency.parquet), candidates per query, the near-duplicate ratio
of its windows, the embedding cache's hit rate (run_stats.json), its cost per query under
``health.cost`` and the freshness of its windows (new documents' first appearance, deleted
documents' propagation), each defined in ``releval.decision.health``.

Outputs (data/health/): health.parquet (one row per system, ``releval.decision.health.COLUMNS``;
NaN where undefined) and health.json ({"systems": {name: the same figures (null where
undefined), "undefined": {figure: why}, "status", "near_duplicates", "cost_model",
"revisions"}, "definitions": {figure: text}, "qrels": {"path", "sha256"}}). A figure that
cannot apply is listed in its system's ``not_applicable`` (figure -> why) besides
``undefined``: a team's run carries no latency, and a project without documents
(``prepare.source: runs``) has no near-duplicates or freshness (``without_documents``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.data.readers import sha256_of
from releval.decision.health import FRESHNESS, PERCENTILES, health
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
    table, report = without_documents(table, report) if documents.empty else (table, report)
    return Outputs(table, _team_latency(report) | {"qrels": qrels})


NO_DOCUMENTS = ("not applicable: no documents (prepare.source runs: the team's runs alone), "
                "so nothing to read {what} from")
DOCUMENT_FIGURES = {"near_duplicate_ratio": "a document's source or text",
                    **dict.fromkeys(FRESHNESS, "a publication or deletion date")}
COUNTS = ("freshness_eligible", "freshness_appeared", "deleted_eligible",
          "deleted_still_appearing")  # counts of documents: 0 of none, never null
TEAM_LATENCY = "not measured: a team's run file carries no latency"


def without_documents(table: pd.DataFrame, report: dict) -> tuple[pd.DataFrame, dict]:
    """A project without documents: the figures read from documents (near-duplicates,
    freshness days) undefined, their counts of documents 0 (of none), each system's
    ``undefined`` and ``not_applicable`` saying why (not applicable, not zero)."""
    table = table.copy()
    figures = [f for f in DOCUMENT_FIGURES if f not in COUNTS]
    for figure in figures:
        table[figure] = float("nan")
    for record in report["systems"].values():
        why = {f: NO_DOCUMENTS.format(what=what) for f, what in DOCUMENT_FIGURES.items()}
        record.update(dict.fromkeys(figures))
        record["undefined"] = record["undefined"] | {f: why[f] for f in figures}
        record["not_applicable"] = record.get("not_applicable", {}) | why
        record["near_duplicates"] = None
    return table, report


def _team_latency(report: dict) -> dict:
    """A team's run (route external) whose latency is undefined: said so, and not applicable
    (its file carries none)."""
    for record in report["systems"].values():
        if record.get("route") != "external":
            continue
        lacking = [f for f in PERCENTILES if f in record.get("undefined", {})]
        why = dict.fromkeys(lacking, TEAM_LATENCY)
        record["undefined"] = record["undefined"] | why
        if why:
            record["not_applicable"] = record.get("not_applicable", {}) | why
    return report


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
