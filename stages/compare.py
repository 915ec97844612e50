"""Stage ``compare``: the candidate against the baseline, under controlled conditions.

Before comparing, each side's conditions (``releval.compare.CONDITIONS``) are taken from
the evaluation: the evaluated queries (count and digest), the qrels revision (digest of the
judgments the queries may see), the candidate budget (depth), the time window (first and
last query time) with the corpus snapshot (digest), and whether the visibility rule was
enforced by the route. Any difference refuses the comparison with the differences listed,
unless ``compare.allow_uncontrolled``: then every output says ``controlled: false``.

Outputs (data/compare/): comparison.json (conditions; paired rows per measure: mean, median,
W/T/L, bootstrap CI, sign-flip p, Holm over the measures, verdict against min_effect;
macro / micro / traffic-weighted / equal-slice aggregates over ``compare.strata``; the
rate/mix composition check) and per_query_diff.parquet (query_id, measure, baseline,
candidate, diff, stratum, weight).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from releval import schema as S
from releval.aggregation import aggregates, decompose
from releval.compare import ALL, Uncontrolled, compare, condition_differences
from releval.metrics import resolve
from releval.params import Params
from releval.pooling import corpus_digest
from releval.visibility import judgments_of
from stages.common import (
    compared,
    guarded,
    params_of,
    parser,
    read_table,
    system_stats,
    write_json,
    write_parquet,
)

ENFORCING_ROUTES = ("bm25", "dense")  # routes that filter their whole window by visibility
STRATUM = "stratum"


def _digest(frame: pd.DataFrame) -> str:
    rows = pd.util.hash_pandas_object(frame.reset_index(drop=True), index=False)
    return hashlib.sha256(rows.to_numpy().tobytes()).hexdigest()[:12]


def _enforced(system: str, stats: dict[str, dict]) -> bool:
    """The route filtered its window by the visibility rule (a fused one: both sources did)."""
    s = stats[system]
    if s["route"] == "hybrid":
        return all(_enforced(source, stats) for source in s["sources"])
    return s["route"] in ENFORCING_ROUTES


def conditions(system: str, per_query: pd.DataFrame, queries: pd.DataFrame, qrels: str,
               corpus: str, stats: dict[str, dict]) -> dict:
    """What must be held fixed for ``system``'s evaluation, as comparable plain values."""
    ids = np.sort(per_query.loc[per_query[S.SYSTEM] == system, S.QUERY_ID].unique())
    times = pd.to_datetime(queries.loc[queries[S.QUERY_ID].isin(ids), S.ISSUED_AT], utc=True)
    window = f"{times.min():%Y-%m-%d %H:%M} … {times.max():%Y-%m-%d %H:%M}" if len(ids) else "—"
    forbidden = stats[system].get("visibility", {}).get("forbidden")
    return {
        "queries": f"{len(ids)} queries ({_digest(pd.DataFrame({S.QUERY_ID: ids}))})",
        "qrels": qrels,
        "budget": stats[system]["depth"],
        "time_window": f"{window}; corpus {corpus}",
        "visibility": "enforced by the route" if _enforced(system, stats) else
        "not enforced" + (f" ({forbidden} forbidden pairs returned)" if forbidden else ""),
    }


def _values(per_query: pd.DataFrame, system: str, measure: str, frame: pd.DataFrame):
    rows = per_query.loc[(per_query[S.SYSTEM] == system) & (per_query[S.MEASURE] == measure),
                         [S.QUERY_ID, S.VALUE]]
    return frame.merge(rows, on=S.QUERY_ID, how="inner")


