"""Stage ``split``: queries into train / validation / test, forward in time.

Outputs (data/split/): split.parquet (query_id, split) and split_report.json (cut points,
counts per split and tag, leakage findings, and the judgments that point nowhere as
prepare counted them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.data import contracts as S
from releval.data.split import split_queries, split_report
from releval.params import Params
from stages.common import (
    guarded,
    params_of,
    parser,
    read_doc,
    read_table,
    write_json,
    write_parquet,
)


@dataclass(frozen=True)
class Outputs:
    """split → split.parquet, report → split_report.json."""

    split: pd.DataFrame
    report: dict


def run(p: Params, queries: pd.DataFrame, documents: pd.DataFrame, judgments: pd.DataFrame,
        given: pd.DataFrame, source: dict) -> Outputs:
    """Split the queries by ``split.method``; ``given`` is the dataset's own split (empty:
    none), ``source`` prepare's source.json, whose count of judgments pointing nowhere the
    report repeats."""
    c = p.split
    split = split_queries(queries, c.method, cuts=c.cuts, quantiles=c.quantiles,
                          given=given if len(given) else None)
    report = split_report(split, queries, judgments, documents)
    return Outputs(split.table,
                   report | {"qrels_pointing_nowhere": source.get("qrels_pointing_nowhere")})


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--raw", default="data/raw")
    ap.add_argument("--out", default="data/split")
    args = ap.parse_args()
    raw, out = Path(args.raw), Path(args.out)
    result = run(params_of(args), read_table(raw / "queries.parquet"),
                 read_table(raw / "documents.parquet"), read_table(raw / "judgments.parquet"),
                 read_table(raw / "given_split.parquet"), read_doc(raw / "source.json"))
    write_parquet(out / "split.parquet", result.split)
    write_json(out / "split_report.json", result.report)
    print("split: " + ", ".join(f"{k} {v}"
                                for k, v in result.split[S.SPLIT].value_counts().items()))


if __name__ == "__main__":
    guarded(main)
