"""TREC run and qrels files in the common shape, read fast: a compiled pass over the bytes.

Most TREC files separate their fields by one space (or one tab) and have no blank lines, no
quotes and exactly the format's fields on every line. Such a file is read here in blocks of
whole lines (``BLOCK_SIZE`` bytes), one compiled pass over each block's bytes
(``releval.metrics.compiled.trec_block``) cutting its fields and keeping the wanted ones, so
only the blocks in hand and the kept columns are ever held, never the file. A large file is
cut at line starts into parts read side by side on threads (the pass holds no lock), then
joined in order. An id column becomes integer codes (each run of equal neighbours looked up
once among the distinct ids), doc ids Arrow string chunks, numbers float64 / int64: parsed
in the pass where one IEEE operation rounds them exactly, by Arrow's parser (the CSV
reader's) elsewhere. Anything else returns None and the general reader reads the whole
file, so every rule and every error message (file, line, rule) stays the general reader's: a
missing field, a NUL byte, a byte that is not UTF-8, a quote, a blank line, a field that is
not a number, more fields than the format's, runs of blanks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.metrics import compiled

BLOCK_SIZE = 1 << 24  # bytes read at once
PART_SIZE = 1 << 26  # the least bytes a thread of its own reads
MAX_PARTS = 4
JOINED = 1 << 29  # compact strings of at most these bytes in all: one array (``read``)
BOM = b"\xef\xbb\xbf"
STR = pd.StringDtype("pyarrow", na_value=np.nan)  # pandas' ``str``, as the general reader's
# what becomes of a kept field: ids (a categorical column when compact, else strings), a
# categorical column, strings, numbers; the codes of the compiled pass's roles
Kind = Literal["ids", "category", "text", "float", "int"]
ROLE = {"ids": 1, "category": 1, "text": 2, "float": 3, "int": 4}


def _blocks(path: Path, start: int, stop: int) -> Iterator[np.ndarray]:
    """Bytes ``start`` to ``stop`` of the file (whole lines; a UTF-8 BOM at the file's start
    dropped) in blocks of whole lines, the last one's line feed optional. A block is a view
    of one buffer, read into again for the next."""
    buf, carry, left = bytearray(BLOCK_SIZE), 0, stop - start
    with open(path, "rb", buffering=0) as f:
        f.seek(start)
        while True:
            size = carry
            while size < len(buf) and left and (got := f.readinto(
                    memoryview(buf)[size:size + min(len(buf) - size, left)])):
                size, left = size + got, left - got
            skip = len(BOM) if start == 0 and buf.startswith(BOM) else 0
            end = size if not left else buf.rfind(b"\n", skip, size) + 1
            if end > skip:
                yield np.frombuffer(buf, np.uint8, end - skip, skip)
                start = -1  # past the BOM
            if not left:
                return
            if end > skip:
                buf[:size - end] = buf[end:size]
                carry = size - end
            else:  # a line longer than the buffer: a larger one
                buf, carry = buf + bytearray(len(buf)), size


def _delimiter(path: Path) -> tuple[int, int] | None:
    """(delimiter, the other blank) from the file's first line: a space or a tab, whichever
    it holds, never both; None when it holds neither or both."""
    with open(path, "rb") as f:
        head = f.read(65536)
    head = head[:head.find(b"\n")] if b"\n" in head else head
    space, tab = b" " in head, b"\t" in head
    if space == tab:
        return None
    return (32, 9) if space else (9, 32)


def _cuts(path: Path, size: int) -> list[int]:
    """Where the file's parts start (each at a line's start) and the last one ends: one part
    per ``PART_SIZE`` bytes, at most one per core and ``MAX_PARTS``."""
    parts = min(MAX_PARTS, len(os.sched_getaffinity(0)), max(1, size // PART_SIZE))
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, parts):
            at = max(cuts[-1], size * k // parts)
            f.seek(at)
            while (chunk := f.read(1 << 16)) and b"\n" not in chunk:
                at += len(chunk)
            cuts.append(min(size, at + chunk.find(b"\n") + 1) if chunk else size)
    return sorted(set(cuts + [size]))


def _strings(buf: np.ndarray, begins: np.ndarray, ends: np.ndarray, rows: np.ndarray
             ) -> pa.Array:
    """The bytes buf[begins[r]:ends[r]] of each r in ``rows`` as an Arrow string array."""
    offsets = np.zeros(len(rows) + 1, np.int32)
    np.cumsum(ends[rows] - begins[rows], out=offsets[1:])
    data = np.empty(int(offsets[-1]), np.uint8)
    compiled.gather_bytes(buf, begins, ends, rows, offsets, data)
    return pa.Array.from_buffers(pa.string(), len(rows), [None, pa.py_buffer(offsets),
                                                         pa.py_buffer(data)])


def _str(strings: pa.Array | pa.ChunkedArray) -> pd.arrays.ArrowStringArray:
    return pd.arrays.ArrowStringArray(strings, dtype=STR)


class _Codes:
    """A column of ids as integer codes, block by block: each run of equal neighbours is
    looked up once among the distinct ids seen so far (``ids``) and kept as (code, length)."""

    def __init__(self):
        self.ids: dict[str, int] = {}
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def _codes(self, ids: list[str]) -> np.ndarray:
        known = self.ids
        return np.array([known.setdefault(s, len(known)) for s in ids], np.int64)

    def add(self, heads: pa.Array, sizes: np.ndarray) -> None:
        """Runs of ``sizes`` lines holding the ids ``heads``, after those added."""
        found = heads.dictionary_encode()
        code = self._codes(found.dictionary.to_pylist())
        self.runs.append((code[found.indices.to_numpy()], sizes))

    def extend(self, other: _Codes) -> None:
        """``other``'s runs after these, its ids coded among these."""
        code = self._codes(list(other.ids))
        self.runs += [(code[c], s) for c, s in other.runs]

    def column(self, categorical: bool) -> pd.Categorical | pd.arrays.ArrowStringArray:
        """The codes, line by line, as a categorical column (codes of the least integer type
        that holds them, as pandas keeps them), or as their strings."""
        uniques = pa.array(list(self.ids), pa.large_string())
        kind = np.result_type(np.min_scalar_type(-len(uniques)), np.int8)
        codes = np.repeat(np.concatenate([c for c, _ in self.runs]).astype(kind),
                          np.concatenate([s for _, s in self.runs]))
        if categorical:
            return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(
                pd.Index(_str(uniques)), ordered=False), validate=False)
        return _str(uniques.take(pa.array(codes)))


