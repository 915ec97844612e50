"""The popularity route: the items most bought in the trailing window before the cut.

At a query's cut t, score(i) = the number of label-1 interactions with item i in
[t − ``window_days``, t) among ``History.fitting(t)`` (held-out users' interactions are not
counted). Every user at t gets the same list, less the items it may not see (visibility) or
already has (exclude_seen); ties go to doc_id ascending and items never bought in the window
(score 0) are no candidates, so a window is short only when fewer than depth visible, unseen
items were bought in it. Queries at one cut share one count (``base.HistoryRetriever``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.retrieval.base import HistoryRetriever


class PopularityRetriever(HistoryRetriever):
    """Trailing-window purchase counts; see the module docstring."""

    route = "popularity"

    def __init__(self, window_days: int = 90):
        self.window_days = S.integer("window_days", window_days, source="popularity")

    def fit(self, fitting: pd.DataFrame, cut: pd.Timestamp) -> np.ndarray:
        """float32 count per document of its label-1 interactions in the window before cut."""
        recent = fitting[fitting[S.TIMESTAMP] >= cut - pd.Timedelta(days=self.window_days)]
        cols = self._doc_index.get_indexer(recent[S.ITEM_ID])
        return np.bincount(cols[cols >= 0], minlength=len(self._doc_index)).astype(np.float32)

    def score(self, counts: np.ndarray, cut: pd.Timestamp, batch: pd.DataFrame,
              profile: pd.DataFrame) -> np.ndarray:
        return np.broadcast_to(counts, (len(batch), len(counts)))
