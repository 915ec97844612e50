"""Judges' files read as they are: spreadsheet exports (CSV / TSV) and Label Studio JSON,
one traceable row per judgment, values raw (strings) for ``releval.judging.ingest``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import existing, text_of
from releval.errors import InputError, reading

CANCELLED = "cancelled"
MALFORMED = "malformed"  # a CSV line with more fields than its header
SOURCE = "source"
ROW = "row"
READ_COLUMNS = (S.BLIND_ID, S.POOL_ID, S.ANNOTATOR, S.GRADE, S.JUDGED_AT, S.HARD_NEGATIVE,
                CANCELLED, MALFORMED, SOURCE, ROW)
JUDGES_FILES = ("*.csv", "*.json")  # what ``read_judges_files`` reads from a folder


def read_judgments(path: str | Path) -> pd.DataFrame:
    """One row per judgment, columns ``READ_COLUMNS``, values raw as read (strings).

    - ``.csv`` / ``.tsv``: the judges' spreadsheet export (blind_id, pool_id, query, title,
      text, grade, annotator, notes; judged_at and hard_negative optional). Blank lines are
      skipped; extra columns (the judges' notes, ...) are kept after ``READ_COLUMNS``; ``row``
      is ``"line N"``, the line where the record starts (quoted fields may span lines).
    - ``.json``: a Label Studio export, a list of tasks; one row per annotation, grade from
      the ``choices`` result named ``grade`` (several choices are joined with ","),
      hard_negative likewise from the one named ``hard_negative`` (a yes / no choice; none
      given: missing), annotator from ``completed_by`` (its email when it is an object),
      judged_at from ``created_at``; ``row`` is ``"task I annotation J"`` (0-based list
      positions). Cancelled annotations (``cancelled`` True) and annotations without a grade
      stay in, to be quarantined.

    Unreadable files (bad JSON, no blind_id or grade column) raise ``InputError``.
    """
    path = existing(path)
    readers = {".csv": _read_csv, ".tsv": _read_csv, ".json": _read_label_studio}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise InputError(f"judgments must be {', '.join(readers)}; got {path.suffix!r}",
                         str(path))
    return reader(path)


def read_judges_files(folder: Path) -> pd.DataFrame:
    """Every judges' file (``JUDGES_FILES``) in ``folder``, in name order, stacked; an
    InputError when there is none."""
    files = (sorted(f for pattern in JUDGES_FILES for f in folder.glob(pattern))
             if folder.is_dir() else [])
    if not files:
        raise InputError("no judges' files (*.csv, *.json) found", str(folder))
    return pd.concat([read_judgments(f) for f in files], ignore_index=True)


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
    missing = [c for c in (S.BLIND_ID, S.GRADE) if c not in header]
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
        **{c: table[c] if c in table else None for c in (S.BLIND_ID, S.POOL_ID, S.ANNOTATOR,
                                                        S.GRADE, S.JUDGED_AT,
                                                        S.HARD_NEGATIVE)},
        CANCELLED: False, MALFORMED: long, SOURCE: str(path),
        ROW: [f"line {start}" for start, _ in body]}, index=table.index)
    return pd.concat([frame, table[extra]], axis=1)


def _read_label_studio(path: Path) -> pd.DataFrame:
    with reading(str(path)):
        tasks = json.loads(text_of(path))
    if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
        raise InputError("expected a Label Studio export: a JSON list of task objects",
                         str(path))
    rows = [_annotation_row(path, i, j, task["data"], annotation)
            for i, task in enumerate(tasks)
            for j, annotation in enumerate(_annotations(path, i, task))]
    return pd.DataFrame(rows, columns=list(READ_COLUMNS))


def _annotations(path: Path, i: int, task: dict) -> list[dict]:
    data, annotations = task.get("data"), task.get("annotations", [])
    if not isinstance(data, dict) or data.get(S.BLIND_ID) is None:
        raise InputError("task has no data.blind_id", str(path), f"task {i}")
    if not isinstance(annotations, list) or not all(isinstance(a, dict) for a in annotations):
        raise InputError("annotations must be a list of objects", str(path), f"task {i}")
    return annotations


def _choices(annotation: dict, name: str) -> str | None:
    """The choices of the annotation's result named ``name``, joined with ","; None if none."""
    choices = [str(choice) for item in annotation.get("result") or []
               if isinstance(item, dict) and item.get("from_name") == name
               for choice in (item.get("value") or {}).get("choices") or []]
    return ",".join(choices) or None


def _annotation_row(path: Path, i: int, j: int, data: dict, annotation: dict) -> dict:
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        who = who.get("email") or who.get("id")
    return {S.BLIND_ID: str(data[S.BLIND_ID]), S.POOL_ID: data.get(S.POOL_ID),
            S.ANNOTATOR: None if who is None else str(who),
            S.GRADE: _choices(annotation, S.GRADE), S.JUDGED_AT: annotation.get("created_at"),
            S.HARD_NEGATIVE: _choices(annotation, S.HARD_NEGATIVE),
            CANCELLED: bool(annotation.get("was_cancelled", False)), SOURCE: str(path),
            ROW: f"task {i} annotation {j}"}
