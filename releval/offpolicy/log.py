"""Logged bandit feedback, read and checked (``read_log``): one row per impression, the item
shown at a slate position in a context, its reward and the logging policy's propensity.

Two layouts (``LAYOUTS``, told apart by their columns):

- ``open_bandit``: the Open Bandit Dataset's CSV (a folder holding ``all.csv``, or the CSV
  itself): a first column that is the row index, ``timestamp``, ``item_id``, ``position``,
  ``click``, ``propensity_score``, ``user_feature_*``, ``user-item_affinity_*``. ``click`` is
  the reward, ``propensity_score`` the propensity; every impression is its own context
  (``context_id`` = the row index); the dataset has no user ids.
- ``table``: a CSV or parquet table with ``S.LOG_COLUMNS`` (context_id, item_id, position,
  reward, propensity, timestamp), an optional ``user_id``; any other column is a context
  feature.

The contract (each broken rule one InputError naming the file, the line or row and the
rule): the required columns are present; ids (context_id, item_id, user_id) are non-empty and
read as strings; propensities are numbers in (0, 1]; rewards are numbers; positions are
integers in 1..slate_size (the declared slate; without one, the log's largest position);
timestamps parse as ISO 8601 (naive ones are UTC). Feature columns whose every value is a
number are numeric, the others are text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import TIME, as_utc
from releval.data.readers import read_strings
from releval.errors import InputError

OPEN_BANDIT_FILE = "all.csv"
IDS = (S.CONTEXT_ID, S.ITEM_ID, S.USER_ID)


class Layout(NamedTuple):
    """A log layout: the columns that tell it apart (a column named so, or starting so) and
    its own name of each of the log's columns (the user's words in every error)."""

    marks: tuple[str, ...]
    names: Callable[[pd.DataFrame], dict[str, str]]  # log column -> the file's column


LAYOUTS: dict[str, Layout] = {
    # click → reward, propensity_score → propensity, the first (index) column → context_id
    "open_bandit": Layout(("click", "propensity_score", "user_feature_", "user-item_affinity_"),
                          lambda frame: {S.CONTEXT_ID: str(frame.columns[0]),
                                         S.REWARD: "click",
                                         S.PROPENSITY: "propensity_score"}),
    "table": Layout((), lambda frame: {}),  # the documented table: S.LOG_COLUMNS
}
SHOWN_COLUMNS = 8  # the file's columns named in a missing-column error, at most


def _layout(frame: pd.DataFrame) -> tuple[str, Layout]:
    return next((name, layout) for name, layout in LAYOUTS.items()
                if not layout.marks or any(str(c).startswith(layout.marks)
                                           for c in frame.columns))


def _as_log(frame: pd.DataFrame, source: str) -> tuple[pd.DataFrame, Callable[[str], str]]:
    """The file's table under the log's column names, and the file's name of each log
    column; InputError naming the file's missing columns in its layout's words."""
    kind, layout = _layout(frame)
    names = layout.names(frame)
    said = {c: names.get(c, c) for c in S.LOG_COLUMNS}
    missing = [said[c] for c in S.LOG_COLUMNS if said[c] not in frame.columns]
    if missing:
        found = [str(c) for c in frame.columns]
        shown = ", ".join(found[:SHOWN_COLUMNS]) + (f", … ({len(found)} in all)"
                                                    if len(found) > SHOWN_COLUMNS else "")
        listed = [n for n in said.values() if not n.startswith("Unnamed")]  # pandas' name
        raise InputError(f"missing column(s) {', '.join(missing)} ({kind.replace('_', ' ')} "
                         f"layout: {', '.join(listed)}; found {shown})", source)
    renamed = frame.rename(columns={v: k for k, v in names.items()})
    renamed.attrs.update(frame.attrs)
    return renamed, lambda column: names.get(column, column)


def _path(path: Path) -> Path:
    if path.is_dir():
        if not (path / OPEN_BANDIT_FILE).is_file():
            raise InputError(f"no {OPEN_BANDIT_FILE} in the folder (the Open Bandit layout)",
                             str(path))
        return path / OPEN_BANDIT_FILE
    if not path.exists():
        raise InputError("file not found", str(path))
    return path


def _ids(frame: pd.DataFrame, column: str, said: Callable[[str], str]) -> None:
    values = frame[column]
    text = values.astype(str)
    S.fail_first(frame, "log", (text.str.strip() == "").to_numpy(),
                 f"{said(column)} is empty")
    frame[column] = text


def _numbers(frame: pd.DataFrame, column: str, said: Callable[[str], str]) -> np.ndarray:
    """``column`` as float64; InputError at the first value that is not a number."""
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    S.fail_first(frame, "log", np.isnan(values),
                 lambda i: f"{said(column)} must be a number, got {raw.tolist()[i]!r}")
    return values


def _positions(frame: pd.DataFrame, slate_size: int | None) -> np.ndarray:
    raw = frame[S.POSITION]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    S.fail_first(frame, "log", np.isnan(values) | (values != np.floor(values)) | (values < 1),
                 lambda i: f"position must be an integer ≥ 1, got {raw.tolist()[i]!r}")
    if slate_size is not None:
        S.fail_first(frame, "log", values > slate_size,
                     lambda i: f"position must be in 1..{slate_size} (the declared slate), got "
                     f"{raw.tolist()[i]!r}")
    return values.astype(np.int64)


def _times(frame: pd.DataFrame) -> None:
    values = frame[S.TIMESTAMP]
    parsed = as_utc(values)
    S.fail_first(frame, "log", parsed.isna().to_numpy(),
                 lambda i: f"timestamp must be an ISO-8601 timestamp, got {values.tolist()[i]!r}")
    frame[S.TIMESTAMP] = parsed.astype(TIME)


def _features(frame: pd.DataFrame) -> None:
    """Feature columns, in place: numeric where every present value is a number."""
    for column in S.feature_columns(frame):
        values = pd.to_numeric(frame[column], errors="coerce")
        if not (values.isna() & frame[column].notna()).any():
            frame[column] = values.astype(float)
        else:
            frame[column] = frame[column].astype(str)


def read_log(path: str | Path, *, slate_size: int | None = None) -> pd.DataFrame:
    """The logged feedback at ``path`` (a layout of ``LAYOUTS``) checked against the contract
    (module docstring): ``S.LOG_COLUMNS`` (ids as str, position int64, reward and propensity
    float64, timestamp UTC), ``user_id`` where the log has one, then the feature columns.
    Indexed by line (CSV) or row (parquet) number, tagged with the file."""
    if slate_size is not None:
        slate_size = S.integer("slate_size", slate_size)
    path = _path(Path(path))
    frame, said = _as_log(read_strings(path), str(path))
    if frame.empty:
        raise InputError("no impressions: the log is empty", str(path))
    for column in (*S.LOG_COLUMNS, *([S.USER_ID] if S.USER_ID in frame.columns else [])):
        S.fail_first(frame, "log", frame[column].isna().to_numpy(),
                     f"{said(column)} is missing")
    for column in IDS:
        if column in frame.columns:
            _ids(frame, column, said)
    frame[S.POSITION] = _positions(frame, slate_size)
    reward = _numbers(frame, S.REWARD, said)
    propensity = _numbers(frame, S.PROPENSITY, said)
    S.fail_first(frame, "log", (propensity <= 0) | (propensity > 1),
                 lambda i: f"{said(S.PROPENSITY)} must be in (0, 1], got "
                 f"{frame[S.PROPENSITY].tolist()[i]!r}")
    frame[S.REWARD], frame[S.PROPENSITY] = reward, propensity
    _times(frame)
    _features(frame)
    ids = [S.USER_ID] if S.USER_ID in frame.columns else []
    return frame[[*S.LOG_COLUMNS, *ids, *S.feature_columns(frame)]]


def slate_size(log: pd.DataFrame) -> int:
    """The slate a log shows: its largest position."""
    return int(log[S.POSITION].max())
