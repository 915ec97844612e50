"""How ``releval metrics`` prints an evaluation, one printer per ``--format``: a table, JSON
with the measures' definitions, or CSV (trec_eval's lines: ``releval.metrics.trec_eval``)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum

import pandas as pd
from rich.table import Table

from releval.cli.output import console, err
from releval.data import contracts as S
from releval.metrics.engine import Evaluation, missing, resolve
from releval.metrics.measures import MEASURES
from releval.report.formats import UNDEFINED, measure_value


class Format(StrEnum):
    table = "table"
    trec = "trec"
    json = "json"
    csv = "csv"


def note_counts(result: Evaluation) -> None:
    """The query counts on stderr, for the formats whose stdout is data."""
    undefined = int(result.summary["undefined"].max()) if len(result.summary) else 0
    c = result.counts
    err.print(f"queries evaluated: {c['queries_evaluated']}; in run but not in qrels "
              f"(ignored): {c['run_queries_not_in_qrels']}; undefined (no relevant "
              f"judgment): {undefined}; missing from the run (judged, scored 0): "
              f"{c['queries_missing']}", highlight=False)


def _print_table(result: Evaluation, *, per_query: bool, integer: set[str], **_) -> None:
    out = console()
    if per_query:
        wide = result.per_query.pivot(index=S.QUERY_ID, columns=S.MEASURE, values=S.VALUE)
        per_query_measures = result.summary[result.summary["level"] == "query"]
        wide = wide[list(per_query_measures[S.MEASURE])]
        grid = Table(title="per query (— = undefined)")
        grid.add_column("query_id")
        for name in wide.columns:
            grid.add_column(name, justify="right")
        for qid, row in wide.iterrows():
            grid.add_row(str(qid), *(UNDEFINED if pd.isna(v) else measure_value(v, k in integer)
                                     for k, v in row.items()))
        out.print(grid)
    table = Table(title="summary (mean over n queries; counts are sums)")
    for col in ("measure", "value", "n", "undefined", "empty"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for row in result.summary.itertuples(index=False):
        shown = ("n/a" if not row.applicable else UNDEFINED if pd.isna(row.value) else
                 measure_value(row.value, row.measure in integer))
        table.add_row(row.measure, shown, str(row.n), str(row.undefined), str(row.empty))
    out.print(table)
    for measure in result.summary.loc[~result.summary["applicable"].astype(bool), "measure"]:
        out.print(f"{measure}: n/a = not applicable: {missing(measure)}",
                  highlight=False)
    c = result.counts
    out.print(f"queries evaluated: {c['queries_evaluated']} · in run: {c['queries_in_run']} · "
              f"in run but not in qrels (ignored): {c['run_queries_not_in_qrels']}\n"
              "undefined = no judged relevant document (excluded, never scored; for "
              "HardNeg@k: no judgment at all); empty = relevant documents but no ranking "
              "(scored 0)", highlight=False)


def _print_json(result: Evaluation, *, per_query: bool, **_) -> None:
    doc = {
        "measures": {r.measure: {"value": None if pd.isna(r.value) else float(r.value),
                                 "n": int(r.n), "undefined": int(r.undefined),
                                 "empty": int(r.empty)}
                     for r in result.summary.itertuples(index=False)},
        "counts": result.counts,
        "definitions": {m: MEASURES[resolve([m])[0].family].definition
                        for m in result.summary[S.MEASURE]},
    }
    if per_query:
        pq = result.per_query
        doc["per_query"] = [{"query_id": q, "measure": m, "value": None if pd.isna(v) else v}
                            for q, m, v in zip(pq[S.QUERY_ID], pq[S.MEASURE], pq[S.VALUE],
                                               strict=True)]
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")


def _print_csv(result: Evaluation, *, per_query: bool, **_) -> None:
    frame = result.per_query if per_query else result.summary
    frame.to_csv(sys.stdout, index=False)


PRINTERS = {Format.table: _print_table, Format.json: _print_json, Format.csv: _print_csv}
# Format.trec: trec_eval's own evaluation and lines (``releval.metrics.trec_eval``)
