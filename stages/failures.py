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

from releval import artifacts
from releval.data import contracts as S
from releval.data.history import History
from releval.decision.no_answer import evaluated_queries
from releval.diagnosis import worksheet
from releval.diagnosis.layers import LAYERS, classify, system_infos
from releval.diagnosis.summary import changes, safety_failures, summary
from releval.params import Params
from releval.project.inputs import in_users_words, pinned
from releval.retrieval.deep import exact_ranks
from stages.common import (
    guarded,
    params_of,
    parser,
    read_table,
    system_runs,
    system_stats,
    write_outputs,
)


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``failures.<field>`` (``releval.artifacts``)."""

    failures: pd.DataFrame
    summary: pd.DataFrame
    worksheet: pd.DataFrame
    quarantine: pd.DataFrame
    report: dict


def run(p: Params, runs: dict[str, pd.DataFrame], stats: dict[str, dict],
        judgments: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame,
        split: pd.DataFrame, labels: pd.DataFrame, violations: pd.DataFrame,
        answers: pd.DataFrame, interactions: pd.DataFrame,
        review: str | Path | None = None) -> Outputs:
    """``interactions``: prepare's log (empty for a retrieval source)."""
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


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default=artifacts.folder("raw"))
    ap.add_argument("--qrels", default=artifacts.at("judgments.qrels"))
    ap.add_argument("--split", default=artifacts.at("split.split"))
    ap.add_argument("--evaluate", default=artifacts.folder("evaluate"))
    ap.add_argument("--safety", default=artifacts.folder("safety"))
    ap.add_argument("--candidates", default=artifacts.group_folder("candidates"))
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--out", default=artifacts.folder("failures"))
    args = ap.parse_args()
    p = params_of(args)
    raw, out = Path(args.raw), Path(args.out)
    runs = system_runs(p, args.candidates, args.fused)
    stats = system_stats(p, args.candidates, args.fused)
    result = run(p, runs, stats, read_table(args.qrels),
                 read_table(artifacts.within(raw, "raw.queries")),
                 read_table(artifacts.within(raw, "raw.documents")), read_table(args.split),
                 read_table(artifacts.within(args.evaluate, "evaluate.labels")),
                 read_table(artifacts.within(args.safety, "safety.violations")),
                 read_table(artifacts.within(raw, "raw.answers")),
                 read_table(artifacts.within(raw, "raw.interactions")),
                 pinned(p, "failures.review"))
    write_outputs(result, "failures", out, worksheet=worksheet.write)
    counts = result.failures.groupby([S.SYSTEM, "layer"]).size()
    print("failures: " + ", ".join(f"{s}/{layer} {n}" for (s, layer), n in counts.items()))


if __name__ == "__main__":
    guarded(main, in_users_words)