class _Text:
    """A column of strings the compiled pass writes in place: Arrow string chunks (4-byte
    offsets, at most 2 GiB of bytes each; one per part of most files) in buffers sized from
    the bytes read (``lines``, ``size``: pages past the last line are never touched, so
    never taken)."""

    LIMIT = 2**31 - 1

    def __init__(self, lines: int, size: int):
        self.lines, self.size, self.chunks = lines, min(size, self.LIMIT), []
        self._start()

    def _start(self) -> None:
        self.offsets, self.data, self.n = np.empty(self.lines + 1, np.int32), \
            np.empty(self.size, np.uint8), 0
        self.offsets[0] = 0

    def close(self) -> None:
        if self.n:
            self.chunks.append(pa.Array.from_buffers(pa.string(), self.n, [
                None, pa.py_buffer(self.offsets[:self.n + 1]),
                pa.py_buffer(self.data[:self.offsets[self.n]])]))
            self.n = 0

    def room(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, bytes) where a block of ``size`` bytes writes its strings."""
        if self.offsets[self.n] + size > len(self.data):
            self.close()
            self._start()
        return self.offsets[self.n:], self.data


class _Part:
    """Bytes ``start`` to ``stop`` of a TREC file (whole lines) read block by block into the
    kept columns: ``codes`` (ids), ``text``, ``values`` (the number, room for ``capacity``
    lines: pages past the last line are never touched, so never taken); ``n`` lines."""

    def __init__(self, path: Path, start: int, stop: int, names: tuple[str, ...],
                 kinds: dict[str, Kind], blanks: tuple[int, int], capacity: int):
        self.path, self.start, self.stop, self.names = path, start, stop, names
        self.blanks, self.n = blanks, 0
        self.role = np.array([ROLE[kinds[name]] if name in kinds else 0 for name in names],
                             np.int64)
        self.slot = np.cumsum((self.role == 1) | (self.role > 2)) - 1  # ids' and the number's
        self.codes = {name: _Codes() for name, kind in kinds.items() if ROLE[kind] == 1}
        self.number = next((name for name, kind in kinds.items() if ROLE[kind] > 2), None)
        self.values = np.empty(capacity if self.number else 0, np.float64
                               if self.number and kinds[self.number] == "float" else np.int64)
        text = any(kind == "text" for kind in kinds.values())
        self.text = _Text(capacity, stop - start) if text else None

    def read(self) -> bool:
        """Read the bytes; False at the first line of another shape, a number Arrow's parser
        refuses or a byte that is not UTF-8."""
        names, slot, values = self.names, self.slot, self.values
        floats, ints = (values, np.empty(0, np.int64)) if values.dtype == np.float64 \
            else (np.empty(0), values)
        no_text = np.zeros(1, np.int32), np.zeros(0, np.uint8)
        slots, lines_max = int(slot[-1]) + 1, 0
        try:
            for buf in _blocks(self.path, self.start, self.stop):
                if len(buf) // (2 * len(names)) + 2 > lines_max:  # a line: ≥ 2 bytes a field
                    lines_max = len(buf) // (2 * len(names)) + 2  # (the pass's outputs: for
                    # every block, longer ones after a line longer than a block)
                    begins, ends = (np.empty((slots, lines_max), np.int32) for _ in range(2))
                    changes, slow = np.empty((slots, lines_max), bool), np.empty(lines_max, bool)
                lines, common = compiled.trec_block(
                    buf, *self.blanks, self.role, slot, begins, ends, changes,
                    *(self.text.room(len(buf)) if self.text else no_text), floats[self.n:],
                    ints[self.n:], slow)
                if not common:
                    return False
                pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(np.array(
                    [0, len(buf)], np.int32)), pa.py_buffer(buf)]).validate(full=True)
                for name, column in self.codes.items():
                    s = slot[names.index(name)]
                    heads = np.flatnonzero(changes[s, :lines])
                    column.add(_strings(buf, begins[s], ends[s], heads),
                               np.diff(heads, append=lines))
                if self.number and (rows := np.flatnonzero(slow[:lines])).size:
                    s = slot[names.index(self.number)]
                    values[self.n + rows] = pc.cast(_strings(buf, begins[s], ends[s], rows),
                                                    pa.from_numpy_dtype(values.dtype)).to_numpy()
                if self.text:
                    self.text.n += lines
                self.n += lines
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return False  # a bad number or byte
        if self.text:
            self.text.close()
        return True


def read(path: Path, names: tuple[str, ...], kinds: dict[str, Kind], *, compact: bool = False
         ) -> pd.DataFrame | None:
    """The TREC file at ``path`` (fields ``names``) as a frame of the ``kinds`` columns (the
    other fields must be there, not empty; at most one ``text`` and one number) indexed by
    line number: ``ids`` strings, or with ``compact`` a categorical column (no string per
    row); ``text`` strings (with ``compact`` Arrow's ``string[pyarrow]``, 4-byte offsets, in
    one array when they hold at most ``JOINED`` bytes: a qrels' doc ids, which the evaluator
    needs whole; a large run's stay in their parts' chunks, never held twice);
    ``category`` categorical; ``float`` / ``int`` float64 / int64 (with ``compact``, ``int``
    in the least integer type that holds the values). None when the general reader must
    read it."""
    size = path.stat().st_size
    blanks = _delimiter(path) if size else None
    if blanks is None:
        return None
    cuts = _cuts(path, size)
    parts = [_Part(path, a, b, names, kinds, blanks,  # the first holds every line's number
                   (size if a == 0 else b - a) // (2 * len(names)) + 1)
             for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    with ThreadPoolExecutor(len(parts)) as pool:
        if not all(pool.map(_Part.read, parts)):
            return None
    first, n = parts[0], sum(part.n for part in parts)
    if not n:
        return None
    values, at = first.values, first.n
    for part in parts[1:]:
        for name, column in first.codes.items():
            column.extend(part.codes[name])
        values[at:at + part.n] = part.values[:part.n]
        at += part.n
    strings = pa.chunked_array([chunk for part in parts if part.text
                                for chunk in part.text.chunks], pa.string())
    if compact and strings.num_chunks > 1 and strings.nbytes <= JOINED:
        strings = pa.chunked_array([strings.combine_chunks()])
    return pd.DataFrame({
        name: first.codes[name].column(compact or kinds[name] == "category")
        if name in first.codes
        else (_least(values[:n]) if compact else values[:n]) if name == first.number
        else pd.arrays.ArrowExtensionArray(strings) if compact else _str(strings)
        for name in names if name in kinds}, index=pd.RangeIndex(1, n + 1), copy=False)


def _least(values: np.ndarray) -> np.ndarray:
    """Integers in the least signed type that holds them (a qrels' grades: one byte each);
    other numbers as they are."""
    if values.dtype.kind != "i" or not len(values):
        return values
    low, high = values.min(), values.max()
    kind = next(k for k in (np.int8, np.int16, np.int32, np.int64)
                if np.iinfo(k).min <= low and high <= np.iinfo(k).max)
    return values.astype(kind)
