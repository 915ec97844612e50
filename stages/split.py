"""Stage ``split``: queries into train / validation / test, forward in time.

Outputs (data/split/): split.parquet (query_id, split) and split_report.json (cut points,
counts per split and tag, leakage findings, and the judgments that point nowhere as
prepare counted them).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from releval.params import Params
from releval.split import split_queries, split_report
from stages.common import guarded, params_of, parser, read_doc, write_json, write_parquet


def run(p: Params, queries: pd.DataFrame, documents: pd.DataFrame, judgments: pd.DataFrame,
        given: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    c = p.split
    split = split_queries(queries, c.method, cuts=c.cuts, quantiles=c.quantiles,
                          given=given if len(given) else None)
    return split.table, split_report(split, queries, judgments, documents)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--out", default="data/split")
    args = ap.parse_args()
    raw, out = Path(args.raw), Path(args.out)
    table, report = run(params_of(args), pd.read_parquet(raw / "queries.parquet"),
                        pd.read_parquet(raw / "documents.parquet"),
                        pd.read_parquet(raw / "judgments.parquet"),
                        pd.read_parquet(raw / "given_split.parquet"))
    write_parquet(out / "split.parquet", table)
    nowhere = read_doc(raw / "source.json").get("qrels_pointing_nowhere")
    write_json(out / "split_report.json", report | {"qrels_pointing_nowhere": nowhere})
    print("split: " + ", ".join(f"{k} {v}" for k, v in table["split"].value_counts().items()))


if __name__ == "__main__":
    guarded(main)
