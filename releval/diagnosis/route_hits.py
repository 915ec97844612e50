"""Route diagnostics: which route found each relevant document.

For two systems a and b and every judged-relevant (query, document) pair, the class is
``a-only``, ``b-only``, ``both`` or ``neither`` according to whose candidate window holds
the document (anywhere in the window). Kept per pair for slicing and failure analysis.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S

CLASS = "route_hit"


def route_hits(a: str, run_a: pd.DataFrame, b: str, run_b: pd.DataFrame,
               qrels: pd.DataFrame, rel: int = 1) -> pd.DataFrame:
    """(query_id, doc_id, grade, rank_<a>, rank_<b>, route_hit) for qrels rows with grade ≥ rel;
    a rank is NaN where that window does not hold the document."""
    pairs = qrels.loc[qrels[S.GRADE] >= rel, [S.QUERY_ID, S.DOC_ID, S.GRADE]]
    for name, run in ((a, run_a), (b, run_b)):
        ranks = run[[S.QUERY_ID, S.DOC_ID, S.RANK]].rename(columns={S.RANK: f"rank_{name}"})
        pairs = pairs.merge(ranks, on=[S.QUERY_ID, S.DOC_ID], how="left")
    in_a, in_b = pairs[f"rank_{a}"].notna(), pairs[f"rank_{b}"].notna()
    labels = np.select([in_a & in_b, in_a, in_b], ["both", f"{a}-only", f"{b}-only"],
                       default="neither")
    return pairs.assign(**{CLASS: labels}).reset_index(drop=True)


def hit_counts(hits: pd.DataFrame) -> dict[str, int]:
    """Pairs per class."""
    return {str(k): int(v) for k, v in hits[CLASS].value_counts().sort_index().items()}
