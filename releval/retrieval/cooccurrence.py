"""The co-occurrence route: items bought by the same users as the user's own items.

At a query's cut t, X is the users × items binary matrix of ``History.fitting(t)`` (user u
bought item i before t; held-out users are not in it), C = XᵀX with its diagonal zeroed
(C_ij: users who bought both i and j) and n_i the users who bought i. ``similarity``:

- count:   sim(j, i) = C_ji
- cosine:  sim(j, i) = C_ji / sqrt(n_j · n_i)
- jaccard: sim(j, i) = C_ji / (n_j + n_i − C_ji)

score(u, i) = Σ_{j ∈ profile(u)} sim(j, i) over the distinct items of the user's own
label-1 interactions before t (``History.profile``: a held-out user is served from its own
history though absent from X). A user with no profile gets an empty window, and so does a
user whose items co-occur with nothing it may see. Scores are a sparse product per batch
(the similarity matrix is held dense when the catalogue's items² fit in ``MAX_CELLS``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from releval.data import contracts as S
from releval.errors import InputError
from releval.retrieval.base import MAX_CELLS, HistoryRetriever, profile_matrix

SIMILARITIES = ("count", "cosine", "jaccard")


def _similarity(c: np.ndarray, n_j: np.ndarray, n_i: np.ndarray, kind: str) -> np.ndarray:
    if kind == "count":
        return c
    if kind == "cosine":
        return c / np.sqrt(n_j * n_i)
    return c / (n_j + n_i - c)


class CooccurrenceRetriever(HistoryRetriever):
    """Item-to-item co-occurrence over users' purchases; see the module docstring."""

    route = "cooccurrence"

    def __init__(self, similarity: str = "cosine"):
        if similarity not in SIMILARITIES:
            raise InputError(f"similarity must be one of {', '.join(SIMILARITIES)}, got "
                             f"{similarity!r}", "cooccurrence")
        self.similarity = similarity

    def fit(self, fitting: pd.DataFrame, cut: pd.Timestamp):
        """The (items × items) similarity matrix at ``cut`` (dense when small enough)."""
        n_docs = len(self._doc_index)
        users = pd.factorize(fitting[S.USER_ID])[0]
        cols = self._doc_index.get_indexer(fitting[S.ITEM_ID])
        keep = cols >= 0
        x = sp.csr_matrix((np.ones(int(keep.sum()), np.float64), (users[keep], cols[keep])),
                          shape=(users.max(initial=-1) + 1, n_docs))
        x.data[:] = 1.0  # bought at all, however often
        c = (x.T @ x).tocoo()
        bought = np.asarray(x.sum(axis=0)).ravel()
        off = c.row != c.col
        j, i, v = c.row[off], c.col[off], c.data[off]
        sim = sp.csr_matrix((_similarity(v, bought[j], bought[i], self.similarity)
                             .astype(np.float32), (j, i)), shape=(n_docs, n_docs))
        return sim.toarray() if n_docs * n_docs <= MAX_CELLS else sim

    def score(self, sim, cut: pd.Timestamp, batch: pd.DataFrame,
              profile: pd.DataFrame) -> np.ndarray:
        items = profile_matrix(profile, batch[S.QUERY_ID].astype(str).to_numpy(),
                               self._doc_index)
        items.data[:] = 1.0  # distinct profile items
        scores = items @ sim
        return scores.toarray() if sp.issparse(scores) else np.asarray(scores)
