"""Who may see which document, when: the access and time rule every route obeys.

A query issued at time t by a user of tenant T with groups G and role r sees document d
iff all of:
- time: d.published_at ≤ t, and d was not deleted at t (deleted_at is null or > t);
- status: d is ``published``, or ``deleted`` with deleted_at > t (it was live at t);
  ``draft`` and ``expired`` documents are never visible;
- tenant: d.tenant = T;
- ACL: d.acl is empty (the whole tenant), or shares a group with G, or r is ``admin``.

``Visibility(documents).mask(queries)`` gives the (queries × documents) boolean matrix,
computed with integer comparisons and group bitsets, never a per-pair Python loop.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval import schema as S

ADMIN = "admin"


def _times(values: pd.Series) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds; missing -> max int (never happens)."""
    ts = pd.to_datetime(values, utc=True)
    out = ts.to_numpy(dtype="datetime64[ns]").astype(np.int64)
    return np.where(ts.isna().to_numpy(), np.iinfo(np.int64).max, out)


class Visibility:
    """The visibility rule for one documents table, applied to batches of queries."""

    def __init__(self, documents: pd.DataFrame):
        self.doc_ids = documents[S.DOC_ID].to_numpy()
        self.published = _times(documents[S.PUBLISHED_AT])
        deleted = pd.to_datetime(documents[S.DELETED_AT], utc=True)
        self.deleted = np.where(deleted.isna().to_numpy(), np.iinfo(np.int64).max,
                                _times(deleted.fillna(pd.Timestamp(0, tz="UTC"))))
        status = documents[S.STATUS].to_numpy()
        self.live = status == "published"
        self.deleted_status = status == "deleted"
        self.tenants, self.doc_tenant = np.unique(documents[S.TENANT].astype(str).to_numpy(),
                                                  return_inverse=True)
        acls = documents[S.ACL].map(lambda a: tuple(a) if a is not None else ()).tolist()
        self.groups = sorted({g for acl in acls for g in acl})
        self.bit = {g: i for i, g in enumerate(self.groups)}
        self.words = max(1, -(-len(self.groups) // 64))
        self.doc_bits = self._bits(acls)
        self.open_acl = ~self.doc_bits.any(axis=1)

    def _bits(self, group_lists) -> np.ndarray:
        bits = np.zeros((len(group_lists), self.words), np.uint64)
        for row, groups in enumerate(group_lists):
            for g in groups:
                i = self.bit.get(g)
                if i is not None:
                    bits[row, i // 64] |= np.uint64(1) << np.uint64(i % 64)
        return bits

    def mask(self, queries: pd.DataFrame) -> np.ndarray:
        """Boolean (len(queries), n_documents): may query i see document j."""
        t = _times(queries[S.ISSUED_AT])[:, None]
        in_time = (self.published[None, :] <= t) & (self.deleted[None, :] > t)
        status_ok = self.live[None, :] | self.deleted_status[None, :]  # deleted: by time
        tenant_code = pd.Index(self.tenants).get_indexer(queries[S.TENANT].astype(str))
        same_tenant = self.doc_tenant[None, :] == tenant_code[:, None]
        qbits = self._bits([tuple(g) if g is not None else () for g in queries[S.GROUPS]])
        shares = np.zeros((len(queries), len(self.doc_ids)), bool)
        for w in range(self.words):
            shares |= (qbits[:, w][:, None] & self.doc_bits[:, w][None, :]) != 0
        admin = (queries[S.ROLE].astype(str).to_numpy() == ADMIN)[:, None]
        acl_ok = self.open_acl[None, :] | shares | admin
        return in_time & status_ok & same_tenant & acl_ok


def visible_pairs(visibility: Visibility, queries: pd.DataFrame, pairs: pd.DataFrame,
                  batch: int = 256) -> np.ndarray:
    """For each (query_id, doc_id) row of ``pairs``: may that query see that document?
    Documents or queries unknown to the tables count as not visible."""
    q_index = pd.Index(queries[S.QUERY_ID])
    d_index = pd.Index(visibility.doc_ids)
    qi = q_index.get_indexer(pairs[S.QUERY_ID])
    di = d_index.get_indexer(pairs[S.DOC_ID])
    out = np.zeros(len(pairs), bool)
    for start in range(0, len(queries), batch):
        rows = np.flatnonzero((qi >= start) & (qi < start + batch) & (di >= 0))
        if len(rows):
            mask = visibility.mask(queries.iloc[start:start + batch])
            out[rows] = mask[qi[rows] - start, di[rows]]
    return out


def judgments_of(judgments: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame,
                 query_ids) -> tuple[pd.DataFrame, np.ndarray]:
    """The judgments of ``query_ids``, and per row whether that query may see the document:
    relevance is judged against what the user may see, so callers keep the visible rows and
    count the rest."""
    chosen = judgments[judgments[S.QUERY_ID].isin(query_ids)]
    asked = queries[queries[S.QUERY_ID].isin(query_ids)]
    return chosen, visible_pairs(Visibility(documents), asked, chosen)
