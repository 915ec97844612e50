"""A tiny pool of 40 pairs (10 queries × 4 documents, pool "p1") and hidden grades for every
other pair, shared by the judging and the simulated-judges tests."""

import pandas as pd

from releval.data import contracts as S

N_PAIRS = 40


def pool_table() -> pd.DataFrame:
    return pd.DataFrame({
        "pool_id": "p1", S.QUERY_ID: [f"q{i // 4}" for i in range(N_PAIRS)],
        S.DOC_ID: [f"d{i}" for i in range(N_PAIRS)],
        "blind_id": [f"b{i:03d}" for i in range(N_PAIRS)], "systems": [["bm25"]] * N_PAIRS,
        "min_rank": 1, "round": 1})


def hidden_grades(pool: pd.DataFrame) -> pd.DataFrame:
    return pool.loc[::2, [S.QUERY_ID, S.DOC_ID]].assign(**{S.GRADE: [0, 1, 2, 3] * 5})


def judgments(rows) -> pd.DataFrame:
    """Raw judgments from (query_id, doc_id, annotator, grade) tuples."""
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.ANNOTATOR, S.GRADE])
