"""Tiny documents, queries, run and qrels tables per the contracts, shared by the tests."""

from pathlib import Path

import pandas as pd

from releval.data import contracts as S

BEFORE, ISSUED, AFTER = "2024-01-01", "2024-06-01", "2024-09-01"


def doc(doc_id, text=None, title="", published=BEFORE, status="published", deleted=None,
        tenant="A", acl=()):
    return {S.DOC_ID: doc_id, S.TITLE: title,
            S.TEXT: f"text of {doc_id}" if text is None else text, S.SOURCE_ID: doc_id,
            S.PUBLISHED_AT: published, S.STATUS: status, S.DELETED_AT: deleted,
            S.TENANT: tenant, S.ACL: list(acl)}


def query(query_id, text="q", tenant="A", groups=("eng",), role="employee", issued=ISSUED):
    return {S.QUERY_ID: query_id, S.TEXT: text, S.ISSUED_AT: issued, S.USER_ID: "u1",
            S.TENANT: tenant, S.GROUPS: list(groups), S.ROLE: role, S.TAGS: [], S.WEIGHT: 1.0}


def documents(*rows) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=list(S.DOCUMENT_COLUMNS))
    for column in (S.PUBLISHED_AT, S.DELETED_AT):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame


def queries(*rows) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=list(S.QUERY_COLUMNS))
    frame[S.ISSUED_AT] = pd.to_datetime(frame[S.ISSUED_AT], utc=True)
    return frame


def frames(ranked: dict[str, list[str]], grades: dict[str, dict[str, int]]):
    """A run from ``{query: [doc, ...]}`` (best first) and qrels from ``{query: {doc: grade}}``."""
    run = pd.DataFrame([(q, d, i + 1) for q, docs in ranked.items() for i, d in enumerate(docs)],
                       columns=["query_id", "doc_id", "rank"])
    qrels = pd.DataFrame([(q, d, g) for q, gs in grades.items() for d, g in gs.items()],
                         columns=["query_id", "doc_id", "grade"])
    return run, qrels


SPLIT = pd.DataFrame({S.QUERY_ID: ["q1", "q2", "q3", "q4"],
                      S.SPLIT: ["train", "validation", "test", "test"]})
QRELS = pd.DataFrame({S.QUERY_ID: ["q2", "q3", "q3", "q4"], S.DOC_ID: ["d1", "d1", "d2", "d3"],
                      S.GRADE: [1, 2, 0, 1]})


def write_looks_inputs(root, split="data/split/split.parquet",
                       qrels="data/judgments/qrels.parquet", looks="reports/looks.json",
                       runs=("data/fused/hybrid/run.parquet",)) -> None:
    """What the gate stage counts looks from, under ``root``: ``SPLIT``, ``QRELS``, an empty
    looks file and a run file per path of ``runs``."""
    root = Path(root)
    for path in (split, qrels, looks, *runs):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
    SPLIT.to_parquet(root / split, index=False)
    QRELS.to_parquet(root / qrels, index=False)
    (root / looks).write_text('{"looks": [], "unrecorded": 0}\n')
    for path in runs:
        pd.DataFrame({S.QUERY_ID: ["q3"], S.DOC_ID: ["d1"]}).to_parquet(root / path)


def split_report(query_set: dict | None = None) -> dict:
    """A whole split_report.json (``releval.documents.split_report``) around ``query_set``,
    completed with an empty set's defaults where the test gave only some keys."""
    whole = None if query_set is None else {
        "splits": ["test"], "queries": 0, "weight": None, "untagged": 0,
        "source_given": False, "note": None, "sources": {}, "categories": {},
        "undercovered": []} | query_set
    return {"method": "given", "temporal": False, "rule": None, "cuts": None, "counts": {},
            "counts_by_tag": {},
            "leakage": {"shared_sources": {"count": 0, "test_queries_affected": 0,
                                           "sources": []},
                        "duplicate_texts": {"count": 0, "examples": []}},
            "qrels_pointing_nowhere": None, "query_set": whole}
