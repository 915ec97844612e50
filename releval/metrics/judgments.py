"""Qrels encoded once: query codes, the judgments laid out by query, doc-id hashes, grades and
the hard-negative marks.

A ``Ranking`` builds its ``Judgments`` from a qrels frame; the blocks of a large run
(``releval.metrics.blocks``) share one, so the judgments are read, checked and hashed once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S
from releval.errors import InputError
from releval.metrics import doc_join, ids


class Judgments:
    """``qrels`` (query_id, doc_id, grade, optional hard_negative) for the engine.
    ``uniques``: the judged queries, ``codes``: each judgment's index among them (int32);
    ``layout``: the judgments grouped by code; ``docs`` / ``hashes`` / ``laid_grade``: each
    judgment's doc id, its hash and its grade in layout order (a query's judgments side by
    side); ``grade``: each judgment's grade (float, input order); ``laid_hard``: in layout order,
    whether each judgment marks a hard negative (``hard_negatives``), None when the qrels
    mark none. Rules: grades are integers ≤ ``max_grade``; one judgment per (query, doc),
    else an InputError at the first repeat; the hard-negative rules of ``hard_negatives``."""

    def __init__(self, qrels: pd.DataFrame, max_grade: int):
        self.frame, self.max_grade = qrels, max_grade
        self.grade = S.check_grades(qrels, max_grade)
        hard = S.hard_negative_flags(qrels, "qrels", self.grade)
        self.uniques, codes, contiguous = ids.query_codes(qrels, "qrels")
        self.codes = codes.astype(np.int32)
        ds = ids.whole(ids.doc_ids(qrels, "qrels"))
        self.layout = doc_join.Grouped(self.codes, len(self.uniques), contiguous)
        hashes = doc_join.hash64(ds)
        dup = doc_join.repeated_judgment(ds, hashes, self.codes, self.layout)
        if dup:
            i, j = dup
            query = self.uniques[self.codes[j]].as_py()
            raise InputError(f"duplicate judgment for query {query!r} doc "
                             f"{ds[j].as_py()!r} (first at {S.where(qrels, qrels.index[i])})",
                             S.source_of(qrels, "qrels"), S.where(qrels, qrels.index[j]))
        self.input_docs = ds
        order = self.layout.order
        self.docs = ds.take(pa.array(order)) if len(order) else ds
        self.hashes = hashes[order] if len(order) else hashes
        self.laid_grade = self.grade[order] if len(order) else self.grade
        self.laid_hard = (hard[order] if len(order) else hard) if hard.any() else None
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def locate(self, values: pa.Array) -> np.ndarray:
        """Each value's code among ``uniques`` (-1: not judged). Looked up by hash in a sorted
        table built once (a hash two judged queries share: by Arrow's exact lookup)."""
        if self._sorted is None:
            h = doc_join.hash64(self.uniques)
            order = np.argsort(h, kind="stable")
            unique = bool(len(h) < 2 or (h[order][1:] != h[order][:-1]).all())
            self._sorted = (h[order], order) if unique else (np.zeros(0, np.uint64), None)
        table, order = self._sorted
        if order is None:
            return ids.lookup(values, self.uniques)
        if not len(table) or not len(values):
            return np.full(len(values), -1, np.int64)
        h = doc_join.hash64(values)
        at = np.minimum(np.searchsorted(table, h), len(table) - 1)
        code = np.where(table[at] == h, order[at], -1)
        hit = np.flatnonzero(code >= 0)
        equal = pc.equal(ids.whole(values.take(pa.array(hit))),
                         self.uniques.take(pa.array(code[hit]))).to_numpy(zero_copy_only=False)
        code[hit[~equal]] = -1
        return code

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """The input rows of the judgments of queries ``codes``, in input order."""
        rows = self.layout.rows(codes)  # ascending codes of contiguous queries: in order
        return rows if (rows[1:] >= rows[:-1]).all() else np.sort(rows)
