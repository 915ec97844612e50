"""Id columns (query_id, doc_id) as Arrow strings, and the few operations on them the engine
needs: whole, encoded as codes, compared with neighbours, looked up."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from releval.data import contracts as S
from releval.metrics import compiled

# a run of equal neighbours shorter than this on average: encode by hashing, not by runs
RUN_LENGTH = 4


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


def whole(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def encode(arr: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray, bool]:
    """(uniques, codes, contiguous) of a string array, codes in order of first appearance;
    ``contiguous``: every value's rows are consecutive (a ranked list's query ids, a qrels
    file's), found by comparing neighbours instead of hashing every row."""
    n = len(arr)
    if n > 1:
        starts = np.flatnonzero(np.r_[True, ~same_as_previous(arr)])
        heads = whole(arr.take(pa.array(starts))) if len(starts) * RUN_LENGTH <= n else None
        if heads is not None and len(pc.unique(heads)) == len(heads):
            return heads, np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n])), True
    elif n == 1:
        return whole(arr), np.zeros(1, np.int64), True
    encoded = whole(arr).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return encoded.dictionary, codes, n == 0


def same_as_previous(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """For i ≥ 1: string i equals string i - 1 (a compiled loop over each chunk's bytes)."""
    same = np.empty(max(len(arr) - 1, 0), bool)
    at, last = 0, None
    for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
        if not len(chunk):
            continue
        if at:
            same[at - 1] = chunk[0].as_py() == last
        compiled.same_as_previous(*compiled.buffers(chunk), same[at:at + len(chunk) - 1])
        at, last = at + len(chunk), chunk[len(chunk) - 1].as_py()
    return same


def lookup(values: pa.Array, uniques: pa.Array) -> np.ndarray:
    """Position of each value in ``uniques``, -1 where absent."""
    found = pc.index_in(values, value_set=uniques)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def query_ids(frame: pd.DataFrame, default: str) -> pa.Array | pa.ChunkedArray:
    """A run's or qrels' query ids as Arrow large strings."""
    return _strings(frame, S.QUERY_ID, default)


def doc_ids(frame: pd.DataFrame, default: str) -> pa.Array | pa.ChunkedArray:
    """A run's or qrels' doc ids as Arrow large strings."""
    return _strings(frame, S.DOC_ID, default)