def run(p: Params, per_query: pd.DataFrame, labels: pd.DataFrame, queries: pd.DataFrame,
        documents: pd.DataFrame, judgments: pd.DataFrame,
        stats: dict[str, dict]) -> tuple[dict, pd.DataFrame]:
    c = p.compare
    sides = (c.baseline, c.candidate)
    measures, effect = compared(p)
    evaluated = per_query[S.QUERY_ID].unique()
    qrels, visible = judgments_of(judgments, queries, documents, evaluated)
    qrels = qrels[visible]
    revision = _digest(qrels[[S.QUERY_ID, S.DOC_ID, S.GRADE]].sort_values(
        [S.QUERY_ID, S.DOC_ID]))
    corpus = corpus_digest(documents)[:12]
    conds = {s: conditions(s, per_query, queries, revision, corpus, stats) for s in sides}
    diffs = condition_differences(*(conds[s] for s in sides))
    if diffs and not c.allow_uncontrolled:
        raise Uncontrolled(f"{c.candidate} vs {c.baseline} is not a controlled comparison, "
                           f"refused: {'; '.join(diffs)}. Set compare.allow_uncontrolled: true "
                           "to compare anyway (outputs labelled uncontrolled)", "compare")

    strata = labels.loc[labels["dimension"] == c.strata].set_index(S.QUERY_ID)["slice"]
    frame = pd.DataFrame({S.QUERY_ID: evaluated})
    frame = frame.assign(**{
        STRATUM: frame[S.QUERY_ID].map(strata).fillna("unlabelled").astype(str),
        S.WEIGHT: frame[S.QUERY_ID].map(queries.set_index(S.QUERY_ID)[S.WEIGHT]).astype(float)})
    clusters = queries.set_index(S.QUERY_ID)[S.USER_ID] if c.cluster else None
    side = {s: per_query.loc[per_query[S.SYSTEM] == s, [S.QUERY_ID, S.MEASURE, S.VALUE]]
            for s in sides}
    result = compare(side[c.baseline], side[c.candidate], measures, clusters=clusters,
                     allow_uncontrolled=True, min_effect=effect, resamples=c.resamples,
                     alpha=c.alpha, seed=p.base.seed)

    relevant = qrels[qrels[S.GRADE] >= 1]
    per_measure, composition, diff_rows = {s: {} for s in sides}, {}, []
    for m in resolve(measures):
        n_rel = relevant.loc[relevant[S.GRADE] >= m.rel].groupby(S.QUERY_ID).size()
        values = {}
        for s in sides:
            v = _values(per_query, s, m.name, frame)
            v = v.assign(relevant_retrieved=v[S.VALUE] * v[S.QUERY_ID].map(n_rel).fillna(0),
                         relevant=v[S.QUERY_ID].map(n_rel).fillna(0))
            values[s] = v
            micro = ("relevant_retrieved", "relevant") if m.family == "R" else None
            per_measure[s][m.name] = aggregates(v, slice_col=STRATUM, micro=micro)
        if all(len(v) for v in values.values()):
            composition[m.name] = decompose(*(values[s] for s in sides),
                                            slice_col=STRATUM).to_dict()
        merged = values[c.baseline].merge(values[c.candidate][[S.QUERY_ID, S.VALUE]],
                                          on=S.QUERY_ID, how="outer", suffixes=("_b", "_c"))
        diff_rows.append(pd.DataFrame({
            S.QUERY_ID: merged[S.QUERY_ID], S.MEASURE: m.name,
            "baseline": merged[f"{S.VALUE}_b"], "candidate": merged[f"{S.VALUE}_c"],
            "diff": merged[f"{S.VALUE}_c"] - merged[f"{S.VALUE}_b"],
            STRATUM: merged[STRATUM], S.WEIGHT: merged[S.WEIGHT]}))
    doc = {"baseline": c.baseline, "candidate": c.candidate, "controlled": not diffs,
           "differences": diffs, "conditions": conds, "measures": measures,
           "note": "" if not diffs else "UNCONTROLLED: conditions differ (allow_uncontrolled)",
           "unit": result.get("unit"), "strata": c.strata,
           "paired": [r for r in result.get("paired", []) if r["slice"] == ALL],
           "unpaired": result.get("uncontrolled", []),
           "aggregates": per_measure, "composition": composition}
    return doc, pd.concat(diff_rows, ignore_index=True)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--qrels", default="data/judgments/qrels.parquet")
    ap.add_argument("--evaluate", default="data/evaluate")
    ap.add_argument("--candidates", default="data/candidates")
    ap.add_argument("--fused", default="data/fused")
    ap.add_argument("--out", default="data/compare")
    args = ap.parse_args()
    p = params_of(args)
    raw, evaluated, out = Path(args.raw), Path(args.evaluate), Path(args.out)
    stats = system_stats(p, args.candidates, args.fused)
    doc, diff = run(p, read_table(evaluated / "per_query.parquet"),
                    read_table(evaluated / "labels.parquet"),
                    read_table(raw / "queries.parquet"),
                    read_table(raw / "documents.parquet"), read_table(args.qrels),
                    stats)
    write_json(out / "comparison.json", doc)
    write_parquet(out / "per_query_diff.parquet", diff)
    verdicts = ", ".join(f"{r['measure']} {r['mean_diff']:+.4f} ({r['verdict']})"
                         for r in doc["paired"])
    print(f"compare: {doc['candidate']} vs {doc['baseline']}"
          f"{'' if doc['controlled'] else ' [UNCONTROLLED]'}: {verdicts}")


if __name__ == "__main__":
    guarded(main)
