"""Membership of string ids in C: pandas' ``isin`` on Arrow-backed strings builds its value
set one Python scalar at a time (about 1 s per 100,000 values), this asks pyarrow."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def member(values: pd.Series | pd.Index, among: Iterable) -> np.ndarray:
    """``values.isin(among)`` as a boolean array (a null is in ``among`` when one is there);
    columns that are not both strings are left to pandas."""
    left, right = pa.array(values, from_pandas=True), pa.array(among, from_pandas=True)
    if not (pa.types.is_string(left.type) or pa.types.is_large_string(left.type)) \
            or right.type not in (left.type, pa.null()):
        return pd.Series(values).isin(pd.Series(among)).to_numpy(dtype=bool)
    return pc.is_in(left, value_set=right.cast(left.type).unique()).to_numpy(
        zero_copy_only=False)
