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

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.adapters import dangling, read_beir, read_tables
from releval.demo_data import generate, simulate_external_run
from releval.errors import InputError
from releval.failures import answer_map
from releval.inputs import INPUT_DIR, pinned
from releval.params import Params
from releval.readers import write_trec_run
from stages.common import guarded, params_of, parser, write_json, write_parquet


@dataclass(frozen=True)
class Prepared:
    documents: pd.DataFrame
    queries: pd.DataFrame
    judgments: pd.DataFrame
    given_split: pd.DataFrame
    source: dict
    external_run: pd.DataFrame
    must_not_return: pd.DataFrame
    answers: pd.DataFrame  # query_id, source_id, doc_id: the unit holding the answer


NO_ANSWERS = pd.DataFrame({c: pd.Series([], dtype=str)
                           for c in (S.QUERY_ID, S.SOURCE_ID, S.DOC_ID)})


NO_SPLIT = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str), S.SPLIT: pd.Series([], dtype=str)})
NO_RUN = pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str), S.DOC_ID: pd.Series([], dtype=str),
                       S.SCORE: pd.Series([], dtype=float)})


def _demo(p: Params, inputs: Path) -> Prepared:
    c = p.prepare
    data = generate(n_docs=c.n_docs, n_queries=c.n_queries, seed=p.base.seed, start=c.start,
                    months=c.months, tenants=c.tenants)
    return Prepared(data.documents, data.queries, data.ground_truth, NO_SPLIT,
                    {"source": "demo generator", "seed": p.base.seed,
                     "qrels": "generator ground truth",
                     "external_run": "simulated team system prod_v2 (demo only)"},
                    simulate_external_run(data, p.base.seed, p.candidates.depth),
                    data.must_not_return, answer_map(data.ground_truth, data.documents))



def _real(reader, label: str):
    def load(p: Params, inputs: Path) -> Prepared:
        if not p.prepare.path:
            raise InputError(f"prepare.source={p.prepare.source} needs prepare.path", "params")
        path = pinned(p, "prepare.path", inputs)
        data = reader(path)
        points = dangling(data, p.prepare.max_unknown_docs, str(path))
        given = getattr(data, "splits", None)
        return Prepared(data.documents, data.queries, data.qrels,
                        NO_SPLIT if given is None else given,
                        {"source": f"{label} {p.prepare.path}", "qrels": f"{label} qrels",
                         "query_times": bool(getattr(data, "has_query_times", True)),
                         "qrels_pointing_nowhere": points}, NO_RUN,
                        data.must_not_return, NO_ANSWERS)
    return load


SOURCES = {"demo": _demo, "beir": _real(read_beir, "BEIR"), "tables": _real(read_tables, "tables")}


def run(p: Params, inputs: Path = INPUT_DIR) -> Prepared:
    """The prepared tables; real data is read from its pinned copy under ``inputs``."""
    return SOURCES[p.prepare.source](p, inputs)


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/raw")
    args = ap.parse_args()
    out = Path(args.out)
    prepared = run(params_of(args))
    write_parquet(out / "documents.parquet", prepared.documents)
    write_parquet(out / "queries.parquet", prepared.queries)
    write_parquet(out / "judgments.parquet", prepared.judgments)
    write_parquet(out / "given_split.parquet", prepared.given_split)
    write_parquet(out / "answers.parquet", prepared.answers)
    write_parquet(out / "must_not_return.parquet", prepared.must_not_return)
    write_trec_run(out / "external_run.trec", prepared.external_run)
    write_json(out / "source.json", prepared.source | {
        "documents": len(prepared.documents), "queries": len(prepared.queries),
        "judgments": len(prepared.judgments), "must_not_return": len(prepared.must_not_return)})
    nowhere = prepared.source.get("qrels_pointing_nowhere") or {}
    note = "".join(f", {nowhere[k]:,} judgments of {what}" for k, what in (
        ("unknown_documents", "documents not in the corpus"),
        ("unknown_queries", "queries not in the queries file (not evaluated)")) if nowhere.get(k))
    print(f"prepare: {len(prepared.documents):,} documents, {len(prepared.queries):,} queries, "
          f"{len(prepared.judgments):,} judgments ({prepared.source['source']}){note}")


if __name__ == "__main__":
    guarded(main)
