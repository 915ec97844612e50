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

from releval.artifacts import reads
from releval.data.readers import sha256_of
from releval.decision.freshness import untimed
from releval.decision.health import FRESHNESS, PERCENTILES, evaluated_queries, health
from releval.documents.source import Source, timed_queries
from releval.errors import InputError
from releval.params import Params


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``health.<field>`` (``releval.artifacts``)."""

    table: pd.DataFrame
    report: dict


def revision(path: str | Path) -> dict:
    """A file's revision: its path and the sha256 of its bytes (InputError when missing)."""
    return {"path": str(path), "sha256": sha256_of(path)}


@dataclass(frozen=True)
class Inputs:
    """qrels: the judgments' revision ({path, sha256}) the decision was made on; split: the
    split, whose ``evaluate.splits`` queries the per-query figures count (None: every query);
    source: the data's source.json, whose ``query_times`` False makes the queries untimed."""

    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="system")
    latencies: dict[str, pd.DataFrame] = reads("candidates.latency", each="system")
    stats: dict[str, dict] = reads("candidates.stats", each="system")
    documents: pd.DataFrame = reads("raw.documents")
    queries: pd.DataFrame = reads("raw.queries")
    qrels: dict | None = reads("judgments.qrels", reader=revision)
    split: pd.DataFrame | None = reads("split.split")
    source: Source | None = reads("raw.source", optional=True)  # real query times or not


def run(p: Params, inputs: Inputs) -> Outputs:
    """Every system's health (``releval.decision.health.health``) with ``health.cost``;
    ``qrels``: the judgments' revision ({"path", "sha256"}) the decision was made on. A cost
    model for a system that is not evaluated is an InputError."""
    runs, latencies, stats = inputs.runs, inputs.latencies, inputs.stats
    documents, queries, qrels = inputs.documents, inputs.queries, inputs.qrels
    if not timed_queries(inputs.source):
        queries = untimed(queries)  # a stand-in issue time (BEIR's): no freshness is claimed
    unknown = sorted(set(p.health.cost) - set(runs))
    if unknown:
        raise InputError(f"health.cost names {', '.join(unknown)}, not evaluated systems "
                         f"({', '.join(runs)})", "params.yaml", "health.cost")
    table, report = health(runs, latencies, stats, documents, queries, p.health.cost,
                           {name: p.sources(name) for name in runs},
                           evaluated_queries(inputs.split, p.evaluate.splits))
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


def line(p: Params, result: Outputs) -> str:
    undefined = {name: len(s["undefined"]) for name, s in result.report["systems"].items()
                 if s["undefined"]}
    return (f"health: {len(result.table)} system(s)"
            + (f"; undefined figures: {', '.join(f'{n} {k}' for n, k in undefined.items())}"
               if undefined else ""))
