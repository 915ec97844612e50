"""Judged rows in, accepted judgments out: every row checked against the pool, the good kept
in the raw-judgments contract (``S.RAW_JUDGMENT_COLUMNS``, then ``S.HARD_NEGATIVE``: the
judge marked the pair a hard negative), the bad quarantined with one reason from
``REASONS``; and the checks agreement and adjudication read accepted grades with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.membership import member
from releval.errors import InputError
from releval.judging.files import CANCELLED, MALFORMED

JUDGMENT_KEY = [S.QUERY_ID, S.DOC_ID, S.ANNOTATOR]
ID_COLUMNS = (S.QUERY_ID, S.DOC_ID, S.BLIND_ID, S.ANNOTATOR, S.GUIDELINE, S.POOL_ID)
ACCEPTED_COLUMNS = (*S.RAW_JUDGMENT_COLUMNS, S.HARD_NEGATIVE)

# Quarantine reasons, in the order they are checked: a row gets the first that applies.
MALFORMED_ROW = "more fields than the header"
WRONG_POOL = "row for another pool"
UNKNOWN_BLIND_ID = "unknown blind id"
MISSING_ANNOTATOR = "missing annotator"
CANCELLED_ANNOTATION = "cancelled annotation"
MISSING_GRADE = "grade missing"
NOT_AN_INTEGER = "grade not an integer"
OUT_OF_RANGE = "grade outside 0..max_grade"
BAD_TIMESTAMP = "judged_at not a timestamp"
BAD_MARK = "hard_negative not yes or no"
CONFLICT = "conflicting grades or marks from one annotator"
REASONS = (MALFORMED_ROW, WRONG_POOL, UNKNOWN_BLIND_ID, MISSING_ANNOTATOR, CANCELLED_ANNOTATION,
           MISSING_GRADE, NOT_AN_INTEGER, OUT_OF_RANGE, BAD_TIMESTAMP, BAD_MARK, CONFLICT)


@dataclass(frozen=True, eq=False)
class Ingested:
    """All accepted judgments so far (``ACCEPTED_COLUMNS``), the quarantined rows (their
    original fields as text, plus ``reason``) and the counts, where
    rows_in = accepted_new + already_accepted + quarantined."""

    accepted: pd.DataFrame
    quarantine: pd.DataFrame
    counts: dict


def carried_over(previous: pd.DataFrame | None, pool_id: str) -> pd.DataFrame | None:
    """The accepted judgments kept from earlier runs when they belong to pool ``pool_id``
    (judged by its first row); None when there are none or they belong to another pool."""
    if previous is None or previous.empty or S.POOL_ID not in previous.columns:
        return None
    return previous if previous[S.POOL_ID].iloc[0] == pool_id else None


def ingest(rows: pd.DataFrame, pool: pd.DataFrame, *, pool_id: str, max_grade: int = 3,
           guideline: str, accepted: pd.DataFrame | None = None) -> Ingested:
    """Check every judged row against pool ``pool_id``; accept the good, quarantine the bad.

    ``rows`` needs blind_id and grade (pool_id, annotator, judged_at, cancelled and
    hard_negative optional; other columns are carried into the quarantine). A row is
    quarantined with the first reason of ``REASONS`` that applies; a blank pool_id counts as
    this pool. Accepted rows are mapped blind_id → (query_id, doc_id) through the pool and get
    ``guideline``, ``pool_id``, judged_at in UTC (NaT when not given) and hard_negative as
    bool (``releval.data.contracts.read_marks``: a missing mark is False; the mark of
    a relevant grade is settled on the qrels, ``adjudication.with_hard_negatives``).

    One annotator, one pair, one judgment: if an annotator's rows for a pair disagree in grade
    or mark with each other or with a judgment already in ``accepted``, all of those new rows
    are quarantined (``CONFLICT``) and the accepted judgment stands. Identical repeats (same
    pair, annotator, grade and mark, e.g. the same file ingested twice) count as
    ``already_accepted`` and change nothing.
    """
    if S.BLIND_ID not in rows or S.GRADE not in rows:
        raise InputError(f"judgments need columns {S.BLIND_ID} and {S.GRADE}; "
                         f"found {list(rows.columns)}", "judgments")
    rows = rows.reset_index(drop=True)
    pairs = _pool_pairs(pool, str(pool_id))
    previous = _raw(pd.DataFrame(columns=list(ACCEPTED_COLUMNS)) if accepted is None
                    else accepted)
    if previous.duplicated(JUDGMENT_KEY).any():
        raise InputError("accepted judgments repeat a (query_id, doc_id, annotator)", "accepted")

    blind, annotator = _text(rows[S.BLIND_ID]), _text(_column(rows, S.ANNOTATOR))
    row_pool, grade = _text(_column(rows, S.POOL_ID)), _text(rows[S.GRADE])
    number = pd.to_numeric(grade, errors="coerce").astype("float64")
    when = _text(_column(rows, S.JUDGED_AT))
    judged_at = pd.to_datetime(when, utc=True, errors="coerce", format="mixed")
    mark = S.read_marks(_column(rows, S.HARD_NEGATIVE))
    checks = {
        MALFORMED_ROW: _flag(rows, MALFORMED),
        WRONG_POOL: row_pool.notna() & (row_pool != str(pool_id)),
        UNKNOWN_BLIND_ID: pd.Series(~member(blind, pairs.index), index=blind.index),
        MISSING_ANNOTATOR: annotator.isna(),
        CANCELLED_ANNOTATION: _flag(rows, CANCELLED),
        MISSING_GRADE: grade.isna(),
        NOT_AN_INTEGER: number.isna() | (number != np.floor(number)),
        OUT_OF_RANGE: ~number.between(0, max_grade),
        BAD_TIMESTAMP: when.notna() & judged_at.isna(),
        BAD_MARK: mark.isna(),
    }
    reason = pd.Series(np.select([m.fillna(False).to_numpy(bool) for m in checks.values()],
                                 list(checks), default=""), index=rows.index)

    ok = reason == ""
    new = _raw(pd.DataFrame({
        S.QUERY_ID: blind[ok].map(pairs[S.QUERY_ID]), S.DOC_ID: blind[ok].map(pairs[S.DOC_ID]),
        S.BLIND_ID: blind[ok], S.ANNOTATOR: annotator[ok], S.GRADE: number[ok],
        S.JUDGED_AT: judged_at[ok], S.GUIDELINE: guideline, S.POOL_ID: str(pool_id),
        S.HARD_NEGATIVE: mark[ok].astype(bool)}))
    judgment = [S.GRADE, S.HARD_NEGATIVE]  # what one annotator says of one pair
    prior = new[JUDGMENT_KEY].merge(previous[[*JUDGMENT_KEY, *judgment]], how="left",
                                    on=JUDGMENT_KEY).set_axis(new.index)
    known = prior[S.GRADE].notna()
    conflict = (new.groupby(JUDGMENT_KEY)[judgment].transform("nunique").gt(1).any(axis=1)
                | (known & prior[judgment].ne(new[judgment]).any(axis=1)))
    repeat = ~conflict & (known | new.duplicated(JUDGMENT_KEY))
    reason[new.index[conflict]] = CONFLICT

    bad = reason != ""
    quarantine = rows[bad].astype("string").assign(**{S.REASON: reason[bad]})
    everything = _raw(pd.concat([previous, new[~conflict & ~repeat]], ignore_index=True))
    counts = {"rows_in": len(rows), "accepted_new": int((~conflict & ~repeat).sum()),
              "already_accepted": int(repeat.sum()), "quarantined": int(bad.sum()),
              "by_reason": {r: int(n) for r, n in
                            reason[bad].value_counts().reindex(REASONS, fill_value=0).items()}}
    if counts["rows_in"] != (counts["accepted_new"] + counts["already_accepted"]
                             + counts["quarantined"]):
        raise RuntimeError(f"ingestion counts do not reconcile: {counts}")
    return Ingested(everything.sort_values(JUDGMENT_KEY, ignore_index=True),
                    quarantine.reset_index(drop=True), counts)


def checked_grades(judgments: pd.DataFrame, max_grade: int) -> pd.DataFrame:
    """Judgments with integer grades in 0..max_grade (as int64) and one grade per
    (query_id, doc_id, annotator), ids as str; an InputError naming the first row that breaks
    either rule."""
    S.require_columns(judgments, (*JUDGMENT_KEY, S.GRADE), "judgments")
    out = judgments.astype({c: str for c in JUDGMENT_KEY})
    grade = pd.to_numeric(out[S.GRADE], errors="coerce")
    bad = ~grade.between(0, max_grade) | (grade != np.floor(grade))
    if bad.any():
        raise InputError(f"grade must be an integer in 0..{max_grade}, got "
                         f"{out[S.GRADE][bad].iloc[0]!r}", "judgments", f"row {bad.idxmax()}")
    twice = out.duplicated(JUDGMENT_KEY)
    if twice.any():
        raise InputError("one grade per (query_id, doc_id, annotator); repeated: "
                         f"{tuple(out.loc[twice, JUDGMENT_KEY].iloc[0])}", "judgments")
    return out.assign(**{S.GRADE: grade.astype("int64")})


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame else pd.Series(None, index=frame.index, dtype=object)


def _flag(frame: pd.DataFrame, name: str) -> pd.Series:
    """A yes/no column as bool; missing values (and a missing column) are False."""
    return _column(frame, name).astype(object).fillna(False).astype(bool)


def _text(values: pd.Series) -> pd.Series:
    """Values as stripped strings; blanks and missing values become <NA>."""
    return values.astype("string").str.strip().replace("", pd.NA)


def _pool_pairs(pool: pd.DataFrame, pool_id: str) -> pd.DataFrame:
    """(query_id, doc_id) indexed by blind_id, for the rows of one pool."""
    missing = [c for c in (S.POOL_ID, S.QUERY_ID, S.DOC_ID, S.BLIND_ID) if c not in pool]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", "pool")
    mine = pool[pool[S.POOL_ID].astype(str) == pool_id]
    if mine.empty:
        raise InputError(f"pool_id {pool_id!r} has no rows", "pool")
    blind = mine[S.BLIND_ID].astype(str)
    if blind.duplicated().any():
        raise InputError(f"blind_id must be unique in a pool; repeated: "
                         f"{', '.join(blind[blind.duplicated()].unique()[:10])}", "pool")
    return pd.DataFrame({S.QUERY_ID: mine[S.QUERY_ID].astype(str).to_numpy(),
                         S.DOC_ID: mine[S.DOC_ID].astype(str).to_numpy()},
                        index=pd.Index(blind.to_numpy(), name=S.BLIND_ID))


def _raw(frame: pd.DataFrame) -> pd.DataFrame:
    """``ACCEPTED_COLUMNS`` with their types (ids str, grade int, UTC, mark bool); judgments
    accepted without a mark column are not marked."""
    S.require_columns(frame, S.RAW_JUDGMENT_COLUMNS, "accepted")
    if S.HARD_NEGATIVE not in frame.columns:
        frame = frame.assign(**{S.HARD_NEGATIVE: False})
    out = frame[list(ACCEPTED_COLUMNS)].astype({c: str for c in ID_COLUMNS}
                                               | {S.GRADE: "int64", S.HARD_NEGATIVE: bool})
    out[S.JUDGED_AT] = pd.to_datetime(out[S.JUDGED_AT], utc=True).astype("datetime64[us, UTC]")
    return out
