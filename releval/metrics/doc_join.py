"""Run rows matched to their judgments by document id, without a hash table of strings.

Every doc_id is hashed once to 64 bits, vectorised over the Arrow buffers (``hash64``). Rows
are then matched by one integer sort per chunk of queries: a key packs the query (its index
in the chunk), the top bits of the hash, the side (judgment or ranked row) and the row's
position within its query, so equal (query, doc) pairs become neighbours and the position
bits say which rows they are. A neighbour pair is confirmed by comparing the two strings, and
the rare hash-equal groups that hold more than one row of a side (a repeated doc_id, or a
collision of the truncated hash) are resolved exactly by a dictionary of their strings: the
result never depends on the hash. trec_eval's rules ride on the same pass: a doc_id judged
twice for a query, or ranked twice in one list, is an InputError at the first repeat.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S

_M1, _M2, _M3 = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9),
                 np.uint64(0x94D049BB133111EB))
_SHIFT27, _SHIFT30, _SHIFT31 = np.uint64(27), np.uint64(30), np.uint64(31)
_POSITION = (np.random.default_rng(20240611).integers(1, 2**62, 64, dtype=np.uint64)
             * np.uint64(2) + np.uint64(1))  # odd: w -> w * c is a bijection
HASH_CHUNK = 1 << 18  # strings per hashing pass (their padded bytes stay in cache)
PAD_BYTES = 1 << 26  # at most this many padded bytes per hashing pass
SORT_CHUNK = 1 << 21  # rows per matching sort
MAX_QUERY_BITS = 20


def _words(part: pa.Array, width: int) -> np.ndarray:
    """The strings of ``part`` right-padded with NUL bytes to ``width`` bytes, as (n, width / 8)
    little-endian 64-bit words (a word wholly past a string's end is 0)."""
    padded = pc.ascii_rpad(part, width=width, padding="\0")
    if isinstance(padded, pa.ChunkedArray):
        padded = padded.combine_chunks()
    kind = np.int64 if pa.types.is_large_string(padded.type) or pa.types.is_large_binary(
        padded.type) else np.int32
    first = int(np.frombuffer(padded.buffers()[1], kind, count=1,
                              offset=padded.offset * np.dtype(kind).itemsize)[0])
    data = padded.buffers()[2]
    if data is None or len(padded) == 0:
        return np.zeros((len(padded), width // 8), np.uint64)
    raw = np.frombuffer(data, np.uint8, count=len(padded) * width, offset=first)
    return (raw if first % 8 == 0 else raw.copy()).view(np.uint64).reshape(-1, width // 8)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place: a bijection of 64-bit words that keeps 0 at 0."""
    h ^= h >> _SHIFT30
    h *= _M2
    h ^= h >> _SHIFT27
    h *= _M3
    h ^= h >> _SHIFT31
    return h


def hash64(strings: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string's bytes and length (equal strings, equal hashes, whatever
    strings they are hashed with): the length and each 8-byte word, mixed by position and
    summed, then mixed once more. A word past the string's end adds 0, so the padding width
    of a pass does not matter."""
    n = len(strings)
    out = np.empty(n, np.uint64)
    if n == 0:
        return out
    length = pc.binary_length(strings).to_numpy(zero_copy_only=False).astype(np.uint64)
    a = 0
    while a < n:
        size = min(HASH_CHUNK, n - a)
        longest = int(length[a:a + size].max())
        while size > 1 and size * (longest + 8) > PAD_BYTES:
            size //= 2
            longest = int(length[a:a + size].max())
        width = max(8, (longest + 7) // 8 * 8)
        words = _words(strings.slice(a, size), width)
        h = length[a:a + size] * _M1
        for j in range(words.shape[1]):
            h += _mix(words[:, j] * _POSITION[j % len(_POSITION)])
        out[a:a + size] = _mix(h)
        a += size
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
    """Rows laid out by group (query) code: ``order`` (None: already so in the input), each
    code's first layout position and row count, each layout position's code."""

    def __init__(self, codes: np.ndarray, n_codes: int, contiguous: bool):
        self.counts = np.bincount(codes, minlength=n_codes).astype(np.int64)
        self.start = np.cumsum(self.counts) - self.counts
        self.order = None if contiguous else stable_order(codes)
        self.codes = codes if self.order is None else codes[self.order]

    def rows(self, layout: np.ndarray) -> np.ndarray:
        """Input row positions of layout positions."""
        return layout if self.order is None else self.order[layout]

    def take(self, strings: pa.Array, a: int, b: int) -> pa.Array:
        """The strings of layout positions [a, b)."""
        if self.order is None:
            return strings.slice(a, b - a)
        return strings.take(pa.array(self.order[a:b]))


def _bits(n: int) -> int:
    """Bits that hold 0 .. n - 1."""
    return int(n - 1).bit_length() if n > 1 else 0


def _chunks(counts: np.ndarray) -> list[tuple[int, int]]:
    """Ranges of codes [c0, c1) holding at most SORT_CHUNK rows (or one code) and at most
    2^MAX_QUERY_BITS codes each."""
    out, c0, n = [], 0, len(counts)
    ends = np.cumsum(counts)
    while c0 < n:
        base = ends[c0 - 1] if c0 else 0
        c1 = int(np.searchsorted(ends, base + SORT_CHUNK, side="right"))
        c1 = min(max(c1, c0 + 1), c0 + (1 << MAX_QUERY_BITS), n)
        out.append((c0, c1))
        c0 = c1
    return out


def _within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., counts[i] - 1 for each i, concatenated."""
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)


class _Cells:
    """One chunk's rows of one or two sides, each packed as [group][top bits of its doc hash]
    [side][offset in its side] and sorted: rows of one (group, hash) cell become neighbours,
    judgments (side 0) before ranked rows (side 1)."""

    def __init__(self, sides: list[tuple[np.ndarray, np.ndarray]], n_groups: int):
        self.offset_bits = _bits(max(len(group) for group, _ in sides))
        self.group_shift = 64 - _bits(n_groups)
        hash_bits = self.group_shift - 1 - self.offset_bits
        self.key = np.empty(sum(len(group) for group, _ in sides), np.uint64)
        at = 0
        for side, (group, h) in enumerate(sides):
            key = self.key[at:at + len(group)]
            at += len(group)
            np.right_shift(h, np.uint64(64 - hash_bits), out=key)
            key <<= np.uint64(1 + self.offset_bits)
            key |= np.arange(len(group), dtype=np.uint64)
            if side:
                key |= np.uint64(1 << self.offset_bits)
            if self.group_shift < 64:
                key |= group.astype(np.uint64) << np.uint64(self.group_shift)
        self.key.sort()
        cell = self.key >> np.uint64(self.offset_bits + 1)
        self.shared = np.flatnonzero(cell[1:] == cell[:-1])  # i: i and i + 1 share a cell

    def cell(self, at: np.ndarray) -> np.ndarray:
        return self.key[at] >> np.uint64(self.offset_bits + 1)

    def side(self, at: np.ndarray) -> np.ndarray:
        return ((self.key[at] >> np.uint64(self.offset_bits)) & np.uint64(1)).astype(bool)

    def offset(self, at: np.ndarray) -> np.ndarray:
        return (self.key[at] & np.uint64((1 << self.offset_bits) - 1)).astype(np.int64)

    def group(self, at: np.ndarray) -> np.ndarray:
        if self.group_shift >= 64:
            return np.zeros(len(at), np.int64)
        return (self.key[at] >> np.uint64(self.group_shift)).astype(np.int64)

    def members(self, cells: np.ndarray) -> np.ndarray:
        """Sorted positions of every row in ``cells`` (sorted, unique)."""
        shift = np.uint64(self.offset_bits + 1)
        lo = np.searchsorted(self.key, cells << shift)
        hi = np.searchsorted(self.key, (cells << shift) | ((np.uint64(1) << shift) - np.uint64(1)),
                             side="right")
        return np.repeat(lo, hi - lo) + _within(hi - lo)


def _first_repeat(rows: np.ndarray, keys: np.ndarray) -> tuple[int, int] | None:
    """(first, repeat) input rows of the first repeated key among ``rows`` (every row of a
    repeated key must be among them), as ``contracts.first_duplicate`` over all rows."""
    order = np.argsort(rows, kind="stable")
    dup = S.first_duplicate(keys[order])
    return None if dup is None else (int(rows[order][dup[0]]), int(rows[order][dup[1]]))


def _joined(*arrays: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The arrays one after another, as one array."""
    chunks = [c for a in arrays for c in (a.chunks if isinstance(a, pa.ChunkedArray) else [a])]
    return pa.chunked_array(chunks, pa.large_string()).combine_chunks()


def _exact_keys(groups: np.ndarray, strings: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An exact integer key per (group, string)."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    encoded = strings.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return groups.astype(np.int64) * max(len(encoded.dictionary), 1) + codes


def repeated_judgment(docs: pa.Array, hashes: np.ndarray, codes: np.ndarray, layout: Grouped
                      ) -> tuple[int, int] | None:
    """The first (query, doc) judged twice: (first row, repeat row), or None. ``hashes``:
    ``hash64(docs)``; ``codes``: each judgment's query code, laid out by ``layout``."""
    h = hashes if layout.order is None else hashes[layout.order]
    suspects = []
    for c0, c1 in _chunks(layout.counts):
        a, b = int(layout.start[c0]), int(layout.start[c1 - 1] + layout.counts[c1 - 1])
        if b - a < 2:
            continue
        cells = _Cells([(layout.codes[a:b] - c0, h[a:b])], c1 - c0)
        if len(cells.shared):
            at = np.unique(np.r_[cells.shared, cells.shared + 1])
            suspects.append(layout.rows(a + cells.offset(at)))
    if not suspects:
        return None
    rows = np.unique(np.concatenate(suspects))
    return _first_repeat(rows, _exact_keys(codes[rows], docs.take(pa.array(rows))))


def match(run_docs: pa.Array, run_codes: np.ndarray, run_layout: Grouped, run_to_qrels:
          np.ndarray, qrels_docs: pa.Array, qrels_hashes: np.ndarray, qrels_layout: Grouped,
          on_repeat: Callable[[tuple[int, int]], None]) -> np.ndarray:
    """Per run row, the qrels row judging its (query, doc) (-1: unjudged). ``run_codes``: each
    run row's query code; ``run_to_qrels``: each run query's qrels code (-1: none);
    ``on_repeat(first, repeat)`` is called (and must raise) for the first doc_id ranked twice
    in a list. ``qrels_hashes``: ``hash64(qrels_docs)``; the qrels hold no repeated (query,
    doc) (``repeated_judgment``)."""
    found = np.full(len(run_codes), -1, np.int64)
    qh = qrels_hashes if qrels_layout.order is None else qrels_hashes[qrels_layout.order]
    q_counts = np.r_[qrels_layout.counts, 0][run_to_qrels]  # -1: the last, 0
    q_start = np.r_[qrels_layout.start, 0][run_to_qrels]
    repeats = []
    for g0, g1 in _chunks(run_layout.counts + q_counts):
        a = int(run_layout.start[g0])
        b = int(run_layout.start[g1 - 1] + run_layout.counts[g1 - 1])
        qc = q_counts[g0:g1]
        q_layout = np.repeat(q_start[g0:g1], qc) + _within(qc)  # the chunk's judgments
        strings = run_layout.take(run_docs, a, b)
        cells = _Cells([(np.repeat(np.arange(g1 - g0), qc), qh[q_layout]),
                        (run_layout.codes[a:b] - g0, hash64(strings))], g1 - g0)
        if not len(cells.shared):
            continue
        i = cells.shared
        sided = cells.side(i) == cells.side(i + 1)  # two rows of one side: a repeat or a
        if sided.any():  # collision of hashes; such cells are resolved by their strings
            odd = np.unique(cells.cell(i[sided]))
            i = i[~sided & ~np.isin(cells.cell(i), odd)]
            at = cells.members(odd)
            ranked = cells.side(at)
            r_off, q_off = cells.offset(at[ranked]), cells.offset(at[~ranked])
            keys = _exact_keys(np.r_[cells.group(at[~ranked]), cells.group(at[ranked])],
                               _joined(
                                   qrels_docs.take(pa.array(qrels_layout.rows(q_layout[q_off]))),
                                   strings.take(pa.array(r_off))))
            q_keys, r_keys = keys[: len(q_off)], keys[len(q_off):]
            input_rows = run_layout.rows(a + r_off)
            if len(np.unique(r_keys)) < len(r_keys):
                repeats.append((input_rows, run_codes[input_rows]))
            by_key = np.argsort(q_keys)
            hit = np.minimum(np.searchsorted(q_keys[by_key], r_keys), max(len(q_keys) - 1, 0))
            ok = (q_keys[by_key][hit] == r_keys) if len(q_keys) else np.zeros(len(r_keys), bool)
            found[input_rows[ok]] = qrels_layout.rows(q_layout[q_off[by_key][hit[ok]]])
        if len(i):  # i: a judgment, i + 1: a ranked row of the same cell
            r_off = cells.offset(i + 1)
            q_rows = qrels_layout.rows(q_layout[cells.offset(i)])
            equal = pc.equal(strings.take(pa.array(r_off)),
                             qrels_docs.take(pa.array(q_rows))).to_numpy(zero_copy_only=False)
            found[run_layout.rows(a + r_off[equal])] = q_rows[equal]
    if repeats:
        rows = np.concatenate([r for r, _ in repeats])
        dup = _first_repeat(rows, _exact_keys(np.concatenate([c for _, c in repeats]),
                                              run_docs.take(pa.array(rows))))
        if dup:
            on_repeat(dup)
    return found
