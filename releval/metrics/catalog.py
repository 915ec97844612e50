"""The catalogue a recommendation is judged against: what the beyond-accuracy measures and the
sampled AUC need to know about the items at each query's cut.

A query is one user at one cut t (its issued_at). At t the catalogue is the items the time
and status part of the visibility rule lets a query at t see (published at or before t, not
deleted at t; tenant and ACL do not partition a recommendation catalogue); popularity and
co-occurrence come from the label-1 interactions before t, of every user (the catalogue
describes the shop, not what a route may learn, so held-out users count too). ``Catalog.of``
builds it from the interaction log, the documents (items) and the user-queries.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa

from releval.data import contracts as S
from releval.data.visibility import Visibility
from releval.errors import InputError

if TYPE_CHECKING:  # scipy is imported where a catalogue is built, not at import
    import scipy.sparse as sp

NEGATIVES = ("window", "sample")  # AUC's negatives: the window's non-positives, or a sample
MAX_CELLS = 1 << 24  # (queries × items) cells per batch when drawing the negative sample


def _ids(values) -> np.ndarray:
    return pd.Series(values).astype(str).to_numpy(dtype=object)


def _ns(values) -> np.ndarray:
    """UTC timestamps as int64 nanoseconds."""
    return (pd.to_datetime(pd.Series(values), utc=True).to_numpy(dtype="datetime64[ns]")
            .astype(np.int64))


def _binary(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """The 0/1 CSR matrix with a 1 at each (row, col), repeats counted once."""
    import scipy.sparse as sp

    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def _unit_rows(m: sp.csr_matrix) -> sp.csr_matrix:
    """``m`` with each non-zero row scaled to unit L2 norm."""
    import scipy.sparse as sp

    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    return sp.diags(np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)) @ m


@dataclass(frozen=True, eq=False)
class Catalog:
    """Items, users and user-queries as integer axes, and what is known at each cut.

    ``items`` and ``users`` are sorted ids (the axes of every array here); ``cuts`` the
    distinct cuts (UTC ns, ascending); ``query_ids`` the known queries (sorted) with their
    cut's and user's index. ``visible`` (cuts × items): the catalogue at each cut.
    ``incidence``: per cut, (items × users) 1 where the user had a label-1 interaction with
    the item before the cut. ``bought`` (users × items): 1 where the user has a label-1
    interaction with the item anywhere in the log. ``embeddings`` (items × dim, optional): the
    item vectors. ``expected`` (optional): the expected system's run (query_id, doc_id, rank).
    ``negatives``, ``n_negatives``, ``seed``: how AUC picks its negatives (``sample``).
    """

    items: np.ndarray
    users: np.ndarray
    cuts: np.ndarray
    query_ids: np.ndarray
    query_cut: np.ndarray
    query_user: np.ndarray
    visible: np.ndarray
    incidence: tuple[sp.csr_matrix, ...]
    bought: sp.csr_matrix
    embeddings: np.ndarray | None = None
    expected: pd.DataFrame | None = None
    negatives: str = "window"
    n_negatives: int = 100
    seed: int = 0

    @classmethod
    def of(cls, log: pd.DataFrame, documents: pd.DataFrame, queries: pd.DataFrame, *,
           embeddings: np.ndarray | None = None, expected: pd.DataFrame | None = None,
           negatives: str = "window", n_negatives: int = 100, seed: int = 0) -> Catalog:
        """The catalogue of ``documents`` (doc_id = item_id) at the cuts of ``queries``
        (query_id, issued_at, user_id), from ``log`` (user_id, item_id, timestamp, label).
        ``embeddings``: one row per documents row, in its order. Log rows of items not in
        ``documents`` are not part of the catalogue and are left out."""
        S.require_columns(log, S.INTERACTION_COLUMNS, "interactions")
        S.require_columns(queries, (S.QUERY_ID, S.ISSUED_AT, S.USER_ID), "queries")
        S.require_unique(documents, S.DOC_ID, "documents")
        S.require_unique(queries, S.QUERY_ID, "queries")
        if negatives not in NEGATIVES:
            raise InputError(f"negatives must be one of {', '.join(NEGATIVES)}, got "
                             f"{negatives!r}", "recommend")
        n_negatives = S.integer("n_negatives", n_negatives, source="recommend")
        doc_ids = _ids(documents[S.DOC_ID])
        order = np.argsort(doc_ids, kind="stable")
        items = doc_ids[order]
        if embeddings is not None:
            embeddings = np.asarray(embeddings, dtype=np.float64)
            if embeddings.ndim != 2 or len(embeddings) != len(items):
                raise InputError(f"embeddings must have one row per document ({len(items)}), "
                                 f"got shape {embeddings.shape}", "embeddings")
            embeddings = embeddings[order]
        cuts = np.unique(_ns(queries[S.ISSUED_AT]))
        seen = Visibility(documents.iloc[order])
        t = cuts[:, None]
        visible = ((seen.published[None, :] <= t) & (seen.deleted[None, :] > t)
                   & (seen.live | seen.deleted_status)[None, :])

        users = np.unique(np.concatenate([_ids(log[S.USER_ID]), _ids(queries[S.USER_ID])]))
        positives = log[pd.to_numeric(log[S.LABEL]).to_numpy() == 1]
        user = pd.Index(users).get_indexer(_ids(positives[S.USER_ID]))
        item = pd.Index(items).get_indexer(_ids(positives[S.ITEM_ID]))
        when = _ns(positives[S.TIMESTAMP])
        known = item >= 0
        user, item, when = user[known], item[known], when[known]
        incidence = tuple(_binary(item[when < cut], user[when < cut], (len(items), len(users)))
                          for cut in cuts)
        bought = _binary(user, item, (len(users), len(items)))

        qids = _ids(queries[S.QUERY_ID])
        by_id = np.argsort(qids, kind="stable")
        query_cut = np.searchsorted(cuts, _ns(queries[S.ISSUED_AT])[by_id])
        query_user = pd.Index(users).get_indexer(_ids(queries[S.USER_ID])[by_id])
        return cls(items, users, cuts, qids[by_id], query_cut, query_user, visible, incidence,
                   bought, embeddings, expected, negatives, n_negatives, int(seed))

    @functools.cached_property
    def item_ids(self) -> pa.Array:
        """``items`` as an Arrow string array (to look documents up)."""
        return pa.array(list(self.items), pa.large_string())

    def locate(self, query_ids) -> np.ndarray:
        """Each query's index among ``query_ids``; InputError for a query the catalogue does
        not know."""
        ids = _ids(query_ids)
        codes = pd.Index(self.query_ids).get_indexer(ids)
        if (codes < 0).any():
            raise InputError(f"{int((codes < 0).sum())} query_id(s) not among the catalogue's "
                             f"queries, e.g. {ids[codes < 0][0]!r}", "queries")
        return codes

    @functools.cached_property
    def popularity(self) -> np.ndarray:
        """(cuts × items): the users with a label-1 interaction with the item before the cut."""
        return np.stack([np.diff(m.indptr) for m in self.incidence]).astype(float) \
            if len(self.cuts) else np.zeros((0, len(self.items)))

    @functools.cached_property
    def buyers(self) -> np.ndarray:
        """Per cut: the users with any label-1 interaction before it."""
        return np.array([np.count_nonzero(m.getnnz(axis=0)) for m in self.incidence], float)

    def inverse_propensity(self, cut: np.ndarray, item: np.ndarray, a: float,
                           b: float) -> np.ndarray:
        """Per (cut, item) pair (item -1: unknown to the catalogue, N_l = 0): 1 / p_l,
        ``inverse_propensity`` of its N_l (``popularity``) and N (``buyers``) at the cut."""
        n_l = np.where(item >= 0, self.popularity[cut, np.maximum(item, 0)], 0.0)
        return inverse_propensity(n_l, self.buyers[cut], a, b)

    def head(self, share: float) -> np.ndarray:
        """(cuts × items) bool: the head at each cut, the ⌊share · |C_t|⌉ (rounded) items of
        the catalogue C_t with the most buyers before t, ties by item_id ascending."""
        out = np.zeros(self.visible.shape, bool)
        for c in range(len(self.cuts)):
            visible = np.flatnonzero(self.visible[c])
            ranked = visible[np.lexsort((visible, -self.popularity[c, visible]))]
            out[c, ranked[:int(np.floor(share * len(visible) + 0.5))]] = True
        return out

    @functools.cached_property
    def unit_embeddings(self) -> np.ndarray:
        """``embeddings`` with each row scaled to unit norm (a zero row stays zero)."""
        norms = np.linalg.norm(self.embeddings, axis=1, keepdims=True)
        return np.divide(self.embeddings, norms, out=np.zeros_like(self.embeddings),
                         where=norms > 0)

    @functools.cached_property
    def unit_profiles(self) -> tuple[sp.csr_matrix, ...]:
        """Per cut, ``incidence`` with each item's user profile scaled to unit norm."""
        return tuple(_unit_rows(m) for m in self.incidence)

    def _key(self, query_code: np.ndarray, item: np.ndarray) -> np.ndarray:
        return np.where(item >= 0, query_code * len(self.items) + item, -1)

    @functools.cached_property
    def sample(self) -> np.ndarray:
        """Sorted keys (query × |items| + item) of each query's sampled negatives:
        ``n_negatives`` items drawn uniformly without replacement from the catalogue at the
        query's cut less the items its user ever bought (all of them when fewer). One seeded
        draw over every known query in ``query_ids`` order, in fixed batches, so a query's
        sample is the same whichever queries or systems are evaluated."""
        n_items, nq = len(self.items), len(self.query_ids)
        n = min(self.n_negatives, n_items)
        if n == 0 or nq == 0:
            return np.zeros(0, np.int64)
        rng = np.random.default_rng(self.seed)
        step = max(1, MAX_CELLS // n_items)
        keys = []
        for first in range(0, nq, step):
            rows = np.arange(first, min(first + step, nq))
            eligible = self.visible[self.query_cut[rows]] & \
                (self.bought[self.query_user[rows]].toarray() == 0)
            draw = rng.random((len(rows), n_items))
            draw[~eligible] = 2.0
            pick = np.argpartition(draw, n - 1, axis=1)[:, :n]
            drawn = np.take_along_axis(draw, pick, axis=1) < 1.0
            keys.append((rows[:, None] * n_items + pick)[drawn])
        return np.sort(np.concatenate(keys))

    def in_sample(self, query_code: np.ndarray, item: np.ndarray) -> np.ndarray:
        """Per (query, item) pair: is the item one of the query's sampled negatives?"""
        return _member(self.sample, self._key(query_code, item))

    def sample_sizes(self, query_code: np.ndarray) -> np.ndarray:
        """Per query: how many negatives it drew."""
        n_items = max(len(self.items), 1)
        counts = np.bincount(self.sample // n_items, minlength=len(self.query_ids))
        return counts[query_code].astype(float)

    @functools.cached_property
    def _expected(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted keys (query × |items| + item) of the expected run's rows and each one's
        0-based position in its query's ranking (by rank)."""
        run = S.require_columns(self.expected, (S.QUERY_ID, S.DOC_ID, S.RANK), "expected run")
        query = pd.Index(self.query_ids).get_indexer(_ids(run[S.QUERY_ID]))
        item = pd.Index(self.items).get_indexer(_ids(run[S.DOC_ID]))
        order = np.lexsort((S.check_ranks(run), query))
        query, item = query[order], item[order]
        starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else \
            np.zeros(0, np.int64)
        pos = np.arange(len(query)) - np.repeat(starts, np.diff(np.r_[starts, len(query)]))
        keep = (query >= 0) & (item >= 0)
        keys = self._key(query[keep], item[keep])
        by_key = np.argsort(keys, kind="stable")
        return keys[by_key], pos[keep][by_key]

    def in_expected(self, query_code: np.ndarray, item: np.ndarray, k: int) -> np.ndarray:
        """Per (query, item) pair: is the item in the expected system's top ``k`` for the
        query?"""
        keys, pos = self._expected
        wanted = self._key(query_code, item)
        if not len(keys):
            return np.zeros(len(wanted), bool)
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return (wanted >= 0) & (keys[at] == wanted) & (pos[at] < k)


def inverse_propensity(n_l: np.ndarray, n: np.ndarray, a: float, b: float) -> np.ndarray:
    """1 / p_l for Jain, Prabhu and Varma's (KDD 2016) item propensity
    p_l = 1 / (1 + C e^{−A ln(N_l + B)}), C = (ln N − 1)(B + 1)^A, i.e.
    1 / p_l = 1 + C (N_l + B)^{−A}, as pyxclib's ``compute_inv_propesity``: N_l the training
    points labelled l, N the training points. NaN where N < 3 (ln N ≤ 1: C ≤ 0 would not
    weigh rare labels up)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (np.log(n) - 1.0) * (b + 1.0) ** a
        return np.where(n >= 3, 1.0 + c * (np.asarray(n_l, dtype=float) + b) ** -a, np.nan)


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Per key (-1: none): is it in ``sorted_keys``?"""
    if not len(sorted_keys):
        return np.zeros(len(keys), bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return (keys >= 0) & (sorted_keys[at] == keys)
