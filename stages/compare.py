"""Stage ``compare``: the candidate against the baseline, under controlled conditions.

Before comparing, each side's conditions (``releval.decision.conditions``) are taken from
the evaluation: the evaluated queries (count and digest), the qrels revision (digest of the
judgments the queries may see), the candidate budget (depth), the time window (first and
last query time) with the corpus snapshot (digest), and whether the visibility rule was
enforced by the route; then those the declared kind of change holds fixed
(``compare.change``, ``releval.decision.change.KINDS``). Any difference refuses the
comparison with the differences listed, unless ``compare.allow_uncontrolled``: then every
output says ``controlled: false``. Each ``compare.also`` pair is compared alike.

Outputs (data/compare/): comparison.json (conditions; paired rows per measure: mean, median,
W/T/L, bootstrap CI, sign-flip p, Holm over the measures, verdict against min_effect;
macro / micro / traffic-weighted / equal-slice aggregates over ``compare.strata``; the
rate/mix composition check; ``change``: the kind, what it holds fixed on both sides and its
inspections (``releval.decision.inspections``); the run's ``figures`` for a later run's
over-time comparison: ``releval.decision.over_time``; ``also``: one such comparison dict per
``compare.also`` entry; ``training``, where the candidate was trained with several seeds
(evaluate's seeds.parquet): each seed's Δ with its bootstrap CI, the seeds' mean with its
CI and the training interval over seeds, ``releval.decision.seeds``) and
per_query_diff.parquet (query_id, measure, baseline, candidate, diff, stratum, weight) of
the primary pair. In recommendation mode with ``recommend.horizons_days``, comparison.json's
``horizons`` holds the primary pair compared at each further horizon (evaluate's
horizons.parquet) and the novelty flag (``releval.decision.horizons``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from releval import executor
from releval.artifacts import reads
from releval.data import contracts as S
from releval.data.visibility import judgments_of
from releval.decision.breakdown import Breakdown, breakdown, strata
from releval.decision.compare import canonical, compare
from releval.decision.conditions import Evidence, conditions_of, controlled_change
from releval.decision.family import compare_family
from releval.decision.horizons import by_horizon
from releval.decision.inspections import Settings, Subject, change_block
from releval.decision.missing import chosen, run_queries
from releval.decision.over_time import figures
from releval.decision.planning import detectability, fields
from releval.decision.seeds import training_variance
from releval.decision.stats import clusters_of
from releval.documents.source import Source, timed_queries
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.numbers import formatted
from releval.params import Params


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``compare.<field>`` (``releval.artifacts``)."""

    comparison: dict
    diff: pd.DataFrame


def in_family(p: Params) -> list[str]:
    """The systems of ``compare.systems`` ("all": every evaluated system), baseline first."""
    chosen = p.systems() if p.compare.systems == "all" else p.compare.systems
    return list(dict.fromkeys([p.compare.baseline, *chosen])) if chosen else []


def compared(p: Params) -> list[str]:
    """The systems of the primary pair, of every ``compare.also`` pair and of the family,
    once each."""
    pairs = [(p.compare.baseline, p.compare.candidate),
             *((a.baseline, a.candidate) for a in p.compare.also)]
    return list(dict.fromkeys([*(s for pair in pairs for s in pair), *in_family(p)]))


def direction(measure: str) -> str:
    """"higher" | "lower": the way ``measure`` improves (the measure registry's)."""
    return MEASURES[parse_measures(measure)[0].family].better


def family_block(p: Params, ev: Evidence) -> dict | None:
    """``compare.systems`` compared as one family per compared measure
    (``releval.decision.family``) over the query set ``compare.query_set`` chooses for all of
    them; None without ``compare.systems``. A system with no evaluated values (an empty run)
    is left out and named."""
    c = p.compare
    systems = in_family(p)
    if not systems:
        return None
    present = set(ev.per_query[S.SYSTEM])
    absent = [s for s in systems if s not in present]
    systems = [s for s in systems if s in present]
    measures, effect = canonical(c.measures, c.min_effect, p.evaluate.rel)
    judged = set(ev.qrels[S.QUERY_ID].astype(str))
    kept, query_set = chosen(c.query_set, judged, {
        s: run_queries(ev.runs[s]) if s in ev.runs else None for s in systems})
    per_query = ev.per_query[~ev.per_query[S.QUERY_ID].astype(str).isin(judged - kept)]
    results = [compare_family(
        per_query, systems, m, family=c.family, baseline=c.baseline, correction=c.correction,
        test=c.test, tie_band=c.tie_band, higher_is_better=direction(m) == "higher",
        min_effect=effect[m] if isinstance(effect, dict) else effect, alpha=c.alpha,
        resamples=c.resamples, seed=p.base.seed).to_dict() for m in measures]
    return {"systems": systems, "left_out_systems": absent, "family": c.family,
            "correction": c.correction, "test": c.test, "query_set": query_set,
            "measures": results}


