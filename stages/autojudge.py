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
from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.decision import ppi
from releval.decision.no_answer import evaluated_queries
from releval.decision.ranking_agreement import ranking_agreement
from releval.errors import InputError
from releval.judging import automatic as judging
from releval.judging import validated as V
from releval.judging.agreement_auto import agreement
from releval.judging.similarity import dense_system, retriever
from releval.metrics.engine import evaluate_systems
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.params import AutomaticJudge, Params
from releval.project.inputs import in_users_words, pinned
from stages.common import guarded, params_of, parser, read_table, system_runs, write_outputs


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
            "labels": a.labels, "labelled": int(len(found)), "asked": int(len(pairs))}
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


def ppi_block(per_query: pd.DataFrame, measures: list[str], validation: pd.Index,
              evaluated: pd.Index, heldout: pd.Index, alpha: float) -> dict:
    """measure -> system -> PPI (n validation queries' human values, every evaluated query's
    automatic value) beside the human-only and automatic-only intervals and the held-out
    queries' human mean (the ground truth the interval should cover); ``undefined`` with the
    reason where too few queries have a value (``validated.too_few``)."""
    out: dict = {}
    for measure in measures:
        human = V.values(per_query, "human", measure, evaluated)
        auto = V.values(per_query, "automatic", measure, evaluated)
        for system in human.columns:
            why = V.too_few(human[system], auto[system], validation)
            figures = ({"undefined": why} if why else
                       ppi.intervals(human[system], auto[system], validation, alpha=alpha))
            truth = human[system].reindex(heldout)
            figures["heldout_human"] = (None if truth.isna().all()
                                        else round(float(truth.mean()), 6))
            out.setdefault(measure, {})[system] = figures
    return out


def difference_block(p: Params, per_query: pd.DataFrame, measures: list[str],
                     validation: pd.Index, evaluated: pd.Index) -> dict:
    """measure -> the PPI intervals of compare.candidate − compare.baseline (``ppi.difference``),
    the figures ``gate: ppi`` reads (``undefined``, with the reason, where too few queries
    have a defined difference: ``validated.too_few``)."""
    base, cand, out = p.compare.baseline, p.compare.candidate, {}
    for measure in measures:
        human = V.values(per_query, "human", measure, evaluated)
        auto = V.values(per_query, "automatic", measure, evaluated)
        if {base, cand} <= set(human.columns):
            y, yhat = human[cand] - human[base], auto[cand] - auto[base]
            why = V.too_few(y, yhat, validation)
            out[measure] = ({"undefined": why} if why else ppi.difference(
                human[base], human[cand], auto[base], auto[cand], validation,
                alpha=p.compare.alpha)) | {"baseline": base, "candidate": cand}
    return out


def rankings(per_query: pd.DataFrame, measure: str, queries: pd.Index, p: Params) -> dict:
    """``ranking_agreement`` of ``measure`` on ``queries`` (human vs automatic), its
    rankings and flips as records (the pairs' table left out: the flips are its news); a
    system undefined under either label set is left out and named, and fewer than 2 systems
    leave the ranking undefined, with the reason."""
    better = MEASURES[parse_measures(measure)[0].family].better
    human = V.values(per_query, "human", measure, queries)
    auto = V.values(per_query, "automatic", measure, queries).reindex(columns=human.columns)
    kept, left_out = V.defined_systems(human, auto)
    about = {"higher_is_better": better == "higher", "left_out": left_out}
    if len(kept) < 2:
        return about | {"systems": len(kept), "undefined": f"{len(kept)} system(s) with a "
                        "defined value under both label sets: no ranking to compare"}
    result = ranking_agreement(human[kept], auto[kept], alpha=p.compare.alpha,
                               seed=p.base.seed, higher_is_better=better == "higher")
    result.pop("pairs")
    return result | about


def run(p: Params, runs: dict[str, pd.DataFrame], pool: pd.DataFrame, qrels: pd.DataFrame,
        documents: pd.DataFrame, queries: pd.DataFrame, split: pd.DataFrame,
        labels: pd.DataFrame | None = None) -> Outputs:
    """``qrels``: the human qrels; ``labels``: the judge's labels file read
    (``releval.judging.automatic.read_labels``), None for the built-in judge."""
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
    ranking = {m: rankings(per_query, m, heldout, p) for m in measures}
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
                "measures": ppi_block(per_query, measures, validation, judged, heldout,
                                      p.compare.alpha)},
        "difference": difference_block(p, per_query, measures, validation, judged),
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


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default=artifacts.folder("raw"))
    ap.add_argument("--inputs", default=artifacts.folder("input"))
    ap.add_argument("--pool", default=artifacts.at("pool.pool"))
    ap.add_argument("--qrels", default=artifacts.at("judgments.qrels"))
    ap.add_argument("--split", default=artifacts.at("split.split"))
    ap.add_argument("--candidates", default=artifacts.group_folder("candidates"))
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--out", default=artifacts.folder("autojudge"))
    args = ap.parse_args()
    p = params_of(args)
    raw = Path(args.raw)
    if p.judgments.automatic is None:
        result = none_configured()
    else:
        result = run(p, system_runs(p, args.candidates, args.fused), read_table(args.pool),
                     read_table(args.qrels), read_table(artifacts.within(raw, "raw.documents")),
                     read_table(artifacts.within(raw, "raw.queries")), read_table(args.split),
                     read_labels(p, args.inputs))
    write_outputs(result, "autojudge", args.out)
    r = result.report
    if not r["configured"]:
        print(f"autojudge: {r['note']}")
        return
    kappa = r["agreement"].get("kappa", {}).get("quadratic", {})
    print(f"autojudge: {r['judge']['name']} labelled {len(result.automatic):,} pairs "
          f"({r['holes']['filled']:,} holes); quadratic κ "
          f"{kappa.get('value', float('nan')):.3f} on {r['agreement']['pairs']:,} held-out pairs")


if __name__ == "__main__":
    guarded(main, in_users_words)
