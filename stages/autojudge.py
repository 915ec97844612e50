"""Stage ``autojudge``: automatic labels beside the human ones, validated against them.

With ``judgments.automatic`` set, the judge labels the human-judged pairs of the evaluated
queries and the pool's unjudged pairs of the same queries (``fill_holes``): the built-in
judge (``judge: dense``: the first dense system's similarity, mapped to grades by thresholds
fitted on the validation sample, cross-fitted) or a labels file (``labels``, pinned by the
inputs stage). Every evaluated system is scored on the judged evaluated queries under each
label set (human judgments of documents a query may not see left out, as in ``evaluate``)
(``releval.judging.validated.LABEL_SETS``) with the metrics engine. Outputs
(data/autojudge/): automatic.parquet (query_id, doc_id, grade, judge, model, confidence,
role), agreement_auto.json (``releval.documents.agreement_auto``: agreement on the held-out
pairs, the two rankings and their τ / τ_AP, PPI intervals beside the human-only and the
automatic-only figures, the compared pair's PPI difference the gate may read) and
per_query.parquet (labels, system, query_id, measure, value). Without an automatic judge
both tables are empty and the document says none is configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from releval import artifacts
from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.decision import automatic as A
from releval.decision.no_answer import evaluated_queries
from releval.errors import InputError
from releval.judging import automatic as judging
from releval.judging import validated as V
from releval.judging.agreement_auto import agreement
from releval.judging.similarity import dense_system, retriever
from releval.metrics.engine import evaluate_systems
from releval.params import AutomaticJudge, Params
from releval.project.inputs import INPUT_DIR, pinned


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``autojudge.<field>`` (``releval.artifacts``)."""

    automatic: pd.DataFrame
    report: dict
    per_query: pd.DataFrame


def none_configured() -> Outputs:
    return Outputs(pd.DataFrame(columns=list(V.AUTOMATIC_COLUMNS)),
                   {"configured": False, "note": V.NOT_CONFIGURED},
                   pd.DataFrame(columns=list(V.PER_QUERY_COLUMNS)))


def judge(p: Params, a: AutomaticJudge, pairs: pd.DataFrame, validation: pd.DataFrame,
          heldout: pd.DataFrame, documents: pd.DataFrame, queries: pd.DataFrame,
          labels: pd.DataFrame | None) -> tuple[pd.DataFrame, dict]:
    """The judge's labels of ``pairs`` (AUTOMATIC_COLUMNS) and what the document says of the
    judge. A labels file's pairs outside ``pairs`` are not read; a pair it leaves out has no
    automatic label. The built-in judge is fitted on ``validation`` (cross-fitted) and never
    reads ``heldout``'s grades."""
    if a.labels is not None:
        found = pairs.merge(labels, on=[S.QUERY_ID, S.DOC_ID], how="inner")
        twice = found.duplicated([S.QUERY_ID, S.DOC_ID])
        if twice.any():
            raise InputError(f"pair ({found[S.QUERY_ID][twice].iloc[0]!r}, "
                             f"{found[S.DOC_ID][twice].iloc[0]!r}) has labels of several "
                             "models: name one (judgments.automatic.model)",
                             labels.attrs.get("source", "labels"))
        return found[list(V.AUTOMATIC_COLUMNS)], {
            "kind": "file", "name": a.judge, "model": _one(found[judging.MODEL]),
            "labels": a.labels, "labelled": int(len(found)), "asked": int(len(pairs)),
            "unmatched": judging.unmatched(labels, queries, documents)}
    name, config = dense_system(p.candidates.systems)
    keys = pairs[[S.QUERY_ID, S.DOC_ID]]
    similarity = judging.pair_similarity(keys, queries, documents, retriever(config))
    labelled = judging.similarity_judge(
        keys, similarity, validation, max_grade=p.prepare.max_grade, model=config.model,
        seed=p.base.seed, heldout=heldout[[S.QUERY_ID, S.DOC_ID]])
    return labelled[list(V.AUTOMATIC_COLUMNS)], {
        "kind": "built-in", "name": judging.SIMILARITY_JUDGE, "model": config.model,
        "encoder_of": name, "thresholds": labelled.attrs["thresholds"],
        "fold_thresholds": labelled.attrs["fold_thresholds"],
        "similarity": "cosine of the query's and the document's vectors (the dense system's "
                      "encoder and embedding cache)",
        "weak": "A weak judge: one encoder's cosine per pair, topicality only.",
        "labelled": int(len(labelled)), "asked": int(len(pairs))}


def _one(column: pd.Series) -> str | None:
    names = column.dropna().astype(str).unique()
    return ", ".join(sorted(names)) or None


@dataclass(frozen=True)
class Inputs:
    """qrels: the human qrels; labels: the judge's labels
    (``releval.judging.automatic.read_labels``; None: read from the pinned labels file under
    ``pinned``, or the built-in judge)."""

    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="system")
    pool: pd.DataFrame = reads("pool.pool")
    qrels: pd.DataFrame = reads("judgments.qrels")
    documents: pd.DataFrame = reads("raw.documents")
    queries: pd.DataFrame = reads("raw.queries")
    split: pd.DataFrame = reads("split.split")
    labels: pd.DataFrame | None = None
    pinned: Path = INPUT_DIR


