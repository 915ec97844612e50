"""Runs joined with qrels as flat numpy arrays: the shared input of every measure.

Rows are the ranked documents of the evaluated queries, grouped by query and sorted by
position within a query. Measures reduce them per query with ``np.bincount``; building
the arrays hashes each string once (Arrow) and does the rest with integer sorts.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S
from releval.errors import InputError
from releval.metrics import doc_join


def _strings(frame: pd.DataFrame, column: str, default: str) -> pa.Array | pa.ChunkedArray:
    """A column of ids as Arrow large strings (numbers are written as strings), in the
    chunks the frame holds (a reader's chunks are not copied into one)."""
    values = S.ids(frame, column, default)
    if not pd.api.types.is_string_dtype(values):
        values = values.astype(str)
    arr = pa.array(values.array) if len(values) else pa.array([], pa.large_string())
    if isinstance(arr, pa.ChunkedArray) and arr.num_chunks < 2:
        arr = arr.combine_chunks()
    return arr.cast(pa.large_string())


def _whole(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _encode(arr: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray, bool]:
    """(uniques, codes, contiguous) of a string array, codes in order of first appearance;
    ``contiguous``: every value's rows are consecutive (a ranked list's query ids, a qrels
    file's), found by comparing neighbours instead of hashing every row."""
    n = len(arr)
    if n > 1:
        change = pc.not_equal(arr.slice(1), arr.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.r_[True, change])
        heads = _whole(arr.take(pa.array(starts)))
        if len(pc.unique(heads)) == len(heads):
            return heads, np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n])), True
    elif n == 1:
        return _whole(arr), np.zeros(1, np.int64), True
    encoded = _whole(arr).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return encoded.dictionary, codes, n == 0


