"""The Great Expectations expectation types the suites use (``flows.validation``), compiled to
vectorised pandas: GX's pandas-engine semantics without importing GX.

``evaluate(frame, type, kwargs)`` gives an :class:`Outcome`. As in GX: a column map check
runs on the non-null values only; a column pair or compound check leaves out the rows its
``ignore_row_if`` names (GX's defaults); a column the check reads but the frame lacks, or an
exception while checking, fails the expectation with its message and no counts.
``tests/flows/test_validation_parity.py`` holds the checks to GX on every suite.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import numpy as np
import pandas as pd


class Outcome(NamedTuple):
    """One expectation on one frame: ``unexpected`` is a row mask (None for a table-level
    expectation, or when ``error`` says why it could not be checked)."""

    success: bool
    unexpected: np.ndarray | None
    error: str | None


def _present(frame: pd.DataFrame, names) -> None:
    """Raise GX's message for the first of ``names`` that ``frame`` lacks."""
    missing = next((c for c in names if c not in frame.columns), None)
    if missing is not None:
        raise LookupError(f'Error: The column "{missing}" in BatchData does not exist.')


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    _present(frame, (name,))
    return frame[name]


def _cols(frame: pd.DataFrame, names) -> pd.DataFrame:
    _present(frame, names)
    return frame[list(names)]


def _failing(data: pd.Series | pd.DataFrame, kept: np.ndarray, condition: Callable) -> np.ndarray:
    """True on the kept rows where ``condition``, run on those rows alone (as GX does),
    is False."""
    bad = np.zeros(len(kept), bool)
    bad[kept] = ~np.asarray(condition(data if kept.all() else data[kept]), bool)
    return bad


def _map(column: pd.Series, condition: Callable) -> np.ndarray:
    """A column map check: ``condition`` on the non-null values."""
    return _failing(column, column.notna().to_numpy(), condition)


IGNORE_ROW_IF: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # rows × columns missing
    "both_values_are_missing": lambda m: m.all(axis=1),
    "all_values_are_missing": lambda m: m.all(axis=1),
    "either_value_is_missing": lambda m: m.any(axis=1),
    "any_value_is_missing": lambda m: m.any(axis=1),
    "neither": lambda m: np.zeros(len(m), bool),
    "never": lambda m: np.zeros(len(m), bool),
}


def _rows(frame: pd.DataFrame, names, ignore_row_if: str, condition: Callable) -> np.ndarray:
    """A column pair or compound check: ``condition`` on the rows ``ignore_row_if`` keeps."""
    data = _cols(frame, names)
    return _failing(data, ~IGNORE_ROW_IF[ignore_row_if](data.isna().to_numpy()), condition)


def _in_range(values: pd.Series, min_value=None, max_value=None) -> pd.Series:
    """GX's between: vectorised on int64 / float64 / datetime columns; on any other dtype GX
    compares value by value and refuses a string against a non-string bound (and back)."""
    if min_value is None and max_value is None:
        raise ValueError("min_value and max_value cannot both be None")
    if min_value is not None and max_value is not None and min_value > max_value:
        raise ValueError("min_value cannot be greater than max_value")
    vectorised = (values.dtype in [int, float] or isinstance(values.dtype, pd.DatetimeTZDtype)
                  or pd.api.types.is_datetime64_ns_dtype(values.dtype))
    bounds = {isinstance(b, str) for b in (min_value, max_value) if b is not None}
    if not vectorised and any({isinstance(v, str)} != bounds for v in values):
        raise TypeError("Column values, min_value, and max_value must either be None or of "
                        "the same type.")
    ok = True
    if min_value is not None:
        ok = ok & (values >= min_value)
    if max_value is not None:
        ok = ok & (values <= max_value)
    return ok


def _column_to_exist(frame, column):
    return column in frame.columns


def _not_null(frame, column):
    return _col(frame, column).isna().to_numpy()


def _unique(frame, column):
    return _map(_col(frame, column), lambda v: ~v.duplicated(keep=False))


def _in_set(frame, column, value_set):
    return _map(_col(frame, column), lambda v: v.isin(value_set))


def _between(frame, column, min_value=None, max_value=None):
    return _map(_col(frame, column), partial(_in_range, min_value=min_value,
                                             max_value=max_value))


def _compound_unique(frame, column_list, ignore_row_if="all_values_are_missing"):
    return _rows(frame, column_list, ignore_row_if, lambda d: ~d.duplicated(keep=False))


def _a_greater_than_b(frame, column_A, column_B, or_equal=None,
                      ignore_row_if="both_values_are_missing"):
    def greater(d):
        a, b = d.iloc[:, 0], d.iloc[:, 1]
        return a >= b if or_equal else a > b
    return _rows(frame, (column_A, column_B), ignore_row_if, greater)


CHECKS: dict[str, Callable[..., bool | np.ndarray]] = {
    # type -> check(frame, **kwargs): a table-level verdict, or the mask of unexpected rows
    "expect_column_to_exist": _column_to_exist,
    "expect_column_values_to_not_be_null": _not_null,
    "expect_column_values_to_be_unique": _unique,
    "expect_column_values_to_be_in_set": _in_set,
    "expect_column_values_to_be_between": _between,
    "expect_compound_columns_to_be_unique": _compound_unique,
    "expect_column_pair_values_a_to_be_greater_than_b": _a_greater_than_b,
}


def evaluate(frame: pd.DataFrame, type: str, kwargs: dict) -> Outcome:
    """Expectation ``type`` with ``kwargs`` on ``frame``; an unknown type (KeyError) or
    keyword (TypeError) raises: the suite is wrong, not the frame."""
    check = CHECKS[type]
    inspect.signature(check).bind(frame, **kwargs)
    try:
        result = check(frame, **kwargs)
    except Exception as exc:  # GX's catch_exceptions: the expectation fails, saying why
        return Outcome(False, None, str(exc) or "raised")
    if isinstance(result, bool):
        return Outcome(result, None, None)
    return Outcome(not result.any(), result, None)