def comparison(p: Params, baseline: str, candidate: str, change: str | None,
               measures: list[str], ev: Evidence, labels: pd.DataFrame,
               seeds: pd.DataFrame) -> tuple[dict, Breakdown]:
    """One comparison's dict (the primary and each ``compare.also`` alike: conditions checked
    for ``change``, paired rows, aggregates, composition, ``change`` block, the training
    variance over the candidate's ``seeds`` rows of evaluate's seeds.parquet, if any) and its
    breakdown."""
    c = p.compare
    measures, effect = canonical(measures, c.min_effect, p.evaluate.rel)
    judged = set(ev.qrels[S.QUERY_ID].astype(str))
    kept, query_set = chosen(c.query_set, judged, {
        s: run_queries(ev.runs[s]) if s in ev.runs else None for s in (baseline, candidate)})
    if judged - kept:  # the query set leaves judged queries out: every figure without them
        ev = replace(ev, per_query=ev.per_query[
            ~ev.per_query[S.QUERY_ID].astype(str).isin(judged - kept)])
    held = conditions_of(change, baseline, candidate, ev)
    diffs = controlled_change(change, held, baseline, candidate, ev, c.allow_uncontrolled)
    per_query, queries = ev.per_query, ev.queries
    side = {s: per_query.loc[per_query[S.SYSTEM] == s, [S.QUERY_ID, S.MEASURE, S.VALUE]]
            for s in (baseline, candidate)}
    clusters = clusters_of(queries, c.cluster)
    result = compare(side[baseline], side[candidate], measures, clusters=clusters,
                     allow_uncontrolled=True, min_effect=effect, resamples=c.resamples,
                     alpha=c.alpha, seed=p.base.seed, test=c.test, tie_band=c.tie_band)
    evaluated = per_query[S.QUERY_ID].unique()
    parts = breakdown(per_query, strata(evaluated, labels, queries, c.strata), ev.qrels,
                      measures, baseline, candidate)
    paired = [r for r in result.get("paired", []) if r["slice"] == S.ALL]
    if paired:
        plans = detectability(per_query, None, baseline, candidate, measures, effect,
                              alpha=c.alpha, target=p.plan.power, clusters=clusters,
                              seed=p.base.seed).set_index(S.MEASURE)
        paired = [r | fields(plans.loc[r[S.MEASURE]]) for r in paired]
    settings = Settings(measures, effect, top_k=c.top_k, strata=c.strata,
                        dimensions=tuple(p.slices.dimensions), min_n=p.slices.min_n,
                        alpha=c.alpha, resamples=c.resamples, seed=p.base.seed,
                        clusters=clusters, costs=p.health.cost)
    doc = {"baseline": baseline, "candidate": candidate, "controlled": not diffs,
           "differences": diffs, "conditions": held, "measures": measures,
           "note": "" if not diffs else "UNCONTROLLED: conditions differ (allow_uncontrolled)",
           "unit": result.get("unit"), "strata": c.strata, "query_set": query_set,
           "paired": paired,
           "unpaired": result.get("uncontrolled", []),
           "aggregates": parts.aggregates, "composition": parts.composition,
           "change": change_block(change, held, Subject(baseline, candidate, paired, ev,
                                                        labels, settings)),
           "training": training_variance(
               side[baseline], seeds[seeds[S.SYSTEM] == candidate], measures, queries=queries,
               cluster=c.cluster, resamples=c.resamples, alpha=c.alpha, seed=p.base.seed)
           if (seeds[S.SYSTEM] == candidate).any() else []}
    return doc, parts


