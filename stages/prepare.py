"""Stage ``prepare``: documents, queries and judgments from the demo generator or real data.

Outputs (data/raw/): documents.parquet, queries.parquet, judgments.parquet (query_id,
doc_id, grade), given_split.parquet (a dataset's own split; empty when it has none),
must_not_return.parquet (query_id, doc_id, reason: pairs no system may return; demo: the
hidden answers of authz_boundary queries, tables: the folder's must_not_return.parquet if
any, BEIR: none; always written, empty with the contract's columns when there are none),
answers.parquet (query_id, source_id, doc_id: which unit holds each query's answer, known
only to the demo generator; empty for real data, so the chunk layer of failure analysis is
reported as unknown there), external_run.trec (the demo's simulated team run; empty for
real data) and source.json (where the data and the qrels came from).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import RealData, dangling, read_beir, read_tables
from releval.data.readers import write_trec_run
from releval.demo.answers import answer_map
from releval.demo.generator import generate
from releval.demo.team_run import simulate_external_run
from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import INPUT_DIR, pinned
from stages.common import guarded, params_of, parser, write_json, write_parquet


@dataclass(frozen=True)
class Outputs:
    """documents → documents.parquet, queries → queries.parquet, judgments →
    judgments.parquet, given_split → given_split.parquet, answers → answers.parquet,
    must_not_return → must_not_return.parquet, external_run → external_run.trec (query_id,
    doc_id, score[, system]), source → source.json (provenance, then the row counts)."""

    documents: pd.DataFrame
    queries: pd.DataFrame
    judgments: pd.DataFrame
    given_split: pd.DataFrame
    answers: pd.DataFrame
    must_not_return: pd.DataFrame
    external_run: pd.DataFrame
    source: dict


NO_SPLIT = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str), S.SPLIT: pd.Series([], dtype=str)})
NO_RUN = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str), S.DOC_ID: pd.Series([], dtype=str),
                       S.SCORE: pd.Series([], dtype=float)})
NO_ANSWERS = pd.DataFrame({c: pd.Series([], dtype=str) for c in S.ANSWER_COLUMNS})


def _demo(p: Params, inputs: Path) -> Outputs:
    c = p.prepare
    data = generate(n_docs=c.n_docs, n_queries=c.n_queries, seed=p.base.seed, start=c.start,
                    months=c.months, tenants=c.tenants)
    return Outputs(data.documents, data.queries, data.ground_truth, NO_SPLIT,
                   answer_map(data.ground_truth, data.documents), data.must_not_return,
                   simulate_external_run(data, p.base.seed, p.candidates.depth),
                   {"source": "demo generator", "seed": p.base.seed,
                    "qrels": "generator ground truth",
                    "external_run": "simulated team system prod_v2 (demo only)"})


def _real(reader: Callable[[Path], RealData], label: str) -> Callable[[Params, Path], Outputs]:
    def load(p: Params, inputs: Path) -> Outputs:
        if not p.prepare.path:
            raise InputError(f"prepare.source={p.prepare.source} needs prepare.path", "params")
        path = pinned(p, "prepare.path", inputs)
        data = reader(path)
        points = dangling(data, p.prepare.max_unknown_docs, str(path))
        return Outputs(data.documents, data.queries, data.qrels, data.splits, NO_ANSWERS,
                       data.must_not_return, NO_RUN,
                       {"source": f"{label} {p.prepare.path}", "qrels": f"{label} qrels",
                        "query_times": data.has_query_times, "qrels_pointing_nowhere": points})
    return load


SOURCES = {"demo": _demo, "beir": _real(read_beir, "BEIR"), "tables": _real(read_tables, "tables")}


def run(p: Params, inputs: Path = INPUT_DIR) -> Outputs:
    """The prepared tables of ``prepare.source``, their source.json counting their rows; real
    data is read from its pinned copy under ``inputs``."""
    tables = SOURCES[p.prepare.source](p, inputs)
    return replace(tables, source=tables.source | {
        "documents": len(tables.documents), "queries": len(tables.queries),
        "judgments": len(tables.judgments), "must_not_return": len(tables.must_not_return)})


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/raw")
    args = ap.parse_args()
    out = Path(args.out)
    result = run(params_of(args))
    write_parquet(out / "documents.parquet", result.documents)
    write_parquet(out / "queries.parquet", result.queries)
    write_parquet(out / "judgments.parquet", result.judgments)
    write_parquet(out / "given_split.parquet", result.given_split)
    write_parquet(out / "answers.parquet", result.answers)
    write_parquet(out / "must_not_return.parquet", result.must_not_return)
    write_trec_run(out / "external_run.trec", result.external_run)
    write_json(out / "source.json", result.source)
    nowhere = result.source.get("qrels_pointing_nowhere") or {}
    note = "".join(f", {nowhere[k]:,} judgments of {what}" for k, what in (
        ("unknown_documents", "documents not in the corpus"),
        ("unknown_queries", "queries not in the queries file (not evaluated)")) if nowhere.get(k))
    print(f"prepare: {len(result.documents):,} documents, {len(result.queries):,} queries, "
          f"{len(result.judgments):,} judgments ({result.source['source']}){note}")


if __name__ == "__main__":
    guarded(main)
