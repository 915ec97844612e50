"""Runs joined with qrels as flat numpy arrays: the shared input of every measure.

Rows are the ranked documents of the evaluated queries, grouped by query and sorted by
position within a query. Measures reduce them per query with ``np.bincount``; building
the arrays hashes each string once (Arrow) and does the rest with integer sorts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S
from releval.errors import InputError


def _strings(frame: pd.DataFrame, column: str, default: str) -> pa.Array:
    """A column of ids as one Arrow string array (numbers are written as strings)."""
    values = S.ids(frame, column, default)
    if not pd.api.types.is_string_dtype(values):
        values = values.astype(str)
    arr = pa.array(values.array) if len(values) else pa.array([], pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.large_string())


def _encode(arr: pa.Array, grouped: bool = False) -> tuple[pa.Array, np.ndarray]:
    """(uniques, codes) of a string array; ``grouped`` tries a fast path for arrays whose
    equal values are usually contiguous, as query ids in a ranked list."""
    n = len(arr)
    if grouped and n > 1:
        change = pc.not_equal(arr.slice(1), arr.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.r_[True, change])
        heads = arr.take(pa.array(starts))
        if len(pc.unique(heads)) == len(heads):
            return heads, np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    encoded = arr.dictionary_encode()
    return encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _lookup(values: pa.Array, uniques: pa.Array) -> np.ndarray:
    """Position of each value in ``uniques``, -1 where absent."""
    found = pc.index_in(values, value_set=uniques)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _probabilities(run: pd.DataFrame) -> np.ndarray:
    """The run's probability column as floats (all NaN without one); a value outside [0, 1]
    or not a number is an InputError at its row."""
    if S.PROBABILITY not in run.columns:
        return np.full(len(run), np.nan)
    column = run[S.PROBABILITY]
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = (np.isnan(values) & column.notna().to_numpy()) | (values < 0) | (values > 1)
    S.fail_first(run, "run", bad, lambda i: f"probability must be a number in [0, 1] or "
                 f"empty, got {column.iloc[i]!r}")
    return values


TIE_POLICY = ("by the rank column when the run has one; otherwise score descending, ties by "
              "doc_id descending (trec_eval's order)")


class Ranking:
    """A run joined with its qrels for the evaluated queries.

    Ordering: by ``rank`` when the run has that column (cutoffs count positions, not rank
    values), otherwise by score descending, ties by doc_id descending — the order trec_eval
    imposes on TREC run files. Queries evaluated: every qrels query (``common_only=False``,
    trec_eval ``-c``) or only those also in the run; ``queries`` fixes the evaluated set
    instead (a query without judgments is then undefined, not absent). Rules: one judgment
    per (query, doc); a doc_id at most once per ranked list; ranks are distinct positive
    integers per query; scores are numbers, never NaN; a ``probability`` column (optional)
    holds numbers in [0, 1] or NaN.

    Per row, ``probability`` is the run's probability (NaN where it has none). With a
    ``catalog`` (``releval.metrics.catalog.Catalog``), ``item`` / ``qrels_item`` are each
    ranked row's / judgment's item index in the catalogue (-1 when unknown to it) and
    ``query_code`` each evaluated query's index among the catalogue's queries.
    """

    def __init__(self, run: pd.DataFrame, qrels: pd.DataFrame, *, max_grade: int = 3,
                 common_only: bool = False, queries=None, catalog=None):
        qgrade = S.check_grades(qrels, max_grade)
        run_qs, run_ds = _strings(run, S.QUERY_ID, "run"), _strings(run, S.DOC_ID, "run")
        qrels_qs, qrels_ds = _strings(qrels, S.QUERY_ID, "qrels"), _strings(qrels, S.DOC_ID,
                                                                           "qrels")
        # queries: codes within the run and within the qrels, then the evaluated set
        run_quniq, run_qc = _encode(run_qs, grouped=True)
        universe = None if queries is None else pa.array(list(map(str, queries)),
                                                         pa.large_string())
        qrels_quniq, qrels_qc = _encode(
            qrels_qs if universe is None else pa.concat_arrays([qrels_qs, universe]),
            grouped=True)
        keep = np.ones(len(qrels_quniq), bool)
        if universe is not None:  # exactly these queries; others' judgments are dropped
            keep[:] = False
            keep[qrels_qc[len(qrels_qs):]] = True
            qrels_qc = qrels_qc[: len(qrels_qs)]
        run_to_qrels = _lookup(run_quniq, qrels_quniq)
        run_to_qrels[run_to_qrels >= 0] = np.where(keep[run_to_qrels[run_to_qrels >= 0]],
                                                   run_to_qrels[run_to_qrels >= 0], -1)
        self.n_run_queries = len(run_quniq)
        self.not_in_qrels = int((run_to_qrels < 0).sum())
        if common_only:
            in_run = np.zeros(len(keep), bool)
            in_run[run_to_qrels[run_to_qrels >= 0]] = True
            keep &= in_run
        evaluated = np.flatnonzero(keep)
        order = pc.sort_indices(qrels_quniq.take(pa.array(evaluated))).to_numpy()
        remap = np.full(len(qrels_quniq) + 1, -1, np.int64)  # last slot: not in qrels
        remap[evaluated[order]] = np.arange(len(evaluated))
        self.queries = np.asarray(qrels_quniq.take(pa.array(evaluated[order])).to_pylist(),
                                  dtype=object)
        self.nq = len(self.queries)

        # documents: one dictionary for qrels and run, so codes join directly
        duniq, dc = _encode(pa.concat_arrays([qrels_ds, run_ds]))
        n_docs = max(len(duniq), 1)
        qrels_dc, run_dc = dc[: len(qrels_ds)], dc[len(qrels_ds):]
        dup = S.first_duplicate(qrels_qc * n_docs + qrels_dc)
        if dup:
            i, j = dup
            raise InputError(f"duplicate judgment for query {qrels_qs[j].as_py()!r} doc "
                             f"{qrels_ds[j].as_py()!r} (first at "
                             f"{S.where(qrels, qrels.index[i])})",
                             S.source_of(qrels, "qrels"), S.where(qrels, qrels.index[j]))
        dup = S.first_duplicate(run_qc * n_docs + run_dc)
        if dup:
            S.duplicate_doc(run, dup, run_qs[dup[1]].as_py(), run_ds[dup[1]].as_py())

        # ranked rows of evaluated queries, grouped by query, by position within it
        row_q = remap[run_to_qrels[run_qc]]
        ordered = self._order(run, run_qc, run_ds, run_dc)
        probability = _probabilities(run)
        if ordered is None and (row_q >= 0).all():  # common case: no gather needed
            self.q, run_dc = row_q, run_dc
        else:
            ordered = np.arange(len(row_q)) if ordered is None else ordered
            ordered = ordered[row_q[ordered] >= 0]
            self.q, run_dc = row_q[ordered], run_dc[ordered]
            probability = probability[ordered]
        self.probability = probability
        n = len(self.q)
        self.starts = np.flatnonzero(np.r_[True, self.q[1:] != self.q[:-1]][:n])
        self.pos = np.arange(n) - np.repeat(self.starts, np.diff(np.r_[self.starts, n]))
        self.n_ret = np.bincount(self.q, minlength=self.nq)

        # qrels of evaluated queries, and the grade of every ranked row
        q_of_qrels = remap[qrels_qc]
        kept = q_of_qrels >= 0
        self.qrels_q, self.qrels_grade = q_of_qrels[kept], qgrade[kept]
        qrels_key = q_of_qrels[kept] * n_docs + qrels_dc[kept]
        by_key = np.argsort(qrels_key)
        sorted_key = np.r_[qrels_key[by_key], -1]
        run_key = self.q * n_docs + run_dc
        at = np.searchsorted(sorted_key[:-1], run_key)
        self.judged = sorted_key[at] == run_key
        self.grade = np.where(self.judged, np.r_[self.qrels_grade[by_key], np.nan][at], np.nan)

        self.catalog = catalog
        if catalog is not None:  # catalogue indices of the ranked items, judged items, queries
            to_item = _lookup(duniq, catalog.item_ids)
            self.item, self.qrels_item = to_item[run_dc], to_item[qrels_dc[kept]]
            self.query_code = catalog.locate(self.queries)

    @staticmethod
    def _order(run: pd.DataFrame, run_qc: np.ndarray, run_ds: pa.Array,
               run_dc: np.ndarray) -> np.ndarray | None:
        """Row positions of the run grouped by query, in ranked order within a query;
        None when the rows already are in that order."""
        if S.RANK in run.columns:
            rank = S.check_ranks(run)
            key = run_qc * (int(rank.max(initial=0)) + 1) + rank
            if len(key) < 2 or (key[1:] > key[:-1]).all():
                return None  # already in order, ranks distinct
            dup = S.first_duplicate(key)
            if dup:
                S.repeated_rank(run, rank, dup)
            return np.argsort(key, kind="stable")
        score = S.check_scores(run)
        order = np.lexsort((-score, run_qc))
        tied = np.r_[False, (run_qc[order][1:] == run_qc[order][:-1])
                     & (score[order][1:] == score[order][:-1])]
        if not tied.any():
            return order
        # ties: doc_id descending (byte order of UTF-8 = code point order, as strcmp)
        tied_rows = np.unique(np.r_[order[tied], order[np.flatnonzero(tied) - 1]])
        docs = np.unique(run_dc[tied_rows])
        lex = np.zeros(run_dc.max() + 1, np.int64)
        names = run_ds.take(pa.array(tied_rows)).to_pylist()
        by_doc = dict(zip(run_dc[tied_rows].tolist(), names, strict=True))
        ranked = sorted(docs.tolist(), key=by_doc.__getitem__)
        lex[ranked] = np.arange(1, len(ranked) + 1)
        return np.lexsort((-lex[run_dc], -score, run_qc))

    # ---- per-row and per-query building blocks shared by measures ----
    def per_query(self, weights: np.ndarray) -> np.ndarray:
        """Sum of row ``weights`` per evaluated query."""
        return np.bincount(self.q, weights=weights, minlength=self.nq)

    def top(self, k: int | None) -> np.ndarray:
        """Rows in the first ``k`` positions (all rows when k is None)."""
        return np.ones(len(self.q), bool) if k is None else self.pos < k

    def relevant(self, rel: int) -> np.ndarray:
        """Rows judged with grade ≥ rel."""
        return self.grade >= rel  # NaN (unjudged) compares False

    def n_rel(self, rel: int) -> np.ndarray:
        """|R| per query: judged documents with grade ≥ rel."""
        return np.bincount(self.qrels_q, weights=self.qrels_grade >= rel, minlength=self.nq)

    def n_nonrel(self, rel: int) -> np.ndarray:
        """Judged non-relevant per query: 0 ≤ grade < rel (trec_eval's count for bpref)."""
        mask = (self.qrels_grade >= 0) & (self.qrels_grade < rel)
        return np.bincount(self.qrels_q, weights=mask, minlength=self.nq)

    def running(self, mask: np.ndarray) -> np.ndarray:
        """Per row: how many rows of the same query at or above it satisfy ``mask``."""
        total = np.cumsum(mask, dtype=np.int64)
        offset = np.zeros(self.nq, np.int64)  # count before each query's first row
        offset[self.q[self.starts]] = total[self.starts] - mask[self.starts]
        return total - offset[self.q]

    def first(self, mask: np.ndarray) -> np.ndarray:
        """Per query: 0-based position of the first row satisfying ``mask`` (inf if none)."""
        out = np.full(self.nq, np.inf)
        rows = np.flatnonzero(mask)
        qs = self.q[rows]
        head = np.r_[True, qs[1:] != qs[:-1]][: len(rows)]
        out[qs[head]] = self.pos[rows[head]]
        return out

    @property
    def has_probability(self) -> bool:
        """Whether any ranked row carries a probability."""
        return bool(np.isfinite(self.probability).any())

    @property
    def empty(self) -> np.ndarray:
        """Queries with no ranked document (in the qrels, missing from the run)."""
        return self.n_ret == 0
