"""The demo's answer map, for the failure analysis's chunk check."""

from __future__ import annotations

import pandas as pd

from releval.data import contracts as S


def answer_map(qrels: pd.DataFrame, documents: pd.DataFrame, grade: int = 3) -> pd.DataFrame:
    """The answer map for the chunk check from judgments made while every chunk existed (the
    demo's ground truth: grade 3 = the chunk holding the answer): (query_id, source_id,
    doc_id) for each qrels row of ``grade`` whose document is in ``documents``."""
    rows = qrels.loc[pd.to_numeric(qrels[S.GRADE], errors="coerce") == grade,
                     [S.QUERY_ID, S.DOC_ID]].astype(str)
    sources = pd.DataFrame({S.DOC_ID: documents[S.DOC_ID].astype(str),
                            S.SOURCE_ID: documents[S.SOURCE_ID].astype(str)}).drop_duplicates(
        S.DOC_ID)
    return rows.merge(sources, on=S.DOC_ID).reset_index(drop=True)[list(S.ANSWER_COLUMNS)]