def _lookup(values: pa.Array, uniques: pa.Array) -> np.ndarray:
    """Position of each value in ``uniques``, -1 where absent."""
    found = pc.index_in(values, value_set=uniques)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


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
    ``max_grade`` is the declared top of the grade scale.
    """

    def __init__(self, run: pd.DataFrame, qrels: pd.DataFrame, *, max_grade: int = 3,
                 common_only: bool = False, queries=None, catalog=None):
        qgrade = S.check_grades(qrels, max_grade)
        self.max_grade = max_grade
        run_qs, run_ds = _strings(run, S.QUERY_ID, "run"), _strings(run, S.DOC_ID, "run")
        qrels_qs, qrels_ds = _strings(qrels, S.QUERY_ID, "qrels"), _strings(qrels, S.DOC_ID,
                                                                           "qrels")
        # queries: codes within the run and within the qrels, then the evaluated set
        run_quniq, run_qc, run_contiguous = _encode(run_qs)
        qrels_quniq, qrels_qc, qrels_contiguous = _encode(qrels_qs)
        n_judged = len(qrels_quniq)  # codes past it: queries named only by ``queries``
        keep = np.ones(n_judged, bool)
        if queries is not None:  # exactly these queries; others' judgments are dropped
            universe = pc.unique(pa.array(list(map(str, queries)), pa.large_string()))
            extra = universe.filter(pa.array(_lookup(universe, qrels_quniq) < 0))
            qrels_quniq = pa.concat_arrays([qrels_quniq, extra])
            keep = np.zeros(len(qrels_quniq), bool)
            keep[_lookup(universe, qrels_quniq)] = True
        in_qrels = _lookup(run_quniq, qrels_quniq)
        run_to_qrels = np.where(np.r_[keep, False][in_qrels], in_qrels, -1)  # -1: last, False
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

        # documents: each run row's judgment, matched by hashed doc_id (releval.metrics.doc_join)
        qrels_layout = doc_join.Grouped(qrels_qc, n_judged, qrels_contiguous)
        qrels_hash = doc_join.hash64(qrels_ds)
        dup = doc_join.repeated_judgment(qrels_ds, qrels_hash, qrels_qc, qrels_layout)
        if dup:
            i, j = dup
            raise InputError(f"duplicate judgment for query {qrels_qs[j].as_py()!r} doc "
                             f"{qrels_ds[j].as_py()!r} (first at "
                             f"{S.where(qrels, qrels.index[i])})",
                             S.source_of(qrels, "qrels"), S.where(qrels, qrels.index[j]))
        judged_by = np.where((in_qrels >= 0) & (in_qrels < n_judged), in_qrels, -1)
        qrels_row = doc_join.match(
            run_ds, run_qc, doc_join.Grouped(run_qc, len(run_quniq), run_contiguous),
            judged_by, qrels_ds, qrels_hash, qrels_layout,
            lambda d: S.duplicate_doc(run, d, run_qs[d[1]].as_py(), run_ds[d[1]].as_py()))

        # ranked rows of evaluated queries, grouped by query, by position within it
        row_q = remap[run_to_qrels[run_qc]]
        ordered = self._order(run, run_qc, run_contiguous, run_ds)
        probability = _probabilities(run) if S.PROBABILITY in run.columns else None
        if ordered is None and (row_q >= 0).all():  # common case: no gather needed
            self.q, rows = row_q, None
        else:
            ordered = np.arange(len(row_q)) if ordered is None else ordered
            rows = ordered[row_q[ordered] >= 0]
            self.q, qrels_row = row_q[rows], qrels_row[rows]
        if probability is not None:
            self.probability = probability if rows is None else probability[rows]
        n = len(self.q)
        self.starts = np.concatenate([np.zeros(min(n, 1), np.int64),
                                      np.flatnonzero(self.q[1:] != self.q[:-1]) + 1])
        self.pos = np.arange(n) - np.repeat(self.starts, np.diff(self.starts, append=n))
        self.n_ret = np.bincount(self.q, minlength=self.nq)

        # qrels of evaluated queries, and the grade of every ranked row
        q_of_qrels = remap[qrels_qc]
        kept = q_of_qrels >= 0
        self.qrels_q, self.qrels_grade = q_of_qrels[kept], qgrade[kept]
        self.judged = qrels_row >= 0
        self.grade = np.append(qgrade, np.nan)[qrels_row]  # -1: the last, NaN

        self.catalog = catalog
        if catalog is not None:  # catalogue indices of the ranked items, judged items, queries
            item = _lookup(run_ds, catalog.item_ids)
            self.item = item if rows is None else item[rows]
            self.qrels_item = _lookup(qrels_ds, catalog.item_ids)[kept]
            self.query_code = catalog.locate(self.queries)

    @functools.cached_property
    def probability(self) -> np.ndarray:
        """Per ranked row, the run's probability (NaN where it has none)."""
        return np.full(len(self.q), np.nan)

    @staticmethod
    def _order(run: pd.DataFrame, run_qc: np.ndarray, contiguous: bool,
               run_ds: pa.Array) -> np.ndarray | None:
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
        n = len(score)
        order = None
        same_query = run_qc[1:] == run_qc[:-1]
        if not contiguous or (same_query & (score[1:] > score[:-1])).any():
            order = np.lexsort((-score, run_qc))  # a TREC file is usually in this order
            score, codes = score[order], run_qc[order]
            same_query = codes[1:] == codes[:-1]
        tied = np.r_[False, same_query & (score[1:] == score[:-1])]
        if not tied.any():
            return order
        # ties: doc_id descending (byte order of UTF-8 = code point order, as strcmp)
        rows = np.flatnonzero(tied | np.r_[tied[1:], False])  # positions in a tie
        group = np.cumsum(~tied)[rows]  # one number per tie
        at = rows if order is None else order[rows]
        within = pc.sort_indices(pa.table({"g": group, "d": run_ds.take(pa.array(at))}),
                                 sort_keys=[("g", "ascending"), ("d", "descending")])
        out = np.arange(n) if order is None else order.copy()
        out[rows] = at[within.to_numpy()]
        return out

    # ---- per-row and per-query building blocks shared by measures ----
    def _memo(self, key: tuple, sources: tuple, compute):
        """``compute()`` once per key while the arrays ``sources`` are the ones it read (a
        copied Ranking whose rows were replaced computes afresh); read-only."""
        memo = self.__dict__.setdefault("_memos", {})
        hit = memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], sources, strict=True)):
            return hit[1]
        value = _frozen(compute())
        memo[key] = (sources, value)
        return value

    def per_query(self, weights: np.ndarray) -> np.ndarray:
        """Sum of row ``weights`` per evaluated query (one segment sum per query's rows)."""
        out = np.zeros(self.nq)
        if len(self.starts):
            w = np.asarray(weights, dtype=np.float64)
            out[self.q[self.starts]] = np.add.reduceat(w, self.starts)
        return out

    def top(self, k: int | None) -> np.ndarray:
        """Rows in the first ``k`` positions (all rows when k is None)."""
        if k is None:
            return self._memo(("top", None), (self.q,), lambda: np.ones(len(self.q), bool))
        return self._memo(("top", k), (self.pos,), lambda: self.pos < k)

    def relevant(self, rel: int) -> np.ndarray:
        """Rows judged with grade ≥ rel."""
        return self._memo(("relevant", rel), (self.grade,),
                          lambda: self.grade >= rel)  # NaN (unjudged) compares False

    def n_rel(self, rel: int) -> np.ndarray:
        """|R| per query: judged documents with grade ≥ rel."""
        return self._memo(("n_rel", rel), (self.qrels_q, self.qrels_grade), lambda: np.bincount(
            self.qrels_q, weights=self.qrels_grade >= rel, minlength=self.nq))

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
        return "probability" in self.__dict__ and bool(np.isfinite(self.probability).any())

    @property
    def empty(self) -> np.ndarray:
        """Queries with no ranked document (in the qrels, missing from the run)."""
        return self.n_ret == 0
