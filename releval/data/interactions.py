"""Recommendation mode's data (docs/architecture.md): an interaction log and an item table,
read and checked, cut in time, and turned into the documents / queries / qrels contracts.

- ``read_interactions(folder)``: ``interactions.csv|parquet`` (user_id, item_id, timestamp,
  label: ``S.INTERACTION_COLUMNS``, + context columns such as country) and
  ``items.csv|parquet`` (item_id, title: ``S.ITEM_COLUMNS``, + optional category and
  first_seen). CSV cells are read as strings, so ids keep their exact spelling (``M`` and
  ``m``, ``85123A``, leading zeros); timestamps are UTC (naive ones are taken to be UTC).
- ``cuts_of(log, method, cuts, quantiles)``: the two cuts t1 < t2 (train < t1 <= validation
  < t2 <= test).
- ``user_queries(...)``: the users as queries at each cut (``RecData``), and at further
  horizons their query sets and positives (``S.HORIZON_COLUMNS``).

Bad input is one InputError naming the file, the line (CSV) or row (parquet) and the rule.
Nothing is dropped: exact repeats of a line are real repeat purchases, kept and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import TIME, as_utc
from releval.data.history import user_query_id
from releval.data.readers import read_strings
from releval.errors import InputError

INTERACTIONS, ITEMS = "interactions", "items"
VALIDATION, TEST = "validation", "test"
NEVER = pd.Timedelta(days=1)  # unseen items are published this long after the log's end


# --- reading --------------------------------------------------------------------------------


def _path(folder: Path, stem: str) -> Path:
    """``<stem>.csv`` or ``<stem>.parquet`` in ``folder``: exactly one of them."""
    found = [p for p in (folder / f"{stem}.csv", folder / f"{stem}.parquet") if p.is_file()]
    if not found:
        raise InputError(f"no {stem}.csv or {stem}.parquet", str(folder))
    if len(found) > 1:
        raise InputError(f"both {stem}.csv and {stem}.parquet: keep one", str(folder))
    return found[0]


def _ids(frame: pd.DataFrame, column: str) -> None:
    """An id column, in place, as strings; missing or blank is an InputError."""
    values = frame[column]
    text = values.astype(str)
    S.fail_first(frame, column, (values.isna() | (text.str.strip() == "")).to_numpy(),
                 f"{column} is empty")
    frame[column] = text


def _times(frame: pd.DataFrame, column: str, required: bool) -> None:
    """A timestamp column, in place, as UTC (naive values are UTC); missing is an InputError
    when ``required``, unparsable always."""
    values = frame[column]
    parsed = as_utc(values)
    S.fail_first(frame, column, (parsed.isna() & values.notna()).to_numpy(),
                 lambda i: f"{column} must be an ISO-8601 timestamp, got {values.iloc[i]!r}")
    if required:
        S.fail_first(frame, column, parsed.isna().to_numpy(), f"{column} is missing")
    frame[column] = parsed.astype(TIME)


def _labels(frame: pd.DataFrame) -> None:
    """The label column, in place, as int64 0 or 1."""
    raw = frame[S.LABEL]
    label = pd.to_numeric(raw, errors="coerce")
    S.fail_first(frame, S.LABEL, (~label.isin([0, 1])).to_numpy(),
                 lambda i: f"label must be 0 or 1, got {raw.iloc[i]!r}")
    frame[S.LABEL] = label.astype(np.int64)


def _items(path: Path) -> pd.DataFrame:
    """items: item_id (non-empty, unique), title (missing: ""), optional category (missing:
    "") and first_seen (UTC; missing: the item's first interaction)."""
    frame = S.require_columns(read_strings(path), S.ITEM_COLUMNS, str(path))
    _ids(frame, S.ITEM_ID)
    S.require_unique(frame, S.ITEM_ID, str(path))
    frame[S.TITLE] = frame[S.TITLE].astype(str).fillna("")
    if S.CATEGORY in frame.columns:
        frame[S.CATEGORY] = frame[S.CATEGORY].astype(str).fillna("")
    if S.FIRST_SEEN in frame.columns:
        _times(frame, S.FIRST_SEEN, required=False)
    return frame[[c for c in (*S.ITEM_COLUMNS, S.CATEGORY, S.FIRST_SEEN) if c in frame.columns]]


def _log(path: Path) -> pd.DataFrame:
    """interactions: user_id and item_id non-empty, timestamp a UTC time, label 0 or 1, at
    least one row; other columns (context) are kept as read."""
    frame = S.require_columns(read_strings(path), S.INTERACTION_COLUMNS, str(path))
    if frame.empty:
        raise InputError("no interactions: the table is empty", str(path))
    _ids(frame, S.USER_ID)
    _ids(frame, S.ITEM_ID)
    _times(frame, S.TIMESTAMP, required=True)
    _labels(frame)
    return frame


def read_interactions(folder: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The interaction log and the item table of ``folder`` (module docstring), checked: the
    rules of each table, then every interaction names an item of the table and is not
    before that item's first_seen."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("expected a folder with interactions.csv|parquet and "
                         "items.csv|parquet", str(folder))
    items_path = _path(folder, ITEMS)
    log, items = _log(_path(folder, INTERACTIONS)), _items(items_path)
    position = pd.Index(items[S.ITEM_ID]).get_indexer(log[S.ITEM_ID])
    S.fail_first(log, INTERACTIONS, position < 0,
                 lambda i: f"item_id {log[S.ITEM_ID].iloc[i]!r} is not in {items_path.name}")
    if S.FIRST_SEEN in items.columns:
        first_seen = items[S.FIRST_SEEN].take(position).set_axis(log.index)
        S.fail_first(log, INTERACTIONS, (log[S.TIMESTAMP] < first_seen).to_numpy(),
                     lambda i: f"interaction at {log[S.TIMESTAMP].iloc[i]} is before the "
                     f"first_seen {first_seen.iloc[i]} of item {log[S.ITEM_ID].iloc[i]!r} "
                     f"({items_path.name} {S.where(items, items.index[position[i]])})")
    return log, items


# --- cuts -----------------------------------------------------------------------------------


def cuts_of(log: pd.DataFrame, method: str, cuts: tuple[str, str] | None,
            quantiles: tuple[float, float]) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The cuts (t1, t2), UTC: ``dates`` parses ``cuts`` (naive dates are UTC),
    ``quantiles`` takes those quantiles of the interaction timestamps (interpolation
    'higher', as the query split does). t1 < t2, and t2 at or before the last interaction
    (else no test user could have a positive)."""
    if method == "dates":
        if cuts is None or len(cuts) != 2:
            raise InputError("split.method dates needs split.cuts: [validation_from, "
                             "test_from]", "params")
        try:
            t1, t2 = (pd.to_datetime(c, utc=True) for c in cuts)
        except (ValueError, TypeError) as exc:
            raise InputError(f"split.cuts must be ISO dates, got {list(cuts)}: {exc}",
                             "params") from None
    elif method == "quantiles":
        q1, q2 = quantiles
        if not 0 < q1 < q2 < 1:
            raise InputError(f"split.quantiles must be increasing within (0, 1), got "
                             f"{list(quantiles)}", "params")
        t1, t2 = (log[S.TIMESTAMP].quantile(q, interpolation="higher") for q in (q1, q2))
    else:
        raise InputError(f"split.method {method} does not apply to interactions: the cuts "
                         "define the split (use dates or quantiles)", "params")
    if not t1 < t2:
        raise InputError(f"the cuts must be increasing, got {t1} then {t2}", "params")
    last = log[S.TIMESTAMP].max()
    if t2 > last:
        raise InputError(f"the test cut {t2} is after the last interaction ({last}): no test "
                         "user could have a positive", "params")
    return t1, t2


# --- user-queries ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RecData:
    """Users as queries: documents (the items, ``S.DOCUMENT_COLUMNS``), queries
    (``S.QUERY_COLUMNS`` + history, held_out, the context columns), qrels (query_id, doc_id,
    grade = 1), given_split (query_id, split), windows ({split: (cut, horizon end)}), the
    report of what was counted and horizons (``S.HORIZON_COLUMNS``: each further horizon's
    user-queries with their positives)."""

    documents: pd.DataFrame
    queries: pd.DataFrame
    qrels: pd.DataFrame
    given_split: pd.DataFrame
    windows: dict[str, tuple[pd.Timestamp, pd.Timestamp]]
    report: dict
    horizons: pd.DataFrame



def _constant(value, n: int, dtype=str) -> pd.Series:
    return pd.Series(value, index=pd.RangeIndex(n), dtype=dtype)


def _documents(items: pd.DataFrame, log: pd.DataFrame) -> pd.DataFrame:
    """The items as documents: text = title (+ " " + category), published_at = first_seen,
    else the first interaction, else a day after the log's end (never recommendable)."""
    first = log.groupby(S.ITEM_ID)[S.TIMESTAMP].min()
    published = items[S.ITEM_ID].map(first).astype(TIME)
    if S.FIRST_SEEN in items.columns:
        published = items[S.FIRST_SEEN].astype(TIME).fillna(published)
    published = published.fillna(log[S.TIMESTAMP].max() + NEVER)
    text = items[S.TITLE]
    if S.CATEGORY in items.columns:
        category = items[S.CATEGORY]
        text = text.where(category == "", text + " " + category)
    n = len(items)
    return pd.DataFrame({
        S.DOC_ID: items[S.ITEM_ID].to_numpy(), S.TITLE: items[S.TITLE].to_numpy(),
        S.TEXT: text.to_numpy(), S.SOURCE_ID: items[S.ITEM_ID].to_numpy(),
        S.PUBLISHED_AT: published.array, S.STATUS: _constant("published", n),
        S.DELETED_AT: _constant(pd.NaT, n, TIME), S.TENANT: _constant("default", n),
        S.ACL: [[] for _ in range(n)]})


def _held_out(users: np.ndarray, share: float, seed: int) -> np.ndarray:
    """round(share · n) of the sorted ``users``, drawn with ``default_rng(seed)``."""
    picks = np.random.default_rng(seed).choice(len(users), round(share * len(users)),
                                               replace=False)
    return users[np.sort(picks)]


def _pairs(log: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    return log.loc[mask, [S.USER_ID, S.ITEM_ID]].drop_duplicates()


def _at_cut(log: pd.DataFrame, split: str, t: pd.Timestamp, end: pd.Timestamp,
            exclude_seen: bool, held: np.ndarray, context: list[str],
            published: pd.Series) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The queries, qrels and counts of one cut t with horizon end ``end`` (``log`` in time
    order)."""
    ts, user = log[S.TIMESTAMP], log[S.USER_ID]
    before = (ts < t).to_numpy()
    window = ((ts >= t) & (ts < end)).to_numpy()
    positive = (log[S.LABEL] == 1).to_numpy()
    users = np.sort(user[before | window].unique().astype(object))
    ids = np.array([user_query_id(u, split) for u in users], dtype=object)
    n = len(users)
    history = user[before].value_counts().reindex(users, fill_value=0).to_numpy(np.int64)
    queries = pd.DataFrame({
        S.QUERY_ID: pd.Series(ids, dtype=str), S.TEXT: _constant("", n),
        S.ISSUED_AT: _constant(t, n, TIME), S.USER_ID: pd.Series(users, dtype=str),
        S.TENANT: _constant("default", n), S.GROUPS: [[] for _ in range(n)],
        S.ROLE: _constant("guest", n), S.TAGS: [[] for _ in range(n)],
        S.WEIGHT: np.ones(n), S.HISTORY: history, S.HELD_OUT: np.isin(users, held)})
    if context:  # the last value before t, else the first one in the horizon
        last = log.loc[before].groupby(S.USER_ID)[context].last().reindex(users)
        first = log.loc[window].groupby(S.USER_ID)[context].first().reindex(users)
        for column in context:
            queries[column] = last[column].combine_first(first[column]).to_numpy()
    found = _pairs(log, window & positive)
    seen = pd.MultiIndex.from_frame(found).isin(
        pd.MultiIndex.from_frame(_pairs(log, before & positive))) if exclude_seen \
        else np.zeros(len(found), bool)
    found = found[~seen]
    qrels = pd.DataFrame({
        S.QUERY_ID: pd.Series(ids[np.searchsorted(users, found[S.USER_ID].to_numpy())],
                              dtype=str),
        S.DOC_ID: found[S.ITEM_ID].to_numpy(), S.GRADE: np.ones(len(found), np.int64)})
    unpublished = (qrels[S.DOC_ID].map(published) > t).to_numpy()
    in_horizon = qrels[S.QUERY_ID].nunique()
    scored = qrels.loc[~unpublished, S.QUERY_ID].nunique()
    counts = {"cut": t.isoformat(), "horizon_end": end.isoformat(), "users": n,
              "users_with_positives_in_horizon": in_horizon, "users_scored": scored,
              "users_only_unpublished_positives": in_horizon - scored,
              "undefined_users": n - scored,
              "new_users": int((history == 0).sum()), "held_out_users":
              int(queries[S.HELD_OUT].sum()), "positives": len(qrels),
              "seen_positives_removed": int(seen.sum()),
              "positives_not_visible": int(unpublished.sum())}
    return queries, qrels, counts


def no_positives(log: pd.DataFrame, split: str, counts: dict) -> str:
    """Why no ``split`` user has a positive, in the log's words: its window [cut, horizon
    end) (``counts``: that split's entry of ``user_queries``' report) holds no interaction,
    only cancellations, or only positives bought before the cut (``exclude_seen``)."""
    cut, end = pd.Timestamp(counts["cut"]), pd.Timestamp(counts["horizon_end"])
    ts = log[S.TIMESTAMP]
    window = log.loc[((ts >= cut) & (ts < end)).to_numpy()]
    cancelled = int((window[S.LABEL] == 0).sum())
    if window.empty:
        why = "the log has no interaction there"
    elif cancelled == len(window):
        why = f"its {len(window):,} interactions are all cancellations (label 0)"
    else:
        why = (f"its {counts['seen_positives_removed']:,} positives were all bought by the "
               "same users before the cut (recommend.exclude_seen)")
    return (f"no {split} user has a positive interaction in the window {cut:%Y-%m-%d} … "
            f"{end:%Y-%m-%d}: {why}")


# what each per-split count of the report counts (at a cut t with horizon end e)
SPLIT_COUNTS = {
    "users": "user-queries at the cut: every user with an interaction before e",
    "users_with_positives_in_horizon": "users with a positive: a label-1 item in [t, e) "
                                       "(less items bought before t under exclude_seen)",
    "users_scored": "users with a positive visible at t (its item first seen by t): the "
                    "users a measure is defined for",
    "users_only_unpublished_positives": "users_with_positives_in_horizon − users_scored: "
                                        "every positive of theirs is an item first seen "
                                        "after t, which no route can return",
    "undefined_users": "users − users_scored: no positive visible at t (counted, never "
                       "scored)",
    "new_users": "users without an interaction before t",
    "held_out_users": "users kept out of every route's fitting data",
    "positives": "(user, item) positives in [t, e)",
    "seen_positives_removed": "positives dropped under exclude_seen: bought before t",
    "positives_not_visible": "positives whose item is first seen after t",
}


def _check_context(log: pd.DataFrame, context: list[str]) -> None:
    source = S.source_of(log, INTERACTIONS)
    taken = {*S.QUERY_COLUMNS, S.HISTORY, S.HELD_OUT}
    for column in context:
        if column not in log.columns or column in S.INTERACTION_COLUMNS:
            raise InputError(f"recommend.context column {column!r} is not a context column of "
                             f"the interactions (columns: {', '.join(map(str, log.columns))})",
                             source)
        if column in taken:
            raise InputError(f"recommend.context column {column!r} clashes with a query "
                             "column", source)


def windows_of(t1: pd.Timestamp, t2: pd.Timestamp,
               days: int) -> dict[str, tuple[pd.Timestamp, pd.Timestamp]]:
    """{split: (cut, horizon end)} for a horizon of ``days``: validation [t1, min(t1 + h,
    t2)), test [t2, t2 + h)."""
    horizon = pd.Timedelta(days=days)
    return {VALIDATION: (t1, min(t1 + horizon, t2)), TEST: (t2, t2 + horizon)}


def horizon_rows(days: int, parts: list[tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """``S.HORIZON_COLUMNS`` of one horizon from its (queries, qrels) per cut (none: an empty
    table with the columns)."""
    if not parts:
        return pd.DataFrame({S.HORIZON_DAYS: pd.Series([], dtype="int64"),
                             S.QUERY_ID: pd.Series([], dtype=str), S.POSITIVES: []})
    ids = pd.concat([q[S.QUERY_ID] for q, _ in parts], ignore_index=True)
    qrels = pd.concat([r for _, r in parts], ignore_index=True)
    found = qrels.groupby(S.QUERY_ID, sort=False)[S.DOC_ID].agg(list)
    lists = ids.map(found)
    return pd.DataFrame({S.HORIZON_DAYS: np.full(len(ids), days, np.int64),
                         S.QUERY_ID: ids.astype(str),
                         S.POSITIVES: [v if isinstance(v, list) else [] for v in lists]})


def user_queries(log: pd.DataFrame, items: pd.DataFrame, t1: pd.Timestamp, t2: pd.Timestamp,
                 horizon_days: int, exclude_seen: bool, holdout_users: float,
                 context: list[str], seed: int, horizons: tuple[int, ...] = ()) -> RecData:
    """The users as queries at t1 (validation) and t2 (test).

    At a cut t with horizon end e (validation: min(t1 + h, t2); test: t2 + h), every user
    with an interaction before e is one query ``user_query_id(user, split)`` issued at t,
    with history = its interactions (any label) before t, held_out (round(holdout_users · n)
    of the sorted users, drawn with ``default_rng(seed)``) and each ``context`` column (the
    user's last value before t, else the first in [t, e)). Its qrels (grade 1): the items
    with a label-1 interaction by the user in [t, e), less, when ``exclude_seen``, those
    with a label-1 interaction before t. A user without one is undefined (counted).
    Documents: the items (``_documents``), in the item table's order.

    At each of ``horizons`` (days, each at most ``horizon_days``, so its user-queries are
    among these) the same is done with that horizon: its user-queries and their positives are
    the rows of ``horizons`` (``S.HORIZON_COLUMNS``), exactly those a run with that
    ``horizon_days`` would make, and the report's ``horizons`` holds its per-split counts.

    The report counts, per split, the ``SPLIT_COUNTS`` (its ``definitions``); overall:
    interactions, users, items, items_interacted, items_never_recommendable,
    duplicate_rows_kept (lines repeating an earlier line's user, item, timestamp and label)
    and cancellations (label 0).
    """
    _check_context(log, context)
    log = log.sort_values(S.TIMESTAMP, kind="stable")
    documents = _documents(items, log)
    published = documents.set_index(S.DOC_ID)[S.PUBLISHED_AT]
    users = np.sort(log[S.USER_ID].unique().astype(object))
    held = _held_out(users, holdout_users, seed)
    windows = windows_of(t1, t2, horizon_days)
    parts = {split: _at_cut(log, split, t, end, exclude_seen, held, context, published)
             for split, (t, end) in windows.items()}
    further = {days: {split: _at_cut(log, split, t, end, exclude_seen, held, context, published)
                      for split, (t, end) in windows_of(t1, t2, days).items()}
               for days in horizons}
    rows = [horizon_rows(days, [(q, r) for q, r, _ in at.values()])
            for days, at in further.items()]
    by_horizon = pd.concat(rows, ignore_index=True) if rows else horizon_rows(0, [])
    queries = pd.concat([q for q, _, _ in parts.values()], ignore_index=True)
    qrels = pd.concat([r for _, r, _ in parts.values()], ignore_index=True)
    sizes = [len(q) for q, _, _ in parts.values()]
    given = pd.DataFrame({S.QUERY_ID: queries[S.QUERY_ID],
                          S.SPLIT: pd.Series(np.repeat(list(parts), sizes), dtype=str)})
    interacted = log[S.ITEM_ID].nunique()
    report = {
        "interactions": len(log), "users": len(users), "items": len(items),
        "items_interacted": interacted,
        "items_never_recommendable": int((documents[S.PUBLISHED_AT] >
                                          log[S.TIMESTAMP].max()).sum()),
        "duplicate_rows_kept": int(log.duplicated(list(S.INTERACTION_COLUMNS)).sum()),
        "cancellations": int((log[S.LABEL] == 0).sum()), "horizon_days": horizon_days,
        "exclude_seen": exclude_seen, "holdout_users": holdout_users,
        "held_out_users": len(held), "splits": {s: c for s, (_, _, c) in parts.items()},
        "definitions": SPLIT_COUNTS}
    if horizons:
        report["horizons"] = {str(days): {s: c for s, (_, _, c) in at.items()}
                              for days, at in further.items()}
    return RecData(documents, queries, qrels, given, windows, report, by_horizon)
