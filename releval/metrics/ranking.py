"""Runs joined with qrels as flat numpy arrays: the shared input of every measure.

Rows are the ranked documents of the evaluated queries, grouped by query and sorted by
position within a query. Measures reduce them per query with ``np.bincount``; building
the arrays hashes each string once (Arrow) and does the rest with integer sorts.
"""

from __future__ import annotations

import functools
from concurrent.futures import Future

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S
from releval.metrics import compiled, doc_join, ids
from releval.metrics.judgments import Judgments


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

    Per row, ``probability`` is the run's probability (NaN where it has none) and ``hard``
    whether its judgment marks a hard negative (``hard`` is None when the qrels mark none:
    ``Judgments.laid_hard``). With a ``catalog`` (``releval.metrics.catalog.Catalog``),
    ``item`` / ``qrels_item`` are each ranked row's / judgment's item index in the catalogue
    (-1 when unknown to it) and ``query_code`` each evaluated query's index among the
    catalogue's queries.
    ``qrels``: a frame, its ``Judgments`` or a future of them (waited for once the run's own
    arrays are built, so a thread can build them meanwhile).
    ``max_grade`` is the declared top of the grade scale. ``query_ids``: the evaluated
    queries, sorted, as an Arrow array (``queries``: the same as Python strings).
    """

    def __init__(self, run: pd.DataFrame, qrels: pd.DataFrame | Judgments | Future, *,
                 max_grade: int = 3, common_only: bool = False, queries=None, catalog=None):
        j = Judgments(qrels, max_grade) if isinstance(qrels, pd.DataFrame) else qrels
        # the run's own arrays: query codes, doc-id hashes, the ranked order
        run_quniq, run_qc, run_contiguous = ids.query_codes(run, "run")
        run_ds = ids.doc_ids(run, "run")
        run_layout = doc_join.Grouped(run_qc, len(run_quniq), run_contiguous)
        run_hashes = doc_join.hash64(run_ds)
        ordered = self._order(run, run_qc, run_ds)
        if isinstance(j, Future):
            j = j.result()
        self.max_grade = j.max_grade
        # queries: the run's and the qrels', then the evaluated set
        uniques, n_judged = j.uniques, len(j.uniques)  # codes past n_judged: only listed
        in_qrels = j.locate(run_quniq)
        keep = np.ones(n_judged, bool)
        if queries is not None:  # exactly these queries; others' judgments are dropped
            universe = pc.unique(pa.array(list(map(str, queries)), pa.large_string()))
            code = j.locate(universe)
            extra = universe.filter(pa.array(code < 0))
            code[code < 0] = n_judged + np.arange(len(extra))
            if len(extra):
                uniques = pa.concat_arrays([uniques, extra])
                listed = ids.lookup(run_quniq, extra)
                in_qrels = np.where((in_qrels < 0) & (listed >= 0), listed + n_judged, in_qrels)
            keep = np.zeros(len(uniques), bool)
            keep[code] = True
        run_to_qrels = np.where(np.r_[keep, False][in_qrels], in_qrels, -1)  # -1: last, False
        self.n_run_queries = len(run_quniq)
        self.not_in_qrels = int((run_to_qrels < 0).sum())
        if common_only:
            in_run = np.zeros(len(keep), bool)
            in_run[run_to_qrels[run_to_qrels >= 0]] = True
            keep &= in_run
        evaluated = np.flatnonzero(keep)
        order = pc.sort_indices(uniques.take(pa.array(evaluated))).to_numpy()
        remap = np.full(len(uniques) + 1, -1, np.int64)  # last slot: not in qrels
        remap[evaluated[order]] = np.arange(len(evaluated))
        self.query_ids = ids.whole(uniques.take(pa.array(evaluated[order])))
        self.nq = len(self.query_ids)

        # documents: each run row's judgment, matched by hashed doc_id (releval.metrics.doc_join)
        judged_by = np.where((in_qrels >= 0) & (in_qrels < n_judged), in_qrels, -1)
        grade, judgment = doc_join.match(
            run_ds, run_hashes, run_qc, run_layout, judged_by, j.docs, j.hashes, j.laid_grade,
            j.layout,
            lambda d: S.duplicate_doc(run, d, run_quniq[run_qc[d[1]]].as_py(),
                                      run_ds[d[1]].as_py()))
        hard = None if j.laid_hard is None else np.append(j.laid_hard, False)[judgment]

        # ranked rows of evaluated queries, grouped by query, by position within it
        row_q = remap[run_to_qrels][run_qc]
        probability = _probabilities(run) if S.PROBABILITY in run.columns else None
        if ordered is None and (row_q >= 0).all():  # common case: no gather needed
            self.q, rows = row_q, None
        else:
            ordered = np.arange(len(row_q)) if ordered is None else ordered
            rows = ordered[row_q[ordered] >= 0]
            self.q, grade = row_q[rows], grade[rows]
            hard = None if hard is None else hard[rows]
        if probability is not None:
            self.probability = probability if rows is None else probability[rows]
        n = len(self.q)
        self.starts = np.concatenate([np.zeros(min(n, 1), np.int64),
                                      np.flatnonzero(self.q[1:] != self.q[:-1]) + 1])
        sizes = np.diff(self.starts, append=n)
        self.pos = np.arange(n) - np.repeat(self.starts, sizes)
        self.n_ret = np.zeros(self.nq, np.int64)
        self.n_ret[self.q[self.starts]] = sizes

        # qrels of evaluated queries, and the grade of every ranked row
        kept = j.rows(evaluated[evaluated < n_judged])
        self.qrels_q, self.qrels_grade = remap[j.codes[kept]], j.grade[kept]
        self.grade = grade
        self.judged = ~np.isnan(grade)
        self.hard = hard

        self.catalog = catalog
        if catalog is not None:  # catalogue indices of the ranked items, judged items, queries
            item = ids.lookup(run_ds, catalog.item_ids)
            self.item = item if rows is None else item[rows]
            self.qrels_item = ids.lookup(j.input_docs.take(pa.array(kept)), catalog.item_ids)
            self.query_code = catalog.locate(self.queries)

    @functools.cached_property
    def queries(self) -> np.ndarray:
        """The evaluated query ids in order, as Python strings (``query_ids``: as Arrow)."""
        return np.asarray(self.query_ids.to_pylist(), dtype=object)

    @functools.cached_property
    def probability(self) -> np.ndarray:
        """Per ranked row, the run's probability (NaN where it has none)."""
        return np.full(len(self.q), np.nan)

    @staticmethod
    def _order(run: pd.DataFrame, run_qc: np.ndarray, run_ds: pa.Array) -> np.ndarray | None:
        """Row positions of the run grouped by query, in ranked order within a query;
        None when the rows already are in that order."""
        if S.RANK in run.columns:
            rank = S.check_ranks(run)
            if compiled.in_order(run_qc, rank, False) == 0:
                return None  # already in order, ranks distinct
            key = run_qc * (int(rank.max(initial=0)) + 1) + rank
            dup = S.first_duplicate(key)
            if dup:
                S.repeated_rank(run, rank, dup)
            return np.argsort(key, kind="stable")
        score = S.check_scores(run)
        n = len(score)
        order = None
        standing = compiled.in_order(run_qc, score, True)
        if standing == 0:
            return None
        same_query = run_qc[1:] == run_qc[:-1]
        if standing == 2:
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

    def per_query_in_order(self, weights: np.ndarray) -> np.ndarray:
        """``per_query`` with each query's rows added one by one in rank order, as trec_eval
        adds them (the same value to the last bit where a sum's rounding shows)."""
        out = np.zeros(self.nq)
        if len(self.starts):
            sums = np.empty(len(self.starts))
            compiled.sums_in_order(np.asarray(weights, dtype=np.float64), self.starts, sums)
            out[self.q[self.starts]] = sums
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

    def relevant_rows(self, rel: int, k: int | None = None) -> np.ndarray:
        """Positions (in row order) of the rows judged with grade ≥ rel, within the first
        ``k`` positions when k is given."""
        rows = self._memo(("relevant_rows", rel), (self.grade,),
                          lambda: np.flatnonzero(self.grade >= rel))
        if k is None:
            return rows
        return self._memo(("relevant_rows", rel, k), (self.grade, self.pos),
                          lambda: rows[self.pos[rows] < k])

    def top_rows(self, k: int | None) -> np.ndarray:
        """Positions of the rows in the first ``k`` positions (all rows when k is None)."""
        if k is None:
            return self._memo(("top_rows", None), (self.q,), lambda: np.arange(len(self.q)))
        return self._memo(("top_rows", k), (self.pos,), lambda: np.flatnonzero(self.pos < k))

    def sum_rows(self, rows: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per evaluated query, the sum of ``weights`` (one per row of ``rows``; default 1)
        over its rows among ``rows``."""
        return np.bincount(self.q[rows], weights=weights, minlength=self.nq).astype(float)

    def ordinal(self, rows: np.ndarray) -> np.ndarray:
        """For each of ``rows`` (in row order), its 1-based place among the rows of its query
        in ``rows``."""
        qs = self.q[rows]
        starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]][: len(qs)])
        return np.arange(1, len(qs) + 1) - np.repeat(starts, np.diff(np.r_[starts, len(qs)]))

    def n_rel(self, rel: int) -> np.ndarray:
        """|R| per query: judged documents with grade ≥ rel."""
        return self._memo(("n_rel", rel), (self.qrels_q, self.qrels_grade), lambda: np.bincount(
            self.qrels_q, weights=self.qrels_grade >= rel, minlength=self.nq))

    def grade_counts(self) -> np.ndarray:
        """(queries × grades 0..max_grade): how many judgments of each grade a query has."""
        def count():
            keep = self.qrels_grade >= 0
            cell = self.qrels_q[keep] * (self.max_grade + 1) + self.qrels_grade[keep].astype(int)
            return np.bincount(cell, minlength=self.nq * (self.max_grade + 1)).reshape(
                self.nq, self.max_grade + 1)
        return self._memo(("grade_counts",), (self.qrels_q, self.qrels_grade), count)

    def n_judged(self) -> np.ndarray:
        """Judgments per query, of any grade."""
        return self._memo(("n_judged",), (self.qrels_q,),
                          lambda: np.bincount(self.qrels_q, minlength=self.nq))

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

    def first(self, rows: np.ndarray) -> np.ndarray:
        """Per query: 0-based position of its first row among ``rows`` (in row order; inf if
        none)."""
        out = np.full(self.nq, np.inf)
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


def truncated(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """The first ``depth`` documents of each query's ranked list in ``Ranking``'s order (by
    rank, else score descending, ties by doc_id descending), the rest dropped: trec_eval's
    ``max_num_docs_per_topic``, applied before everything else (the judged-only view too)."""
    codes = ids.query_codes(run, "run")[1]
    order = Ranking._order(run, codes, ids.doc_ids(run, "run"))
    order = np.arange(len(run)) if order is None else order
    grouped = codes[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]][: len(grouped)])
    pos = np.arange(len(grouped)) - np.repeat(starts, np.diff(np.r_[starts, len(grouped)]))
    kept = run.iloc[np.sort(order[pos < depth])]
    kept.attrs.update(run.attrs)
    return kept
