"""The metrics engine's compiled loops (numba), over Arrow string buffers and integer arrays.

numba is imported when a loop is first asked for (a command that evaluates nothing does not
pay for it). Each loop is compiled on its first call and cached on disk (``cache=True``:
beside this file, or in the user's cache folder when this folder is read-only, or under
``NUMBA_CACHE_DIR``), so only the first process after an install pays the compile time
(about three seconds for all of them); later processes load them from the cache.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable

import numpy as np
import pyarrow as pa

_M1, _M2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_S29, _S30, _S27, _S31 = np.uint64(29), np.uint64(30), np.uint64(27), np.uint64(31)
_B1, _B2, _B3, _B4, _B5, _B6, _B7 = (np.uint64(8 * k) for k in range(1, 8))


_KERNELS: dict[str, Callable] = {}


def _kernel(fn: Callable) -> Callable:
    """Register ``fn`` as a loop to compile (``numba.njit``) when one is first asked for."""
    _KERNELS[fn.__name__] = fn
    return fn


_WRAPPING = threading.Lock()  # threads asking at once (the reader's, the warming one)


def __getattr__(name: str):
    """A loop, compiled: the first request imports numba and wraps every loop (in definition
    order, so a loop's callees are numba functions when it compiles), once."""
    if name not in _KERNELS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _WRAPPING:
        if name in globals():
            return globals()[name]
        from numba import njit
        uncached = None
        for key, fn in _KERNELS.items():
            try:
                globals()[key] = njit(cache=True, nogil=True)(fn)
            except RuntimeError as exc:  # no writable cache folder: compile in every process
                uncached = exc
                globals()[key] = njit(nogil=True)(fn)
    if uncached is not None:
        warnings.warn(f"releval: numba cannot cache the metrics engine's loops ({uncached}); "
                      "each process compiles them: set NUMBA_CACHE_DIR to a writable folder",
                      stacklevel=2)
    return globals()[name]


def warm() -> threading.Thread:
    """Compile (or load from the cache) every loop on a background thread, e.g. while the
    input files are read; a loop called meanwhile waits for its compile."""

    def compile_all():
        k = sys.modules[__name__]
        line = np.frombuffer(bytearray(b"q 1\n"), np.uint8)  # the TREC reader's loops first
        where, index = np.zeros((1, 2), np.int32), np.zeros(1, np.int64)
        k.trec_block(line, 32, 9, index + 1, index, where, where, np.zeros((1, 2), bool),
                     np.zeros(2, np.int32), np.zeros(1, np.uint8), np.zeros(1), index,
                     np.zeros(1, bool))
        k.gather_bytes(line, where[0], where[0], index, np.zeros(2, np.int32), line)
        one, none = np.ones(1, np.int64), np.zeros(0, np.int64)
        hashes = np.zeros(2, np.uint64)
        score = np.zeros(2)
        score.flags.writeable = False  # as pandas hands a score column over
        for kind in (pa.string(), pa.large_string()):  # the compact reader's: 4-byte offsets
            offsets, data = buffers(pa.array(["a", "b"], kind))
            k.hash_strings(offsets, data, hashes)
            k.join(none, one - 1, one, hashes, offsets, data, one - 1, none, one - 1, one,
                   hashes, offsets, data, np.zeros(2), np.zeros(2, np.int64), np.zeros(2))
            if kind == pa.large_string():  # query ids as strings: a plain frame's
                k.same_as_previous(offsets, data, np.zeros(1, bool))
        k.repeated_hashes(none, one - 1, one, hashes, np.zeros(2, bool))
        k.in_order(np.zeros(2, np.int64), np.zeros(2, np.int64), False)
        k.in_order(np.zeros(2, np.int64), score, True)

    thread = threading.Thread(target=compile_all, name="releval-compile", daemon=True)
    thread.start()
    return thread


def buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of a string or large-string array without copying: string i is
    ``bytes[offsets[i]:offsets[i + 1]]``."""
    kind = np.int64 if pa.types.is_large_string(strings.type) or pa.types.is_large_binary(
        strings.type) else np.int32
    _, offsets, data = strings.buffers()[:3]
    offsets = np.frombuffer(offsets, kind, count=len(strings) + 1, offset=strings.offset
                            * np.dtype(kind).itemsize) if len(strings) else np.zeros(1, kind)
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return offsets, data


@_kernel
def hash_strings(offsets, data, out):  # pragma: no cover - compiled
    """out[i] = a 64-bit hash of string i's bytes and length: 8-byte little-endian words
    folded by multiply-xorshift, then splitmix64's finaliser."""
    for i in range(len(out)):
        a, b = offsets[i], offsets[i + 1]
        h = np.uint64(b - a) * _M1
        j = a
        while j + 8 <= b:  # whole words: the eight loads combine into one
            w = (np.uint64(data[j]) | np.uint64(data[j + 1]) << _B1
                 | np.uint64(data[j + 2]) << _B2 | np.uint64(data[j + 3]) << _B3
                 | np.uint64(data[j + 4]) << _B4 | np.uint64(data[j + 5]) << _B5
                 | np.uint64(data[j + 6]) << _B6 | np.uint64(data[j + 7]) << _B7)
            h = (h ^ w) * _M2
            h ^= h >> _S29
            j += 8
        if j < b:  # the last, partial word
            w = np.uint64(0)
            shift = np.uint64(0)
            while j < b:
                w |= np.uint64(data[j]) << shift
                shift += _B1
                j += 1
            h = (h ^ w) * _M2
            h ^= h >> _S29
        h ^= h >> _S30
        h *= _M2
        h ^= h >> _S27
        h *= _M3
        h ^= h >> _S31
        out[i] = h


@_kernel
def sums_in_order(weights, starts, out):  # pragma: no cover - compiled
    """out[g] = weights[starts[g]] + … + weights[starts[g + 1] - 1], added one by one in row
    order (as trec_eval's loops add, bit for bit; numpy's sums are pairwise)."""
    n = len(starts)
    for g in range(n):
        stop = starts[g + 1] if g + 1 < n else len(weights)
        total = 0.0
        for i in range(starts[g], stop):
            total += weights[i]
        out[g] = total


@_kernel
def same_as_previous(offsets, data, out):  # pragma: no cover - compiled
    """out[i] = string i + 1 equals string i (byte for byte), for i < n - 1."""
    for i in range(len(out)):
        a, b, c = offsets[i], offsets[i + 1], offsets[i + 2]
        same = b - a == c - b
        k = 0
        while same and k < b - a:
            same = data[a + k] == data[b + k]
            k += 1
        out[i] = same


@_kernel
def _size(n):  # pragma: no cover - compiled
    size = 8
    while size < 4 * n:
        size *= 2
    return size


@_kernel
def repeated_hashes(order, start, count, hashes, suspect):  # pragma: no cover - compiled
    """suspect[row] = True for every row whose hash another row of its group shares. Groups:
    rows ``order[start[g] : start[g] + count[g]]`` (``order`` empty: the identity)."""
    biggest = 0
    for g in range(len(count)):
        biggest = max(biggest, count[g])
    stamp = np.zeros(_size(biggest), np.int64)
    first = np.zeros(len(stamp), np.int64)
    for g in range(len(count)):
        mask = np.uint64(_size(count[g]) - 1)
        for t in range(start[g], start[g] + count[g]):
            row = order[t] if len(order) else t
            h = hashes[row]
            slot = np.int64(h & mask)
            while stamp[slot] == g + 1 and hashes[first[slot]] != h:
                slot = np.int64((slot + 1) & mask)
            if stamp[slot] == g + 1:
                suspect[row] = True
                suspect[first[slot]] = True
            else:
                stamp[slot] = g + 1
                first[slot] = row


@_kernel
def _equal(offsets_a, data_a, i, offsets_b, data_b, j):  # pragma: no cover - compiled
    """String i of a equals string j of b."""
    a, n = offsets_a[i], offsets_a[i + 1] - offsets_a[i]
    b = offsets_b[j]
    if offsets_b[j + 1] - b != n:
        return False
    for k in range(n):
        if data_a[a + k] != data_b[b + k]:
            return False
    return True


@_kernel
def _slot(stamp, key, current, h, mask):  # pragma: no cover - compiled
    """The slot of hash ``h`` in an open-addressing table whose slots of this round are
    stamped ``current``: the slot holding h, or the free one where it goes (linear probing)."""
    slot = np.int64(h & mask)
    while stamp[slot] == current and key[slot] != h:
        slot = np.int64((slot + 1) & mask)
    return slot


@_kernel
def join(run_order, run_start, run_count, run_hashes, run_offsets, run_data, to_qrels,
         qrels_order, qrels_start, qrels_count, qrels_hashes, qrels_offsets, qrels_data,
         qrels_grade, found, grade):  # pragma: no cover - compiled
    """Per run row, found = the qrels row of its query judging the same string (-1: none;
    -2: a hash that two judgments or two ranked rows of the query share, left to the exact
    path) and grade = that judgment's grade (NaN where found < 0). Groups as in
    ``repeated_hashes``; run group g's judgments are qrels group ``to_qrels[g]`` (-1: none).
    A query's rows and judgments share one small table keyed by hash; a hash match counts
    when the two strings are equal byte for byte."""
    biggest = 0
    for g in range(len(run_count)):
        q = to_qrels[g]
        biggest = max(biggest, run_count[g] + (qrels_count[q] if q >= 0 else 0))
    size = _size(biggest)
    stamp = np.zeros(size, np.int64)
    key = np.zeros(size, np.uint64)
    judged = np.zeros(size, np.int64)  # the judgment's row; -1: none; -2: several
    ranked = np.zeros(size, np.int64)  # ranked rows of the slot's hash: 1, 2 (= several)
    slot_of = np.zeros(biggest, np.int64)
    for g in range(len(run_count)):
        q = to_qrels[g]
        n_judged = qrels_count[q] if q >= 0 else 0
        mask = np.uint64(_size(run_count[g] + n_judged) - 1)
        for t in range(qrels_start[q] if q >= 0 else 0, (qrels_start[q] if q >= 0 else 0)
                       + n_judged):
            row = qrels_order[t] if len(qrels_order) else t
            h = qrels_hashes[row]
            slot = _slot(stamp, key, g + 1, h, mask)
            if stamp[slot] == g + 1:
                judged[slot] = -2
            else:
                stamp[slot], key[slot], judged[slot], ranked[slot] = g + 1, h, row, 0
        first = run_start[g]
        for t in range(first, first + run_count[g]):
            row = run_order[t] if len(run_order) else t
            h = run_hashes[row]
            slot = _slot(stamp, key, g + 1, h, mask)
            if stamp[slot] == g + 1:
                ranked[slot] = min(ranked[slot] + 1, 2)
            else:
                stamp[slot], key[slot], judged[slot], ranked[slot] = g + 1, h, -1, 1
            slot_of[t - first] = slot
        for t in range(first, first + run_count[g]):
            row = run_order[t] if len(run_order) else t
            slot = slot_of[t - first]
            j = judged[slot]
            found[row], grade[row] = -1, np.nan
            if ranked[slot] == 2 or j == -2:
                found[row] = -2
            elif j >= 0 and _equal(run_offsets, run_data, row, qrels_offsets, qrels_data, j):
                found[row], grade[row] = j, qrels_grade[j]



@_kernel
def in_order(codes, values, descending):  # pragma: no cover - compiled
    """How rows stand, by group code and then ``values`` (descending or ascending): 0 in
    order, no two equal values in a group; 1 in order, with equal values in a group; 2 not
    in order (a group's rows apart, or values out of order)."""
    ties = False
    for i in range(1, len(codes)):
        if codes[i] != codes[i - 1]:
            if codes[i] < codes[i - 1]:
                return 2
            continue
        a, b = values[i - 1], values[i]
        if a == b:
            ties = True
        elif (a < b) if descending else (a > b):
            return 2
    return 1 if ties else 0


# ---- the TREC reader's loops (``releval.data.trec_fast``) ----

_POW10 = np.array([float(10 ** k) for k in range(23)])  # every one exact in a double
_EXACT = 1 << 53  # an integer mantissa up to this is exact in a double


@_kernel
def _digits(buf, j, b, mantissa):  # pragma: no cover - compiled
    """(the index past the digits from ``j``, ``mantissa`` with them appended), stopping once
    the mantissa passes 2^53 (the value is then not exact)."""
    while j < b and 48 <= buf[j] <= 57 and mantissa <= _EXACT:
        mantissa = mantissa * 10 + (buf[j] - 48)
        j += 1
    return j, mantissa


@_kernel
def _decimal(buf, a, b):  # pragma: no cover - compiled
    """(value, True) of the bytes buf[a:b] where they are a plain decimal ``-?d+(.d+)?
    ([eE][+-]?d+)?`` that one IEEE operation rounds exactly (an integer mantissa up to 2^53,
    a power of ten up to 22: Clinger's fast path, strtod's value); else (NaN, False)."""
    negative = buf[a] == 45
    j = a + 1 if negative else a
    scale = 0
    start = j
    j, mantissa = _digits(buf, j, b, 0)
    if j == start:
        return np.nan, False
    if j < b and buf[j] == 46:  # the fraction
        start = j + 1
        j, mantissa = _digits(buf, start, b, mantissa)
        if j == start:
            return np.nan, False
        scale = start - j
    if j < b and (buf[j] == 101 or buf[j] == 69):  # the exponent
        j += 1
        sign = -1 if j < b and buf[j] == 45 else 1
        if j < b and (buf[j] == 43 or buf[j] == 45):
            j += 1
        start = j
        power = 0
        while j < b and 48 <= buf[j] <= 57 and j - start < 4:
            power = power * 10 + (buf[j] - 48)
            j += 1
        if j == start:
            return np.nan, False
        scale += sign * power
    if j != b or mantissa > _EXACT or scale < -22 or scale > 22:
        return np.nan, False
    value = float(mantissa)
    value = value * _POW10[scale] if scale >= 0 else value / _POW10[-scale]
    return (-value if negative else value), True


@_kernel
def _integer(buf, a, b):  # pragma: no cover - compiled
    """(value, True) of the bytes buf[a:b] where they are ``-?d{1,17}``; else (0, False)."""
    negative = buf[a] == 45
    j = a + 1 if negative else a
    if j == b or b - j > 17:
        return 0, False
    value = 0
    while j < b and 48 <= buf[j] <= 57:
        value = value * 10 + (buf[j] - 48)
        j += 1
    if j != b:
        return 0, False
    return (-value if negative else value), True


@_kernel
def trec_block(buf, delim, other, role, slot, begins, ends, changes, offsets, data, floats,
               ints, slow):  # pragma: no cover - compiled
    """Cut ``buf`` (whole lines, the last one's line feed optional, CR LF allowed) into
    lines of ``len(role)`` non-empty fields separated by the byte ``delim``, and keep what
    ``role[f]`` asks of field f of each line i: 1 (an id) its place, begins/ends[slot[f], i],
    and changes[slot[f], i], whether it differs from line i - 1's (True for line 0); 2 (a
    text) its bytes, in ``data`` from offsets[0] on (offsets[i + 1] ends line i's); 3 / 4 (a
    decimal / an integer) floats[i] / ints[i], or where the compiled parse does not apply
    slow[i] and its place (begins/ends[slot[f], i]); 0 nothing. Returns (lines, common):
    common is False at the first line of another shape (blank, an empty field, more or fewer
    fields, the byte ``other``, a quote, a NUL byte, a carriage return that does not end a
    line)."""
    n_fields = len(role)
    stop = len(buf)
    line = f = begin = i = 0
    while i < stop:  # one field a turn
        while True:
            while i < stop and buf[i] > 34:  # neither blank, line end, quote nor NUL
                i += 1
            if i == stop:
                c = 10  # the last line, without its line feed
                break
            c = buf[i]
            if c == delim or c == 10 or c == 13:
                break
            if c == other or c == 34 or c == 0:
                return line, False
            i += 1  # another byte below the quote: part of the field
        end = i
        last = c != delim
        if end == begin or (f + 1 == n_fields) != last:
            return line, False
        if c == 13 and i + 1 < stop:
            if buf[i + 1] != 10:
                return line, False
            i += 1
        r = role[f]
        if r == 1:
            s = slot[f]
            begins[s, line], ends[s, line] = begin, end
            same = line > 0 and end - begin == ends[s, line - 1] - begins[s, line - 1]
            k, p = 0, begins[s, line - 1] if line > 0 else 0
            while same and k < end - begin:
                same = buf[begin + k] == buf[p + k]
                k += 1
            changes[s, line] = not same
        elif r == 2:
            at = offsets[line]
            data[at:at + end - begin] = buf[begin:end]
            offsets[line + 1] = at + end - begin
        elif r == 3 or r == 4:
            if r == 3:
                value, ok = _decimal(buf, begin, end)
                floats[line] = value
            else:
                number, ok = _integer(buf, begin, end)
                ints[line] = number
            slow[line] = not ok
            if not ok:
                begins[slot[f], line], ends[slot[f], line] = begin, end
        i += 1
        begin = i
        if last:
            line += 1
            f = 0
        else:
            f += 1
    return line, f == 0


@_kernel
def gather_bytes(buf, begins, ends, rows, offsets, data):  # pragma: no cover - compiled
    """The bytes buf[begins[r]:ends[r]] of each r in ``rows``, one after another in ``data``
    (``offsets`` already holds where each ends)."""
    for j in range(len(rows)):
        a = begins[rows[j]]
        at = offsets[j]
        for k in range(offsets[j + 1] - at):
            data[at + k] = buf[a + k]


for _name in _KERNELS:  # the plain functions leave the module: ``__getattr__`` compiles them
    del globals()[_name]
