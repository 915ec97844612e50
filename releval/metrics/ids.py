"""Id columns (query_id, doc_id) as Arrow strings, and the few operations on them the engine
needs: whole, encoded as codes, compared with neighbours, looked up. A categorical query_id
column (the TREC reader's compact form) is encoded from its codes, never string by string."""

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
    """A column of ids as Arrow strings (large strings, or the strings of a reader's Arrow
    column as they are: 4-byte offsets stay), in the chunks the frame holds (never copied
    into one); numbers are written as strings."""
    values = _checked(frame, column, default)
    if not pd.api.types.is_string_dtype(values):
        values = values.astype(str)
    arr = pa.array(values.array) if len(values) else pa.array([], pa.large_string())
    if isinstance(arr, pa.ChunkedArray) and arr.num_chunks == 1:
        arr = arr.chunk(0)
    return arr if arr.type in (pa.string(), pa.large_string()) else arr.cast(pa.large_string())


def _checked(frame: pd.DataFrame, column: str, default: str) -> pd.Series:
    """``S.ids``: a categorical column checked by its codes (no mask of a row each)."""
    values = frame[column] if column in frame.columns else None
    if values is not None and isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.array.codes
        return S.ids(frame, column, default) if len(codes) and codes.min() < 0 else values
    return S.ids(frame, column, default)


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
    return encoded.dictionary, codes, bool((codes[1:] >= codes[:-1]).all())


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


def _categories(values: pd.Series) -> pa.Array:
    """A categorical column's categories as one Arrow large-string array (no copy of one)."""
    arr = pa.array(values.cat.categories.array)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
    return arr.cast(pa.large_string())


def query_runs(frame: pd.DataFrame, default: str) -> tuple[pa.Array, np.ndarray] | None:
    """(each run's query id, the row where it starts) of a run's or qrels' query ids in runs
    of equal neighbours, when each query's rows are one run; else None."""
    values = _checked(frame, S.QUERY_ID, default)
    n = len(values)
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.array.codes
        starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
        starts = np.r_[np.zeros(min(n, 1), starts.dtype), starts]
        heads = codes[starts]
        if len(np.unique(heads)) < len(heads):
            return None
        return _categories(values).take(pa.array(heads)), starts
    arr = query_ids(frame, default)
    starts = np.flatnonzero(np.r_[n > 0, ~same_as_previous(arr)])
    heads = whole(arr.take(pa.array(starts)))
    return (heads, starts) if len(pc.unique(heads)) == len(heads) else None


def query_codes(frame: pd.DataFrame, default: str) -> tuple[pa.Array, np.ndarray, bool]:
    """``encode`` of a run's or qrels' query ids; a categorical column by its codes (its runs,
    else ``pd.factorize``), never string by string."""
    values = _checked(frame, S.QUERY_ID, default)
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return encode(query_ids(frame, default))
    found = query_runs(frame, default)
    if found is not None:
        heads, starts = found
        return heads, np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(values)])), \
            True
    first, uniques = pd.factorize(values.array.codes)
    return _categories(values).take(pa.array(uniques)), first.astype(np.int64), False


def lookup(values: pa.Array, uniques: pa.Array) -> np.ndarray:
    """Position of each value in ``uniques``, -1 where absent."""
    found = pc.index_in(values.cast(uniques.type), value_set=uniques)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def query_ids(frame: pd.DataFrame, default: str) -> pa.Array | pa.ChunkedArray:
    """A run's or qrels' query ids as Arrow large strings (the run's and the qrels' distinct
    ids are compared with each other)."""
    return _strings(frame, S.QUERY_ID, default).cast(pa.large_string())


def doc_ids(frame: pd.DataFrame, default: str) -> pa.Array | pa.ChunkedArray:
    """A run's or qrels' doc ids as Arrow strings (``_strings``)."""
    return _strings(frame, S.DOC_ID, default)
