"""Run rows matched to their judgments by document id, exact whatever the hash.

Every doc_id is hashed once to 64 bits by a compiled loop over the Arrow buffers (``hash64``).
Then, one query at a time, the query's judgments and ranked rows go into a small table keyed
by hash (``compiled.join_hashes``): the work stays in cache and no string is hashed twice. A
match is confirmed by comparing the two strings; a hash that two judgments or two ranked rows
of one query share (a repeated doc_id, or a collision) sends those rows to an exact path keyed
by the strings themselves, so the result never depends on the hash. trec_eval's rules ride on
the same pass: a doc_id judged twice for a query, or ranked twice in one list, is an
InputError at the first repeat.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from releval.data import contracts as S
from releval.metrics import compiled, ids


def hash64(strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of each string's bytes and length (equal strings, equal hashes, whatever
    array holds them): ``compiled.hash_strings`` over each chunk's buffers."""
    out = np.empty(len(strings), np.uint64)
    at = 0
    for chunk in strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]:
        compiled.hash_strings(*compiled.buffers(chunk), out[at:at + len(chunk)])
        at += len(chunk)
    return out


def stable_order(codes: np.ndarray) -> np.ndarray:
    """``np.argsort(codes, kind="stable")`` for non-negative integer codes, by one sort of
    (code, position) packed in 64 bits where they fit (several times faster)."""
    n = len(codes)
    if n == 0 or n >= 1 << 32 or int(codes.max()) >= 1 << 31:
        return np.argsort(codes, kind="stable")
    key = codes.astype(np.uint64) << np.uint64(32)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    return (key & np.uint64(0xFFFFFFFF)).astype(np.int64)


class Grouped:
    """Rows laid out by group (query) code: ``order`` (empty: already so in the input), each
    code's first layout position and row count."""

    def __init__(self, codes: np.ndarray, n_codes: int, contiguous: bool):
        self.counts = np.bincount(codes, minlength=n_codes).astype(np.int64)
        self.start = np.cumsum(self.counts) - self.counts
        self.order = np.zeros(0, np.int64) if contiguous else stable_order(codes)

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Input row positions of every row of the groups ``codes``."""
        layout = np.repeat(self.start[codes], self.counts[codes]) + _within(self.counts[codes])
        return self.order[layout] if len(self.order) else layout


def _within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[i] - 1 for each i, concatenated."""
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)


def _first_repeat(rows: np.ndarray, keys: np.ndarray) -> tuple[int, int] | None:
    """(first, repeat) input rows of the first repeated key among ``rows`` (every row of a
    repeated key must be among them), as ``contracts.first_duplicate`` over all rows."""
    order = np.argsort(rows, kind="stable")
    dup = S.first_duplicate(keys[order])
    return None if dup is None else (int(rows[order][dup[0]]), int(rows[order][dup[1]]))


def _joined(*arrays: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The arrays one after another, as one array."""
    chunks = [c.cast(pa.large_string()) for a in arrays
              for c in (a.chunks if isinstance(a, pa.ChunkedArray) else [a])]
    return pa.chunked_array(chunks, pa.large_string()).combine_chunks()


def repeated_judgment(docs: pa.Array, hashes: np.ndarray, codes: np.ndarray, layout: Grouped
                      ) -> tuple[int, int] | None:
    """The first (query, doc) judged twice: (first row, repeat row), or None. ``hashes``:
    ``hash64(docs)``; ``codes``: each judgment's query code, laid out by ``layout``."""
    suspect = np.zeros(len(hashes), bool)
    compiled.repeated_hashes(layout.order, layout.start, layout.counts, hashes, suspect)
    rows = np.flatnonzero(suspect)
    if not len(rows):
        return None
    return _first_repeat(rows, _exact_keys(codes[rows], docs.take(pa.array(rows))))


def match(run_docs: pa.Array, run_hashes: np.ndarray, run_codes: np.ndarray,
          run_layout: Grouped, run_to_qrels: np.ndarray, qrels_docs: pa.Array,
          qrels_hashes: np.ndarray, qrels_grade: np.ndarray, qrels_layout: Grouped,
          on_repeat: Callable[[tuple[int, int]], None]) -> tuple[np.ndarray, np.ndarray]:
    """Per run row, the grade judging its (query, doc) (NaN: unjudged) and that judgment's
    layout position (-1: unjudged), by which other per-judgment fields (laid out as
    ``qrels_grade``) reach the row. ``run_hashes``:
    ``hash64(run_docs)``; ``run_codes``: each run row's query code; ``run_to_qrels``: each
    run query's qrels code (-1: none);
    ``on_repeat(first, repeat)`` is called (and must raise) for the first doc_id ranked twice
    in a list. ``qrels_docs`` / ``qrels_hashes`` / ``qrels_grade``: the judgments' doc ids,
    ``hash64`` and grades in ``qrels_layout``'s order; the qrels hold no repeated (query,
    doc) (``repeated_judgment``)."""
    found = np.empty(len(run_codes), np.int64)
    grade = np.empty(len(run_codes))
    run_docs = ids.whole(run_docs)
    compiled.join(run_layout.order, run_layout.start, run_layout.counts, run_hashes,
                  *compiled.buffers(run_docs), run_to_qrels, np.zeros(0, np.int64),
                  qrels_layout.start, qrels_layout.counts, qrels_hashes,
                  *compiled.buffers(qrels_docs), qrels_grade, found, grade)
    odd = np.flatnonzero(found == -2)
    if len(odd):
        at = _exact(run_docs, run_codes[odd], odd, run_to_qrels, qrels_docs, qrels_layout,
                    on_repeat)
        found[odd] = at
        grade[odd] = np.where(at >= 0, np.append(qrels_grade, np.nan)[at], np.nan)
    return grade, found


def _exact(run_docs: pa.Array, codes: np.ndarray, rows: np.ndarray, run_to_qrels: np.ndarray,
           qrels_docs: pa.Array, qrels_layout: Grouped,
           on_repeat: Callable[[tuple[int, int]], None]) -> np.ndarray:
    """``match`` for run ``rows`` (of queries ``codes``) by their strings, as layout positions
    of the judgments: every row of a repeated doc_id is among them, and each is looked up
    among its query's judgments."""
    strings = run_docs.take(pa.array(rows))
    dup = _first_repeat(rows, _exact_keys(codes, strings))
    if dup:
        on_repeat(dup)
    target = run_to_qrels[codes]
    judged = np.unique(target[target >= 0])
    counts = qrels_layout.counts[judged]
    at = np.repeat(qrels_layout.start[judged], counts) + _within(counts)
    keys = _exact_keys(np.r_[np.repeat(judged, counts), np.maximum(target, 0)],
                       _joined(qrels_docs.take(pa.array(at)), strings))
    q_keys, r_keys = keys[: len(at)], keys[len(at):]
    if not len(q_keys):
        return np.full(len(rows), -1, np.int64)
    by_key = np.argsort(q_keys)
    i = np.minimum(np.searchsorted(q_keys[by_key], r_keys), len(q_keys) - 1)
    ok = (target >= 0) & (q_keys[by_key][i] == r_keys)
    return np.where(ok, at[by_key][i], -1)


def _exact_keys(groups: np.ndarray, strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An exact integer key per (group, string)."""
    encoded = ids.whole(strings).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return groups.astype(np.int64) * max(len(encoded.dictionary), 1) + codes
