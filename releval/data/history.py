"""What a recommendation route may know at a cut: the interaction log seen from time t.

A user-query (docs/architecture.md, recommendation mode) is issued at its cut t. A route may
learn from the positive (label 1) interactions before t, less those of held-out users
(``fitting``); it answers from the user's own positives before t (``profile``); and, when
``exclude_seen``, it never recommends an item the user already has (``seen``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from releval.data import contracts as S


def user_query_id(user_id, split: str) -> str:
    """The query id of ``user_id`` at the cut of ``split``: ``"<user_id>@<split>"``."""
    return f"{user_id}@{split}"


def _utc(values) -> pd.Series:
    return pd.to_datetime(pd.Series(values), utc=True)


@dataclass(frozen=True)
class History:
    """The log (user_id, item_id, timestamp, label: ``S.INTERACTION_COLUMNS``) as routes see it."""

    log: pd.DataFrame
    exclude_seen: bool = True
    held_out: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self):
        positives = self.log[self.log[S.LABEL].astype(int) == 1]
        frame = pd.DataFrame({S.USER_ID: positives[S.USER_ID].astype(str).to_numpy(),
                              S.ITEM_ID: positives[S.ITEM_ID].astype(str).to_numpy(),
                              S.TIMESTAMP: _utc(positives[S.TIMESTAMP]).array})
        object.__setattr__(self, "_positives", frame.sort_values(S.TIMESTAMP, kind="stable")
                           .reset_index(drop=True))

    @classmethod
    def of(cls, log: pd.DataFrame, queries: pd.DataFrame, exclude_seen: bool) -> History:
        """The history of ``log`` with the held-out users that ``queries`` mark."""
        held = queries.loc[queries[S.HELD_OUT].astype(bool), S.USER_ID] \
            if S.HELD_OUT in queries.columns else pd.Series([], dtype=str)
        return cls(log, exclude_seen, frozenset(held.astype(str)))

    @property
    def positives(self) -> pd.DataFrame:
        """Every label-1 interaction (user_id, item_id, timestamp), in time order."""
        return self._positives

    def fitting(self, cut) -> pd.DataFrame:
        """Label-1 interactions before ``cut``, held-out users removed: what a route may
        learn from at ``cut``."""
        p = self._positives
        keep = (p[S.TIMESTAMP] < pd.Timestamp(cut)).to_numpy().copy()
        if self.held_out:
            keep &= ~p[S.USER_ID].isin(self.held_out).to_numpy()
        return p[keep].reset_index(drop=True)

    def profile(self, queries: pd.DataFrame) -> pd.DataFrame:
        """Per query, its user's label-1 interactions before its issued_at
        (query_id, item_id, timestamp), held-out users included: the route's input."""
        q = pd.DataFrame({S.QUERY_ID: queries[S.QUERY_ID].astype(str).to_numpy(),
                          S.USER_ID: queries[S.USER_ID].astype(str).to_numpy(),
                          "_cut": _utc(queries[S.ISSUED_AT]).array})
        joined = q.merge(self._positives, on=S.USER_ID, how="inner")
        joined = joined[(joined[S.TIMESTAMP] < joined["_cut"]).to_numpy()]
        return joined[[S.QUERY_ID, S.ITEM_ID, S.TIMESTAMP]].reset_index(drop=True)

    def seen(self, queries: pd.DataFrame) -> pd.DataFrame:
        """Per query, the distinct items its user had before its issued_at (query_id,
        item_id): what ``exclude_seen`` removes; empty when it is off."""
        if not self.exclude_seen:
            return pd.DataFrame({S.QUERY_ID: pd.Series([], dtype=str),
                                 S.ITEM_ID: pd.Series([], dtype=str)})
        pairs = self.profile(queries)[[S.QUERY_ID, S.ITEM_ID]]
        return pairs.drop_duplicates().reset_index(drop=True)

    def seen_mask(self, queries: pd.DataFrame, doc_ids: np.ndarray) -> np.ndarray:
        """Boolean (len(queries), len(doc_ids)): True where the query's user already has the
        item (all False when ``exclude_seen`` is off)."""
        out = np.zeros((len(queries), len(doc_ids)), bool)
        pairs = self.seen(queries)
        if len(pairs):
            qi = pd.Index(queries[S.QUERY_ID].astype(str)).get_indexer(pairs[S.QUERY_ID])
            di = pd.Index(pd.Series(doc_ids).astype(str)).get_indexer(pairs[S.ITEM_ID])
            ok = (qi >= 0) & (di >= 0)
            out[qi[ok], di[ok]] = True
        return out