def run(p: Params, inputs: Inputs) -> Outputs:
    """``qrels``: the human qrels; ``labels``: the judge's labels file read
    (``releval.judging.automatic.read_labels``), None for the built-in judge."""
    labels = inputs.labels if inputs.labels is not None else read_labels(p, inputs.pinned)
    runs, pool, qrels = inputs.runs, inputs.pool, inputs.qrels
    documents, queries, split = inputs.documents, inputs.queries, inputs.split
    a = p.judgments.automatic
    if a is None:
        return none_configured()
    c = p.evaluate
    evaluated, _ = evaluated_queries(split, queries, c.splits, p.no_answer.tag)
    evaluated = pd.Index(pd.unique(evaluated.astype(str)), dtype=object)
    human, visible = judgments_of(qrels.astype({S.QUERY_ID: str, S.DOC_ID: str}), queries,
                                  documents, evaluated)
    human = human[visible]  # as the evaluate stage: what the query may not see is left out
    if human.empty:
        raise InputError("no human judgment of an evaluated query: nothing to validate the "
                         "automatic judge against", artifacts.at("judgments.qrels"))
    validation_h, heldout_h = judging.split_human(human, share=a.validation_share,
                                                  seed=p.base.seed)
    validation = pd.Index(np.sort(validation_h[S.QUERY_ID].unique()), dtype=object)
    judged = pd.Index(np.sort(human[S.QUERY_ID].unique()), dtype=object)
    heldout = judged.difference(validation)
    pairs = V.labelled_pairs(human, pool, validation, a.fill_holes)
    automatic, about = judge(p, a, pairs, validation_h, heldout_h, documents, queries, labels)
    sets = V.label_sets(human, automatic)
    measures = list(dict.fromkeys(a.measures or p.compare.measures))
    judged_at = f"Judged@{c.judged_k}"
    scored = {name: evaluate_systems(runs, q, [*measures, judged_at], rel=c.rel,
                                     max_grade=p.prepare.max_grade, queries=judged)
              for name, q in sets.items()}
    per_query = pd.concat([s.per_query.assign(**{V.LABELS: name}) for name, s in scored.items()],
                          ignore_index=True)[list(V.PER_QUERY_COLUMNS)]
    both = automatic.merge(human[[S.QUERY_ID, S.DOC_ID, S.GRADE]], on=[S.QUERY_ID, S.DOC_ID],
                           suffixes=("_auto", "_human"))
    held = both[both[V.ROLE] == V.HELDOUT]
    agreed = agreement(held[[S.QUERY_ID, S.DOC_ID, "grade_human"]].rename(
                           columns={"grade_human": S.GRADE}),
                       held[[S.QUERY_ID, S.DOC_ID, "grade_auto"]].rename(
                           columns={"grade_auto": S.GRADE}),
                       max_grade=p.prepare.max_grade, alpha=p.compare.alpha, seed=p.base.seed)
    ranking = {m: A.ranking_figures(per_query, m, heldout, p) for m in measures}
    agreed["per_query"] = V.per_query_summary(agreed["per_query"])
    holes = automatic[automatic[V.ROLE] == V.HOLE]
    report = {
        "configured": True, "note": None, "judge": about,
        "sample": {"validation_share": a.validation_share, "seed": p.base.seed,
                   "evaluated": int(len(evaluated)), "judged": int(len(judged)),
                   "validation": int(len(validation)), "heldout": int(len(heldout)),
                   "pairs": {role: int((pairs[V.ROLE] == role).sum())
                             for role in (V.VALIDATION, V.HELDOUT, V.HOLE)}},
        "labels": V.shares(automatic, human),
        "judged": {"measure": judged_at, "queries": int(len(judged)),
                   "systems": {s: {name: sc.means.get(s, {}).get(judged_at)
                                   for name, sc in scored.items()} for s in runs}},
        "agreement": agreed | {"on": "the held-out queries' pairs both judged",
                               "pairs": int(len(held))},
        "systems": {"on": "the held-out queries", "queries": int(len(heldout)),
                    "measures": V.means(per_query, heldout, measures)},
        "ranking": {"on": "the held-out queries", "labels": ["human", "automatic"],
                    "measures": ranking},
        "ppi": {"labelled": "the validation queries' human values",
                "unlabelled": "every other judged query's automatic values",
                "measures": A.ppi_figures(per_query, measures, validation, judged, heldout,
                                      p.compare.alpha)},
        "difference": A.difference_figures(p, per_query, measures, validation, judged),
        "holes": {"filled": int(len(holes)), "fill_holes": a.fill_holes,
                  "relevant": int((holes[S.GRADE] >= c.rel).sum()),
                  "queries": int(holes[S.QUERY_ID].nunique())},
    }
    return Outputs(automatic.reset_index(drop=True), V.plain(report), per_query)


def read_labels(p: Params, folder: str | Path) -> pd.DataFrame | None:
    """The pinned labels file read (``releval.judging.automatic.read_labels``: a labels
    table or TREC qrels), None for the built-in judge."""
    a = p.judgments.automatic
    if a is None or a.labels is None:
        return None
    path = pinned(p, "judgments.automatic", Path(folder))
    return judging.read_labels(path, judge=a.judge, model=a.model, max_grade=p.prepare.max_grade)


def line(p: Params, result: Outputs) -> str:
    r = result.report
    if not r["configured"]:
        return f"autojudge: {r['note']}"
    kappa = r["agreement"].get("kappa", {}).get("quadratic", {})
    unmatched = judging.unmatched_note(r["judge"].get("unmatched") or {})
    return (f"autojudge: {r['judge']['name']} labelled {len(result.automatic):,} pairs "
            f"({r['holes']['filled']:,} holes); quadratic κ "
            f"{kappa.get('value', float('nan')):.3f} on {r['agreement']['pairs']:,} held-out "
            "pairs" + (f"; {unmatched}" if unmatched else ""))
