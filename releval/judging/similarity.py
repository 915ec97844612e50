"""The built-in automatic judge's evidence: each (query, document) pair's similarity under the
dense route's encoder.

similarity(q, d) = ⟨e(q), e(d)⟩, the inner product of the query's and the document's vectors
(the cosine when the system normalises), embedded exactly as the dense system embeds them
(its model, fields, max_length and normalisation) through its content-keyed embedding cache,
so a pipeline that ran the dense route encodes nothing again.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.params.systems import DenseSystem
from releval.retrieval.dense import DenseRetriever


def dense_system(systems: dict) -> tuple[str, DenseSystem]:
    """The first ``route: dense`` entry of ``candidates.systems`` (name, settings): the
    built-in judge's encoder; InputError when there is none."""
    for name, config in systems.items():
        if config.route == "dense":
            return name, config
    raise InputError("judgments.automatic.judge dense needs a dense system in "
                     "candidates.systems (its encoder is the judge's)", "params.yaml",
                     "judgments.automatic")


def pair_similarity(config: DenseSystem, documents: pd.DataFrame, queries: pd.DataFrame,
                    pairs: pd.DataFrame) -> np.ndarray:
    """similarity(q, d) of each row of ``pairs`` (query_id, doc_id) as float64; NaN where the
    query or the document is not in its table."""
    settings = config.model_dump()
    settings.pop("route")
    retriever = DenseRetriever(**settings)
    docs = documents.drop_duplicates(S.DOC_ID)
    qs = queries.drop_duplicates(S.QUERY_ID)
    d_at = pd.Index(docs[S.DOC_ID].astype(str)).get_indexer(pairs[S.DOC_ID].astype(str))
    q_at = pd.Index(qs[S.QUERY_ID].astype(str)).get_indexer(pairs[S.QUERY_ID].astype(str))
    known = (d_at >= 0) & (q_at >= 0)
    out = np.full(len(pairs), np.nan)
    if not known.any():
        return out
    d_used, d_rows = np.unique(d_at[known], return_inverse=True)
    q_used, q_rows = np.unique(q_at[known], return_inverse=True)
    d_vec, _ = retriever.document_vectors(docs.iloc[d_used])
    q_vec, _ = retriever.query_vectors(qs.iloc[q_used])
    out[known] = np.einsum("ij,ij->i", q_vec[q_rows].astype(np.float64),
                           d_vec[d_rows].astype(np.float64))
    return out
