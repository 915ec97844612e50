"""Judges' files in, qrels out: reading, ingestion with quarantine, agreement, adjudication.

Flow: ``read_judgments`` (CSV export filled in by judges, or Label Studio JSON) gives one
traceable row per judgment; ``ingest`` checks every row against the pool, keeps the good
ones in the raw-judgments contract and puts the bad ones in quarantine with one reason from
``REASONS``; ``agreement`` measures how far judges agree; ``adjudicate`` turns several
grades per (query_id, doc_id) into one qrels row and queues the pairs a person must decide.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from releval import schema as S
from releval.errors import InputError
from releval.readers import existing, text_of

BLIND_ID = "blind_id"
POOL_ID = "pool_id"
CANCELLED = "cancelled"
MALFORMED = "malformed"  # a CSV line with more fields than its header
SOURCE = "source"
ROW = "row"
REASON = "reason"
N_JUDGES = "n_judges"
AGREEMENT = "agreement"
ADJUDICATED = "adjudicated"
GRADES = "grades"
NEEDS_ADJUDICATION = "needs_adjudication"

READ_COLUMNS = (BLIND_ID, POOL_ID, S.ANNOTATOR, S.GRADE, S.JUDGED_AT, CANCELLED, MALFORMED,
                SOURCE, ROW)
RAW_COLUMNS = (S.QUERY_ID, S.DOC_ID, BLIND_ID, S.ANNOTATOR, S.GRADE, S.JUDGED_AT, S.GUIDELINE,
               POOL_ID)
QRELS_CONTRACT = (S.QUERY_ID, S.DOC_ID, S.GRADE, N_JUDGES, AGREEMENT, ADJUDICATED, POOL_ID,
                  S.GUIDELINE)
QUEUE_COLUMNS = (S.QUERY_ID, S.DOC_ID, BLIND_ID, GRADES, REASON, NEEDS_ADJUDICATION)
PAIR = [S.QUERY_ID, S.DOC_ID]
JUDGMENT_KEY = [S.QUERY_ID, S.DOC_ID, S.ANNOTATOR]
ID_COLUMNS = (S.QUERY_ID, S.DOC_ID, BLIND_ID, S.ANNOTATOR, S.GUIDELINE, POOL_ID)

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
CONFLICT = "conflicting grades from one annotator"
REASONS = (MALFORMED_ROW, WRONG_POOL, UNKNOWN_BLIND_ID, MISSING_ANNOTATOR, CANCELLED_ANNOTATION,
           MISSING_GRADE, NOT_AN_INTEGER, OUT_OF_RANGE, BAD_TIMESTAMP, CONFLICT)

# Why a pair goes to the adjudication queue.
TIE = "majority tie"
SPREAD = "large spread"
UNRESOLVED = "unresolved"  # column of a method's result: True where it cannot decide


# --- reading ------------------------------------------------------------------------------


def read_judgments(path: str | Path) -> pd.DataFrame:
    """One row per judgment, columns ``READ_COLUMNS``, values raw as read (strings).

    - ``.csv`` / ``.tsv``: the judges' spreadsheet export (blind_id, pool_id, query, title,
      text, grade, annotator, notes; judged_at optional). Blank lines are skipped; extra
      columns (the judges' notes, ...) are kept after ``READ_COLUMNS``; ``row`` is
      ``"line N"``, the line where the record starts (quoted fields may span lines).
    - ``.json``: a Label Studio export, a list of tasks; one row per annotation, grade from
      the ``choices`` result named ``grade`` (several choices are joined with ","), annotator
      from ``completed_by`` (its email when it is an object), judged_at from ``created_at``;
      ``row`` is ``"task I annotation J"`` (0-based list positions). Cancelled annotations
      (``cancelled`` True) and annotations without a grade stay in, to be quarantined.

    Unreadable files (bad JSON, no blind_id or grade column) raise ``InputError``.
    """
    path = existing(path)
    readers = {".csv": _read_csv, ".tsv": _read_csv, ".json": _read_label_studio}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise InputError(f"judgments must be {', '.join(readers)}; got {path.suffix!r}",
                         str(path))
    return reader(path)


def _read_csv(path: Path) -> pd.DataFrame:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        reader = csv.reader(io.StringIO(text_of(path), newline=""), delimiter=delimiter)
        records = [(reader.line_num, record) for record in reader]
    except csv.Error as exc:
        raise InputError(f"not a readable CSV file: {exc}", str(path)) from None
    if not records:
        raise InputError("empty file: expected a header with blind_id and grade", str(path))
    ends = np.array([end for end, _ in records])
    starts = np.concatenate(([1], ends[:-1] + 1))  # a record starts after the previous ends
    header = [name.strip() for name in records[0][1]]
    missing = [c for c in (BLIND_ID, S.GRADE) if c not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; found {header}", str(path))
    body = [(start, record) for start, (_, record) in zip(starts[1:], records[1:], strict=True)
            if any(field.strip() for field in record)]
    long = [len(record) > len(header) for _, record in body]  # quarantined, not refused
    table = pd.DataFrame([record[:len(header)] for _, record in body], columns=header,
                         dtype=object)
    table = table.where(table.notna() & (table != ""), None)
    extra = [c for c in header if c not in READ_COLUMNS]
    frame = pd.DataFrame({
        **{c: table[c] if c in table else None for c in (BLIND_ID, POOL_ID, S.ANNOTATOR,
                                                        S.GRADE, S.JUDGED_AT)},
        CANCELLED: False, MALFORMED: long, SOURCE: str(path),
        ROW: [f"line {start}" for start, _ in body]}, index=table.index)
    return pd.concat([frame, table[extra]], axis=1)


def _read_label_studio(path: Path) -> pd.DataFrame:
    try:
        tasks = json.loads(text_of(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", str(path)) from None
    if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
        raise InputError("expected a Label Studio export: a JSON list of task objects",
                         str(path))
    rows = [_annotation_row(path, i, j, task["data"], annotation)
            for i, task in enumerate(tasks)
            for j, annotation in enumerate(_annotations(path, i, task))]
    return pd.DataFrame(rows, columns=list(READ_COLUMNS))


def _annotations(path: Path, i: int, task: dict) -> list[dict]:
    data, annotations = task.get("data"), task.get("annotations", [])
    if not isinstance(data, dict) or data.get(BLIND_ID) is None:
        raise InputError("task has no data.blind_id", str(path), f"task {i}")
    if not isinstance(annotations, list) or not all(isinstance(a, dict) for a in annotations):
        raise InputError("annotations must be a list of objects", str(path), f"task {i}")
    return annotations


def _annotation_row(path: Path, i: int, j: int, data: dict, annotation: dict) -> dict:
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        who = who.get("email") or who.get("id")
    choices = [str(choice) for item in annotation.get("result") or []
               if isinstance(item, dict) and item.get("from_name") == S.GRADE
               for choice in (item.get("value") or {}).get("choices") or []]
    return {BLIND_ID: str(data[BLIND_ID]), POOL_ID: data.get(POOL_ID),
            S.ANNOTATOR: None if who is None else str(who),
            S.GRADE: ",".join(choices) or None, S.JUDGED_AT: annotation.get("created_at"),
            CANCELLED: bool(annotation.get("was_cancelled", False)), SOURCE: str(path),
            ROW: f"task {i} annotation {j}"}


# --- ingestion ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Ingested:
    """All accepted judgments so far (raw contract), the quarantined rows (their original
    fields as text, plus ``reason``) and the counts, where
    rows_in = accepted_new + already_accepted + quarantined."""

    accepted: pd.DataFrame
    quarantine: pd.DataFrame
    counts: dict


def ingest(rows: pd.DataFrame, pool: pd.DataFrame, *, pool_id: str, max_grade: int = 3,
           guideline: str, accepted: pd.DataFrame | None = None) -> Ingested:
    """Check every judged row against pool ``pool_id``; accept the good, quarantine the bad.

    ``rows`` needs blind_id and grade (pool_id, annotator, judged_at, cancelled optional;
    other columns are carried into the quarantine). A row is quarantined with the first
    reason of ``REASONS`` that applies; a blank pool_id counts as this pool. Accepted rows are
    mapped blind_id → (query_id, doc_id) through the pool and get ``guideline``, ``pool_id``
    and judged_at in UTC (NaT when not given).

    One annotator, one pair, one grade: if an annotator's rows for a pair disagree with each
    other or with a grade already in ``accepted``, all of those new rows are quarantined
    (``CONFLICT``) and the accepted grade stands. Identical repeats (same pair, annotator and
    grade, e.g. the same file ingested twice) count as ``already_accepted`` and change nothing.
    """
    if BLIND_ID not in rows or S.GRADE not in rows:
        raise InputError(f"judgments need columns {BLIND_ID} and {S.GRADE}; "
                         f"found {list(rows.columns)}", "judgments")
    rows = rows.reset_index(drop=True)
    pairs = _pool_pairs(pool, str(pool_id))
    previous = _raw(pd.DataFrame(columns=list(RAW_COLUMNS)) if accepted is None else accepted)
    if previous.duplicated(JUDGMENT_KEY).any():
        raise InputError("accepted judgments repeat a (query_id, doc_id, annotator)", "accepted")

    blind, annotator = _text(rows[BLIND_ID]), _text(_column(rows, S.ANNOTATOR))
    row_pool, grade = _text(_column(rows, POOL_ID)), _text(rows[S.GRADE])
    number = pd.to_numeric(grade, errors="coerce").astype("float64")
    when = _text(_column(rows, S.JUDGED_AT))
    judged_at = pd.to_datetime(when, utc=True, errors="coerce", format="mixed")
    checks = {
        MALFORMED_ROW: _column(rows, MALFORMED).fillna(False).astype(bool),
        WRONG_POOL: row_pool.notna() & (row_pool != str(pool_id)),
        UNKNOWN_BLIND_ID: ~blind.isin(pairs.index),
        MISSING_ANNOTATOR: annotator.isna(),
        CANCELLED_ANNOTATION: _column(rows, CANCELLED).fillna(False).astype(bool),
        MISSING_GRADE: grade.isna(),
        NOT_AN_INTEGER: number.isna() | (number != np.floor(number)),
        OUT_OF_RANGE: ~number.between(0, max_grade),
        BAD_TIMESTAMP: when.notna() & judged_at.isna(),
    }
    reason = pd.Series(np.select([m.fillna(False).to_numpy(bool) for m in checks.values()],
                                 list(checks), default=""), index=rows.index)

    ok = reason == ""
    new = _raw(pd.DataFrame({
        S.QUERY_ID: blind[ok].map(pairs[S.QUERY_ID]), S.DOC_ID: blind[ok].map(pairs[S.DOC_ID]),
        BLIND_ID: blind[ok], S.ANNOTATOR: annotator[ok], S.GRADE: number[ok],
        S.JUDGED_AT: judged_at[ok], S.GUIDELINE: guideline, POOL_ID: str(pool_id)}))
    prior = (new[JUDGMENT_KEY].merge(previous[[*JUDGMENT_KEY, S.GRADE]], how="left",
                                     on=JUDGMENT_KEY)[S.GRADE].set_axis(new.index))
    conflict = ((new.groupby(JUDGMENT_KEY)[S.GRADE].transform("nunique") > 1)
                | (prior.notna() & (prior != new[S.GRADE])))
    repeat = ~conflict & (prior.notna() | new.duplicated(JUDGMENT_KEY))
    reason[new.index[conflict]] = CONFLICT

    bad = reason != ""
    quarantine = rows[bad].astype("string").assign(**{REASON: reason[bad]})
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


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name] if name in frame else pd.Series(None, index=frame.index, dtype=object)


def _text(values: pd.Series) -> pd.Series:
    """Values as stripped strings; blanks and missing values become <NA>."""
    return values.astype("string").str.strip().replace("", pd.NA)


def _pool_pairs(pool: pd.DataFrame, pool_id: str) -> pd.DataFrame:
    """(query_id, doc_id) indexed by blind_id, for the rows of one pool."""
    missing = [c for c in (POOL_ID, S.QUERY_ID, S.DOC_ID, BLIND_ID) if c not in pool]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", "pool")
    mine = pool[pool[POOL_ID].astype(str) == pool_id]
    if mine.empty:
        raise InputError(f"pool_id {pool_id!r} has no rows", "pool")
    blind = mine[BLIND_ID].astype(str)
    if blind.duplicated().any():
        raise InputError(f"blind_id must be unique in a pool; repeated: "
                         f"{', '.join(blind[blind.duplicated()].unique()[:10])}", "pool")
    return pd.DataFrame({S.QUERY_ID: mine[S.QUERY_ID].astype(str).to_numpy(),
                         S.DOC_ID: mine[S.DOC_ID].astype(str).to_numpy()},
                        index=pd.Index(blind.to_numpy(), name=BLIND_ID))


def _raw(frame: pd.DataFrame) -> pd.DataFrame:
    """The raw-judgments contract columns, with their types (ids str, grade int, UTC)."""
    missing = [c for c in RAW_COLUMNS if c not in frame]
    if missing:
        raise InputError(f"accepted judgments lack column(s) {', '.join(missing)}", "accepted")
    out = frame[list(RAW_COLUMNS)].astype({c: str for c in ID_COLUMNS} | {S.GRADE: "int64"})
    out[S.JUDGED_AT] = pd.to_datetime(out[S.JUDGED_AT], utc=True).astype("datetime64[us, UTC]")
    return out


# --- agreement ----------------------------------------------------------------------------


def agreement(judgments: pd.DataFrame, max_grade: int = 3, low: float = 0.4) -> dict:
    """How far judges agree on the (query_id, doc_id) items they share; JSON-ready.

    - ``pairs``: per annotator pair, n shared items and quadratic-weighted Cohen's kappa
      (sklearn, labels 0..max_grade), κ = 1 − Σ w·O / Σ w·E with w = (i − j)². κ is None when
      n < 2 or when every shared grade is the same (E = 0); it is never defaulted to 0. A
      constant judge against a varying one has a defined κ of 0.
    - ``mean_pairwise_kappa_weighted``: Σ n_ab κ_ab / Σ n_ab over the pairs with a κ.
    - ``krippendorff_alpha_interval``: see ``krippendorff_alpha_interval``.
    - ``confusion``: counts[a][b] = ordered pairs of different judges on one item with grades
      (a, b); each judge pair is counted in both orders, so the table is symmetric and sums to
      2 × Σ_items m(m − 1)/2 for m judges per item.
    - ``low_agreement``: the pairs with κ < ``low``.
    """
    judged = _judged(judgments, max_grade)
    wide = judged.pivot(index=PAIR, columns=S.ANNOTATOR, values=S.GRADE)
    labels = list(range(max_grade + 1))
    pairs = [_kappa(wide[a], wide[b], labels) for a, b in itertools.combinations(wide.columns, 2)]
    defined = [p for p in pairs if p["kappa"] is not None]
    weight = sum(p["n"] for p in defined)
    counts = _unit_counts(judged, max_grade)
    confusion = counts.T @ counts - np.diag(counts.sum(axis=0))
    return {
        "max_grade": max_grade, "judges": len(wide.columns), "items": len(wide),
        "items_with_2_or_more_judges": int((counts.sum(axis=1) >= 2).sum()),
        "pairs": pairs,
        "mean_pairwise_kappa_weighted":
            sum(p["n"] * p["kappa"] for p in defined) / weight if weight else None,
        "krippendorff_alpha_interval": krippendorff_alpha_interval(counts),
        "confusion": {"grades": labels, "counts": confusion.astype(int).tolist()},
        "low": low, "low_agreement": [p for p in defined if p["kappa"] < low],
    }


def _kappa(a: pd.Series, b: pd.Series, labels: list[int]) -> dict:
    shared = a.notna() & b.notna()
    x, y = a[shared].astype(int), b[shared].astype(int)
    defined = len(x) >= 2 and pd.concat([x, y]).nunique() > 1
    kappa = (float(cohen_kappa_score(x, y, weights="quadratic", labels=labels))
             if defined else None)
    return {"annotator_a": str(a.name), "annotator_b": str(b.name), "n": int(shared.sum()),
            "kappa": kappa}


def _unit_counts(judged: pd.DataFrame, max_grade: int) -> np.ndarray:
    """items × grades: counts[u, g] = judges who gave item u grade g."""
    unit = judged.groupby(PAIR).ngroup().to_numpy()
    counts = np.zeros((unit.max() + 1 if len(unit) else 0, max_grade + 1), dtype=np.int64)
    np.add.at(counts, (unit, judged[S.GRADE].to_numpy()), 1)
    return counts


def krippendorff_alpha_interval(counts: np.ndarray) -> float | None:
    """Krippendorff's alpha, interval metric, from counts[u, c] = judges giving item u value c.

    Coincidence matrix over the items with m_u ≥ 2 values (the others are not pairable):
    o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1);  n_c = Σ_k o_ck;  n = Σ_c n_c.
    D_o = Σ o_ck δ²_ck / n,  D_e = Σ n_c n_k δ²_ck / (n (n − 1)),  δ²_ck = (c − k)²,
    α = 1 − D_o / D_e; None when n < 2 or D_e = 0 (no variation at all).
    """
    m = counts.sum(axis=1)
    pairable, m = counts[m >= 2], m[m >= 2]
    scaled = pairable / (m - 1)[:, None]
    coincidence = scaled.T @ pairable - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    values = np.arange(counts.shape[1])
    delta = (values[:, None] - values[None, :]) ** 2.0
    expected = (np.outer(n_c, n_c) * delta).sum() / (n * (n - 1)) if n >= 2 else 0.0
    if expected == 0:
        return None
    return float(1 - (coincidence * delta).sum() / n / expected)


def _judged(judgments: pd.DataFrame, max_grade: int) -> pd.DataFrame:
    """Judgments with integer grades in 0..max_grade and one grade per (pair, annotator)."""
    missing = [c for c in (*JUDGMENT_KEY, S.GRADE) if c not in judgments]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", "judgments")
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


# --- adjudication -------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Adjudicated:
    """qrels (``QRELS_CONTRACT``) and the adjudication queue (``QUEUE_COLUMNS``)."""

    qrels: pd.DataFrame
    queue: pd.DataFrame


def _median(judged: pd.DataFrame) -> pd.DataFrame:
    """Lower median: the grade at sorted position ⌊(n − 1) / 2⌋ (0-based), so an even count
    takes the lower of the two middle grades and the result is always a grade a judge gave."""
    ordered = judged.sort_values([*PAIR, S.GRADE])
    groups = ordered.groupby(PAIR)
    middle = groups.cumcount() == (groups[S.GRADE].transform("size") - 1) // 2
    grade = ordered[middle].set_index(PAIR)[S.GRADE]
    return pd.DataFrame({S.GRADE: grade, UNRESOLVED: False})


def _majority(judged: pd.DataFrame) -> pd.DataFrame:
    """Most frequent grade; a tie between grades is unresolved (``TIE``) and gets the lowest
    of the tied grades."""
    votes = judged.groupby([*PAIR, S.GRADE]).size().rename("votes").reset_index()
    top = votes[votes["votes"] == votes.groupby(PAIR)["votes"].transform("max")].groupby(PAIR)
    return pd.DataFrame({S.GRADE: top[S.GRADE].min(), UNRESOLVED: top.size() > 1})


METHODS: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "median": _median, "majority": _majority}


def adjudicate(judgments: pd.DataFrame, method: str = "median", max_spread: int = 2,
               adjudicator: pd.DataFrame | None = None, *, pool_id: str, guideline: str,
               max_grade: int = 3) -> Adjudicated:
    """One grade per (query_id, doc_id) from its judges' grades, by ``METHODS[method]``.

    A pair is queued when the method leaves it unresolved (majority tie) or its grades
    spread, max − min, by ≥ ``max_spread``. Queued pairs still get the method's grade (lower
    median; lowest tied grade) and ``needs_adjudication`` True in the queue, until an
    adjudicator grades them. ``adjudicator`` (grade with query_id and doc_id, or blind_id;
    rows without a grade are ignored) overrides the computed grade of its pairs, queued or
    not: ``adjudicated`` True. ``agreement`` = share of the pair's judges who gave the final
    grade; ``n_judges`` counts judges, not the adjudicator.
    """
    if method not in METHODS:
        raise InputError(f"unknown adjudication method {method!r}; known: {', '.join(METHODS)}",
                         "adjudicate")
    judged = _judged(judgments, max_grade)
    groups = judged.groupby(PAIR)[S.GRADE]
    pairs = METHODS[method](judged).join(groups.agg(["size", "min", "max"]))
    override = _adjudicator_grades(adjudicator, judged, max_grade).reindex(pairs.index)
    final = override.fillna(pairs[S.GRADE]).astype("int64").rename("final")
    spread = (pairs["max"] - pairs["min"]) >= max_spread
    qrels = pd.DataFrame({
        S.GRADE: final, N_JUDGES: pairs["size"].astype("int64"),
        AGREEMENT: (judged[S.GRADE] == judged.join(final, on=PAIR)["final"])
        .groupby([judged[S.QUERY_ID], judged[S.DOC_ID]]).mean(),
        ADJUDICATED: override.notna(), POOL_ID: str(pool_id), S.GUIDELINE: guideline,
    }).reset_index()
    blind = (judged.groupby(PAIR)[BLIND_ID].min() if BLIND_ID in judged
             else pd.Series(None, index=pairs.index, dtype=object))
    queue = pd.DataFrame({
        BLIND_ID: blind, GRADES: judged.sort_values(S.GRADE).groupby(PAIR)[S.GRADE].agg(list),
        REASON: np.select([pairs[UNRESOLVED] & spread, pairs[UNRESOLVED], spread],
                          [f"{TIE}; {SPREAD}", TIE, SPREAD], default=""),
        NEEDS_ADJUDICATION: override.isna()}).reset_index()
    return Adjudicated(qrels[list(QRELS_CONTRACT)],
                       queue.loc[queue[REASON] != "", list(QUEUE_COLUMNS)].reset_index(drop=True))


def _adjudicator_grades(adjudicator: pd.DataFrame | None, judged: pd.DataFrame,
                        max_grade: int) -> pd.Series:
    """The adjudicator's grade per (query_id, doc_id); an unknown pair, a bad grade or two
    grades for one pair is an InputError."""
    if adjudicator is None:
        return pd.Series(dtype="float64", index=pd.MultiIndex.from_tuples([], names=PAIR))
    by_pair = S.QUERY_ID in adjudicator and S.DOC_ID in adjudicator
    if S.GRADE not in adjudicator or not (by_pair or BLIND_ID in adjudicator):
        raise InputError("adjudicator needs grade and query_id, doc_id or blind_id",
                         "adjudicator")
    graded = adjudicator[adjudicator[S.GRADE].notna()]
    if by_pair:
        keys = graded[PAIR].astype(str)
    elif BLIND_ID in judged:
        lookup = judged.drop_duplicates(BLIND_ID).set_index(BLIND_ID)[PAIR]
        keys = lookup.reindex(graded[BLIND_ID].astype(str).to_numpy()).set_axis(graded.index)
    else:
        raise InputError("adjudicator grades are by blind_id, but the judgments have none",
                         "adjudicator")
    grade = pd.to_numeric(graded[S.GRADE], errors="coerce")
    known = pd.MultiIndex.from_frame(keys).isin(pd.MultiIndex.from_frame(judged[PAIR]))
    problems = {
        "pair not among the judgments": ~known,
        f"grade must be an integer in 0..{max_grade}":
            ~grade.between(0, max_grade) | (grade != np.floor(grade)),
    }
    for rule, mask in problems.items():
        if np.asarray(mask).any():
            raise InputError(rule, "adjudicator", f"row {graded.index[np.asarray(mask)][0]}")
    result = grade.set_axis(pd.MultiIndex.from_frame(keys))
    if result.groupby(level=PAIR).nunique().gt(1).any():
        raise InputError("two different grades for one pair", "adjudicator")
    return result[~result.index.duplicated()]
