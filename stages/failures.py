"""Stage ``failures``: every missed relevant document of the compared systems traced to the
first layer that lost it, and a worksheet for the manual inspection.

For ``compare.baseline`` and ``compare.candidate``, on the evaluated queries (no-answer
queries aside): each judged-relevant document (grade ≥ ``evaluate.rel``) outside the
system's top ``failures.k`` is classified by ``releval.diagnosis.layers.classify`` (chunk,
corpus, filter, representation, exact_ann, fusion, qrels, downstream, ranking), with the
routes re-searched exactly to ``failures.deep_k`` (``releval.retrieval.deep``; in
recommendation mode from the interaction log, as the candidates stage searched); safety
violations of the systems and their routes are failures too (layer filter). A reviewed
worksheet (``failures.review``) overrides the automatic layers; its bad rows are quarantined
and the disagreement rate reported.

Outputs (data/failures/): failures.parquet (one row per failure, with evidence and the
``compare.strata`` slice), summary.parquet (counts by system × kind × layer and by slice),
worksheet.csv, review_quarantine.csv and failures.json (counts by layer, what changed by
layer between baseline and candidate, the review's counts; ``not_applicable``: layer -> why,
for the layers that read documents when there are none, a project of team runs without a
corpus).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.history import History
from releval.decision.no_answer import evaluated_queries
from releval.diagnosis import worksheet
from releval.diagnosis.layers import LAYERS, classify, system_infos
from releval.diagnosis.summary import changes, safety_failures, summary
from releval.params import Params
from releval.project.inputs import INPUT_DIR, pinned
from releval.retrieval.deep import exact_ranks
from stages.common import written_with


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``failures.<field>`` (``releval.artifacts``)."""

    failures: pd.DataFrame
    summary: pd.DataFrame
    worksheet: pd.DataFrame = written_with(worksheet.write)
    quarantine: pd.DataFrame
    report: dict


@dataclass(frozen=True)
class Inputs:
    """interactions: prepare's log (empty for a retrieval source); pinned: the folder of the
    pinned review file (``failures.review``)."""

    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="system")
    stats: dict[str, dict] = reads("candidates.stats", each="system")
    judgments: pd.DataFrame = reads("judgments.qrels")
    queries: pd.DataFrame = reads("raw.queries")
    documents: pd.DataFrame = reads("raw.documents")
    split: pd.DataFrame = reads("split.split")
    labels: pd.DataFrame = reads("evaluate.labels")
    violations: pd.DataFrame = reads("safety.violations")
    answers: pd.DataFrame = reads("raw.answers")
    interactions: pd.DataFrame = reads("raw.interactions")
    pinned: Path = INPUT_DIR


def run(p: Params, inputs: Inputs) -> Outputs:
    """``interactions``: prepare's log (empty for a retrieval source)."""
    runs, stats, judgments = inputs.runs, inputs.stats, inputs.judgments
    queries, documents, split = inputs.queries, inputs.documents, inputs.split
    labels, violations, answers = inputs.labels, inputs.violations, inputs.answers
    interactions = inputs.interactions
    c, f = p.compare, p.failures
    compared = [c.baseline, c.candidate]
    infos = system_infos(p, stats)
    routes = list(dict.fromkeys(r for s in compared for r in p.windows(s)))
    query_ids, _ = evaluated_queries(split, queries, p.evaluate.splits, p.no_answer.tag)
    history = (History.of(interactions, queries, p.recommend.exclude_seen)
               if p.recommendation else None)
    deep = exact_ranks({r: p.candidates.systems[r] for r in routes
                        if r in p.candidates.systems}, documents, queries, query_ids, f.deep_k,
                       history)
    found = classify({s: infos[s] for s in routes}, runs, judgments, queries, documents,
                     query_ids, k=f.k, rel=p.evaluate.rel, deep=deep, deep_k=f.deep_k,
                     answers=answers if len(answers) else None)
    found = found[found[S.SYSTEM].isin(compared)]
    unsafe = violations[violations[S.QUERY_ID].isin(query_ids)]
    table = pd.concat([found, safety_failures(unsafe, routes)], ignore_index=True)
    strata = labels.loc[labels[S.DIMENSION] == c.strata].set_index(S.QUERY_ID)[S.SLICE]
    table = table.assign(stratum=table[S.QUERY_ID].map(strata).fillna("unlabelled"))
    sheet = worksheet.build(table, runs, judgments, queries, documents, k=f.k)
    quarantine = pd.DataFrame()
    review_report = None
    review = pinned(p, "failures.review", inputs.pinned)
    if review:
        reviewed = worksheet.ingest(review, sheet)
        table = worksheet.apply(table, reviewed)
        quarantine = reviewed.quarantine
        review_report = reviewed.counts | {"disagreement_rate": reviewed.disagreement_rate}
    by_layer = changes(table[table["kind"] == "relevance"], c.baseline, c.candidate)
    report = {"baseline": c.baseline, "candidate": c.candidate, "k": f.k, "deep_k": f.deep_k,
              "queries": int(len(query_ids)), "layers": list(LAYERS),
              "chunk_map": bool(len(answers)),
              "by_layer": by_layer.to_dict(orient="records"),
              "safety": {s: int(((table["kind"] == "safety") & (table[S.SYSTEM] == s)).sum())
                         for s in routes},
              "review": review_report}
    if documents.empty:
        report["not_applicable"] = {layer: NO_DOCUMENTS for layer in DOCUMENT_LAYERS}
    return Outputs(table, summary(table, labels), sheet, quarantine, report)


DOCUMENT_LAYERS = ("chunk", "corpus", "filter", "representation", "exact_ann")
NO_DOCUMENTS = ("not applicable: no documents (prepare.source runs: the team's runs alone): "
                "nothing to check a missed document's unit, liveness or visibility against, "
                "and no route to re-search")


def line(p: Params, result: Outputs) -> str:
    counts = result.failures.groupby([S.SYSTEM, "layer"]).size()
    return "failures: " + ", ".join(f"{s}/{layer} {n}" for (s, layer), n in counts.items())
