"""Stage ``slices``: compare.candidate against compare.baseline, paired, on every slice.

Inputs: data/evaluate/per_query.parquet (system, query_id, measure, value) and
data/evaluate/labels.parquet (query_id, dimension, slice); data/raw/queries.parquet only for
user_id when ``compare.cluster`` is "user_id". Outputs (data/slices/): slices.parquet (the
``releval.slices.slice_table`` over every system of per_query and ``compare.measures``) and
slices.json (baseline, candidate, Holm family size, counts of (slice, measure) rows tested
and too small, distinct slices, and the rows whose verdict is improved/regressed with
p_holm ≤ alpha).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.errors import InputError
from releval.params import Params
from releval.slices import DIMENSION, SLICE, slice_table
from stages.common import (
    compared,
    guarded,
    params_of,
    parser,
    read_table,
    write_json,
    write_parquet,
)

CHANGED = ("improved", "regressed")


def _clusters(p: Params, queries: pd.DataFrame | None) -> pd.Series | None:
    if p.compare.cluster is None:
        return None
    if queries is None or not {S.QUERY_ID, p.compare.cluster} <= set(queries.columns):
        raise InputError(f"compare.cluster {p.compare.cluster!r} needs queries with query_id "
                         f"and {p.compare.cluster}", "queries")
    return queries.set_index(S.QUERY_ID)[p.compare.cluster]


def run(p: Params, per_query: pd.DataFrame, labels: pd.DataFrame,
        queries: pd.DataFrame | None) -> tuple[pd.DataFrame, dict]:
    """The slice table and its summary (see the module docstring)."""
    c = p.compare
    measures, effect = compared(p)
    systems = [str(s) for s in pd.unique(per_query[S.SYSTEM])] if S.SYSTEM in per_query else []
    labels = labels[labels[DIMENSION].isin(p.slices.dimensions)]
    table = slice_table(per_query, labels, systems, measures, c.baseline, c.candidate,
                        min_n=p.slices.min_n, min_effect=effect, resamples=c.resamples,
                        alpha=c.alpha, seed=p.base.seed, clusters=_clusters(p, queries))
    tested = ~table["too_small"]
    changed = table[tested & table["verdict"].isin(CHANGED) & (table["p_holm"] <= c.alpha)]
    report = {
        "baseline": c.baseline,
        "candidate": c.candidate,
        "measures": measures,
        "alpha": c.alpha,
        "unit": "cluster" if c.cluster else "query",
        "family": int(tested.sum()),
        "slices": int(len(table[[DIMENSION, SLICE]].drop_duplicates())),
        "tested": int(tested.sum()),
        "too_small": int((~tested).sum()),
        "changed": [{DIMENSION: r[DIMENSION], SLICE: r[SLICE], S.MEASURE: r[S.MEASURE],
                     "verdict": r["verdict"], "n": int(r["n"]),
                     "mean_diff": float(r["mean_diff"]), "p_holm": float(r["p_holm"])}
                    for r in changed.to_dict("records")],
    }
    return table, report


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--evaluate", default="data/evaluate")
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--out", default="data/slices")
    args = ap.parse_args()
    p = params_of(args)
    evaluated, out = Path(args.evaluate), Path(args.out)
    inputs = {name: evaluated / f"{name}.parquet" for name in ("per_query", "labels")}
    if p.compare.cluster:
        inputs["queries"] = Path(args.raw) / "queries.parquet"
    frames = {name: read_table(path) for name, path in inputs.items()}
    table, report = run(p, frames["per_query"], frames["labels"], frames.get("queries"))
    write_parquet(out / "slices.parquet", table)
    write_json(out / "slices.json", report)
    print(f"slices: {report['baseline']} vs {report['candidate']}: {report['tested']} tested, "
          f"{report['too_small']} too small, {len(report['changed'])} changed after Holm")


if __name__ == "__main__":
    guarded(main)