@dataclass(frozen=True)
class Inputs:
    """runs: each system's run (the compared ones are read); pool: the pool's identity.json;
    split_report: the split's report; seeds, horizons: evaluate's seeds.parquet and
    horizons.parquet."""

    per_query: pd.DataFrame = reads("evaluate.per_query")
    labels: pd.DataFrame = reads("evaluate.labels")
    queries: pd.DataFrame = reads("raw.queries")
    documents: pd.DataFrame = reads("raw.documents")
    judgments: pd.DataFrame = reads("judgments.qrels")
    stats: dict[str, dict] = reads("candidates.stats", each="system")
    runs: dict[str, pd.DataFrame] = reads("candidates.run", each="system")
    pool: dict = reads("pool.identity")
    split: pd.DataFrame = reads("split.split")
    split_report: dict = reads("split.report")
    seeds: pd.DataFrame = reads("evaluate.seeds")
    horizons: pd.DataFrame | None = reads("evaluate.horizons")
    source: Source | None = reads("raw.source", optional=True)  # real query times or not


def run(p: Params, inputs: Inputs) -> Outputs:
    """comparison.json and per_query_diff.parquet (module docstring), the bootstrap's draws
    on the cluster under ``base.executor``."""
    with executor.of(p):
        return _compared(p, inputs)


def _compared(p: Params, inputs: Inputs) -> Outputs:
    per_query, labels, queries = inputs.per_query, inputs.labels, inputs.queries
    documents, judgments, stats = inputs.documents, inputs.judgments, inputs.stats
    pool, split = inputs.pool, inputs.split
    runs = {s: inputs.runs[s] for s in compared(p) if s in inputs.runs}
    split_report, seeds, horizons = inputs.split_report, inputs.seeds, inputs.horizons
    c = p.compare
    evaluated = per_query[S.QUERY_ID].unique()
    qrels, visible = judgments_of(judgments, queries, documents, evaluated)
    ev = Evidence(per_query, queries, documents, qrels[visible], stats, runs, pool, split,
                  split_report, p.judges_source, p.evaluate.rel,
                  query_times=timed_queries(inputs.source))
    doc, parts = comparison(p, c.baseline, c.candidate, c.change, c.measures, ev, labels,
                            seeds)
    also = [comparison(p, a.baseline, a.candidate, a.change, a.measures or c.measures, ev,
                       labels, seeds)[0] for a in c.also]
    doc |= {"figures": figures(parts.diff, c.baseline, c.candidate, c.strata,
                               resamples=c.resamples, alpha=c.alpha, seed=p.base.seed),
            "also": also, "family": family_block(p, ev)}
    if horizons is not None and not horizons.empty:
        measures, effect = canonical(c.measures, c.min_effect, p.evaluate.rel)
        doc["horizons"] = by_horizon(horizons, c.baseline, c.candidate, measures,
                                     clusters=clusters_of(queries, c.cluster),
                                     min_effect=effect, resamples=c.resamples, alpha=c.alpha,
                                     seed=p.base.seed)
    return Outputs(doc, parts.diff)


def _family_text(block: dict | None) -> str:
    """The one line's part for the family: each measure's groups."""
    if not block:
        return ""
    return "; " + "; ".join(f"{f['measure']} groups " + ", ".join(
        f"{r['system']} {r['group']}" for r in f["leaderboard"]) for f in block["measures"])


def _horizons_text(block: dict | None) -> str:
    """The one line's part for the further horizons: each horizon's Δ per measure, and the
    measures flagged as a novelty effect."""
    if not block:
        return ""
    at = "; ".join(f"at {days} days " + ", ".join(
        f"{r['measure']} {formatted(r['delta'], '+.4f')} ({r['verdict']})"
        for r in block["rows"] if r["horizon_days"] == days) for days in block["days"])
    flagged = [f["measure"] for f in block["novelty"] if f["novelty"]]
    return f"; {at}; novelty effect: {', '.join(flagged) or 'none'}"


def line(p: Params, result: Outputs) -> str:
    doc = result.comparison
    verdicts = ", ".join(f"{r['measure']} {formatted(r['mean_diff'], '+.4f')} ({r['verdict']})"
                         for r in doc["paired"])
    kind = doc["change"]["kind"]
    return (f"compare: {doc['candidate']} vs {doc['baseline']}"
            f"{f' ({kind})' if kind else ''}"
            f"{'' if doc['controlled'] else ' [UNCONTROLLED]'}: {verdicts}"
            + (f"; also {len(doc['also'])} comparison(s)" if doc["also"] else "")
            + _family_text(doc.get("family"))
            + _horizons_text(doc.get("horizons")))
