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

``forbidden_reasons(pairs, queries, documents)`` says, for each returned (query_id, doc_id)
pair, which part of the rule it breaks: the first of ``REASONS`` (precedence order) that
applies, or "" where the query may see the document. It uses the same arrays as ``mask``, so
a pair is visible exactly when its reason is "".

An empty documents table is a project without a corpus (``prepare.source: runs``: the team's
runs judged by their qrels): there is nothing to check a pair against, so every pair is
visible and none is forbidden (``reasons``, ``visible_pairs``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError

ADMIN = "admin"

# Why a returned pair is forbidden, in precedence order (the first that applies is reported).
REASONS = {
    "unknown_document": "the doc_id is not in the documents table",
    "other_tenant": "the document belongs to another tenant than the query's",
    "acl": "the document is restricted to groups the user is not in (and the user is no admin)",
    "status": "the document is a draft or expired",
    "deleted": "the document was deleted at or before the query's time",
    "not_yet_published": "the document was published after the query's time",
}


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

    def reasons(self, queries: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
        """Per (query_id, doc_id) row of ``pairs``, the first ``REASONS`` entry it breaks, ""
        where visible: the per-pair form of ``mask`` (same arrays, same comparisons).
        Every query_id must be in ``queries`` (query_id unique), else InputError."""
        q_index = pd.Index(queries[S.QUERY_ID])
        d_index = pd.Index(self.doc_ids)
        for index, name in ((q_index, "queries"), (d_index, "documents")):
            if not index.is_unique:
                raise InputError(f"{index[index.duplicated()][0]!r} is not unique", name)
        qi = q_index.get_indexer(pairs[S.QUERY_ID])
        if (qi < 0).any():
            missing = pd.Series(pairs[S.QUERY_ID]).to_numpy()[qi < 0]
            raise InputError(f"{len(set(missing))} query_id(s) not in the queries table, e.g. "
                             f"{missing[0]!r}", "queries")
        di = d_index.get_indexer(pairs[S.DOC_ID])
        unknown = di < 0
        if len(self.doc_ids) == 0:  # no corpus (a runs-only project): nothing to check
            return np.full(len(pairs), "")
        d = np.where(unknown, 0, di)
        t = _times(queries[S.ISSUED_AT])[qi]
        tenant_code = pd.Index(self.tenants).get_indexer(queries[S.TENANT].astype(str))[qi]
        qbits = self._bits([tuple(g) if g is not None else () for g in queries[S.GROUPS]])[qi]
        shares = (qbits & self.doc_bits[d]).any(axis=1)
        admin = (queries[S.ROLE].astype(str).to_numpy() == ADMIN)[qi]
        breaks = {
            "unknown_document": unknown,
            "other_tenant": self.doc_tenant[d] != tenant_code,
            "acl": ~(self.open_acl[d] | shares | admin),
            "status": ~(self.live[d] | self.deleted_status[d]),
            "deleted": self.deleted[d] <= t,
            "not_yet_published": self.published[d] > t,
        }
        return np.select([breaks[r] for r in REASONS], list(REASONS), default="")


def forbidden_reasons(pairs: pd.DataFrame, queries: pd.DataFrame, documents: pd.DataFrame,
                      visibility: Visibility | None = None) -> np.ndarray:
    """For each (query_id, doc_id) row of ``pairs``: "" when that query may see that document,
    else the first ``REASONS`` entry (precedence order) the pair breaks. Agrees with
    ``Visibility.mask``: visible ⇔ reason "". Vectorised over the pairs; ``visibility`` (built
    from ``documents``) may be passed to reuse it. A query_id not in ``queries`` is an
    InputError (a window answers the queries table's queries)."""
    visibility = Visibility(documents) if visibility is None else visibility
    return visibility.reasons(queries, pairs)


def visible_pairs(visibility: Visibility, queries: pd.DataFrame, pairs: pd.DataFrame,
                  batch: int = 256) -> np.ndarray:
    """For each (query_id, doc_id) row of ``pairs``: may that query see that document?
    Documents or queries unknown to the tables count as not visible; with no documents at
    all (a runs-only project, ``prepare.source: runs``) every pair is visible."""
    if len(visibility.doc_ids) == 0:
        return np.ones(len(pairs), bool)
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
