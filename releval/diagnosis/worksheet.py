"""The manual-inspection worksheet: failures out to a person, their verdicts back in.

``build`` turns the failures table (``releval.diagnosis.layers``) into one row per failure with what
a reviewer needs to judge it (query text, the document's title and snippet, the automatic
layer and its evidence, the system's top k with grades); ``write`` saves it as CSV and
``markdown`` renders its head for the report. The reviewer fills in ``reviewer_layer`` (and
``reviewer_note``); ``ingest`` reads the edited file back, quarantining bad rows with a reason
from ``REASONS`` and the line they start on, so that rows_in = reviewed + unreviewed +
quarantined; ``apply`` puts the reviewer's layer over the automatic one.

The worksheet stays the source of truth for what a row is about: ``ingest`` takes only
worksheet_id, reviewer_layer and reviewer_note from the file, so an accidental edit of the
other columns in a spreadsheet changes nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import text_of
from releval.diagnosis.layers import KINDS, LAYERS
from releval.errors import InputError

KIND = "kind"
LAYER = "layer"
EVIDENCE = "evidence"
WORKSHEET_ID = "worksheet_id"
QUERY_TEXT = "query_text"
EXPECTED_TITLE = "expected_title"
EXPECTED_SNIPPET = "expected_snippet"
AUTOMATIC_LAYER = "automatic_layer"
TOP_K = "top_k"
ITEM = "; "  # between the items of a top_k cell
REVIEWER_LAYER = "reviewer_layer"
REVIEWER_NOTE = "reviewer_note"
AGREES = "agrees"
LAYER_SOURCE = "layer_source"
LINE = "line"
REASON = "reason"

FAILURE_COLUMNS = (S.SYSTEM, S.QUERY_ID, S.DOC_ID, S.GRADE, KIND, LAYER, EVIDENCE)
WORKSHEET_COLUMNS = (WORKSHEET_ID, S.SYSTEM, S.QUERY_ID, QUERY_TEXT, S.DOC_ID, EXPECTED_TITLE,
                     EXPECTED_SNIPPET, KIND, S.GRADE, AUTOMATIC_LAYER, EVIDENCE, TOP_K,
                     REVIEWER_LAYER, REVIEWER_NOTE)
VERDICT_COLUMNS = (WORKSHEET_ID, S.SYSTEM, S.QUERY_ID, S.DOC_ID, AUTOMATIC_LAYER, REVIEWER_LAYER,
                   REVIEWER_NOTE, AGREES)
INGEST_REQUIRED = (WORKSHEET_ID, REVIEWER_LAYER)  # reviewer_note is optional
SORT = [S.SYSTEM, S.QUERY_ID, KIND, S.DOC_ID]

NOT_IN_DOCUMENTS = "(not in documents)"
NOT_IN_QUERIES = "(not in queries)"
NO_RESULTS = "(no results)"
AUTOMATIC, REVIEWER = "automatic", "reviewer"

# Quarantine reasons, in the order they are checked: a row gets the first that applies.
TOO_MANY_FIELDS = "more fields than the header"
UNKNOWN_WORKSHEET_ID = "unknown worksheet_id"
REPEATED_WORKSHEET_ID = "worksheet_id repeated in the file"
UNKNOWN_LAYER = "reviewer_layer not in LAYERS"
REASONS = (TOO_MANY_FIELDS, UNKNOWN_WORKSHEET_ID, REPEATED_WORKSHEET_ID, UNKNOWN_LAYER)


# --- building -----------------------------------------------------------------------------


def worksheet_ids(frame: pd.DataFrame) -> pd.Series:
    """Stable row ids: the first 12 hex digits of sha1("system|query_id|doc_id|kind")."""
    keys = (_text(frame[S.SYSTEM]) + "|" + _text(frame[S.QUERY_ID]) + "|"
            + _text(frame[S.DOC_ID]) + "|" + _text(frame[KIND]))
    return pd.Series([hashlib.sha1(key.encode("utf-8")).hexdigest()[:12] for key in keys],
                     index=frame.index, dtype=object)


def build(failures: pd.DataFrame, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame,
          queries: pd.DataFrame, documents: pd.DataFrame, *, k: int = 10,
          snippet_chars: int = 200) -> pd.DataFrame:
    """One row per failure, columns ``WORKSHEET_COLUMNS``, sorted by system, query_id, kind,
    doc_id.

    - ``query_text`` from ``queries`` (``NOT_IN_QUERIES`` when unknown);
    - ``expected_title`` / ``expected_snippet``: the document's title and the first
      ``snippet_chars`` characters of its text with whitespace collapsed; an unknown doc_id
      gets an empty title and the snippet ``NOT_IN_DOCUMENTS``;
    - ``automatic_layer``: the failure's ``layer``; ``evidence`` as given;
    - ``top_k``: the system's first k results for the query (``runs[system]``, by rank, or by
      score descending then doc_id descending when a run has no rank), rendered
      ``"1. d3 [grade 2]; 2. d7 [unjudged]"`` with grades from ``qrels`` — a pair without a
      judgment is ``unjudged``, never grade 0; ``NO_RESULTS`` when the system returned
      nothing for the query;
    - ``reviewer_layer`` and ``reviewer_note`` empty, for the reviewer.

    A failures row repeating (system, query_id, doc_id, kind), a layer outside ``LAYERS`` or a
    kind outside ``KINDS`` is an ``InputError``.
    """
    if k < 1 or snippet_chars < 0:
        raise InputError(f"need k >= 1 and snippet_chars >= 0; got k={k}, "
                         f"snippet_chars={snippet_chars}", "worksheet")
    S.require_columns(failures, FAILURE_COLUMNS, "failures")
    S.require_columns(qrels, (S.QUERY_ID, S.DOC_ID, S.GRADE), "qrels")
    S.require_columns(queries, (S.QUERY_ID, S.TEXT), "queries")
    S.require_columns(documents, (S.DOC_ID, S.TITLE, S.TEXT), "documents")
    fail = failures[list(FAILURE_COLUMNS)].reset_index(drop=True)
    _check_values(fail, LAYER, LAYERS, "failures")
    _check_values(fail, KIND, KINDS, "failures")
    fail = fail.assign(**{c: _text(fail[c]) for c in (S.SYSTEM, S.QUERY_ID, S.DOC_ID)},
                       **{S.GRADE: _integers(fail[S.GRADE], "failures", missing_ok=True)})
    fail.insert(0, WORKSHEET_ID, worksheet_ids(fail))
    twice = fail[WORKSHEET_ID].duplicated()
    if twice.any():
        first = fail.loc[twice, [S.SYSTEM, S.QUERY_ID, S.DOC_ID, KIND]].iloc[0]
        raise InputError(f"repeated (system, query_id, doc_id, kind): {tuple(first)}",
                         "failures", f"row {int(np.flatnonzero(twice)[0])}")

    query_text = _unique(queries, S.QUERY_ID, "queries")[[S.QUERY_ID, S.TEXT]].rename(
        columns={S.TEXT: QUERY_TEXT})
    docs = _unique(documents, S.DOC_ID, "documents")
    docs = pd.DataFrame({
        S.DOC_ID: docs[S.DOC_ID], EXPECTED_TITLE: _text(docs[S.TITLE]),
        EXPECTED_SNIPPET: _text(docs[S.TEXT]).str.replace(r"\s+", " ", regex=True)
        .str.strip().str[:snippet_chars]})
    top = _top_k(fail[[S.SYSTEM, S.QUERY_ID]].drop_duplicates(), runs, _grades(qrels), k)

    out = (fail.merge(query_text, how="left", on=S.QUERY_ID)
           .merge(docs, how="left", on=S.DOC_ID)
           .merge(top, how="left", on=[S.SYSTEM, S.QUERY_ID]))
    out = out.assign(**{
        QUERY_TEXT: out[QUERY_TEXT].fillna(NOT_IN_QUERIES),
        EXPECTED_TITLE: out[EXPECTED_TITLE].fillna(""),
        EXPECTED_SNIPPET: out[EXPECTED_SNIPPET].fillna(NOT_IN_DOCUMENTS),
        TOP_K: out[TOP_K].fillna(NO_RESULTS),
        REVIEWER_LAYER: "", REVIEWER_NOTE: ""}).rename(columns={LAYER: AUTOMATIC_LAYER})
    out = out.astype({c: object for c in (QUERY_TEXT, EXPECTED_TITLE, EXPECTED_SNIPPET, TOP_K)})
    return out[list(WORKSHEET_COLUMNS)].sort_values(SORT, kind="stable", ignore_index=True)


def _top_k(pairs: pd.DataFrame, runs: dict[str, pd.DataFrame], grades: pd.DataFrame,
           k: int) -> pd.DataFrame:
    """(system, query_id, top_k) for the given (system, query_id) pairs that have results."""
    frames = []
    for name, run in runs.items():
        run = run.reset_index(drop=True)
        frames.append(pd.DataFrame({S.SYSTEM: name, S.QUERY_ID: _text(run[S.QUERY_ID]),
                                    S.DOC_ID: _text(run[S.DOC_ID]), S.RANK: _ranks(name, run)}))
    if not frames:
        return pd.DataFrame({S.SYSTEM: [], S.QUERY_ID: [], TOP_K: []}, dtype=object)
    ranked = pd.concat(frames, ignore_index=True)
    ranked = ranked[ranked[S.RANK] <= k].merge(pairs, on=[S.SYSTEM, S.QUERY_ID])
    ranked = ranked.merge(grades, how="left", on=[S.QUERY_ID, S.DOC_ID])
    grade = ranked[S.GRADE]
    label = pd.Series(np.where(grade.isna(), "[unjudged]",
                               "[grade " + grade.astype("string").fillna("") + "]"),
                      index=ranked.index)
    ranked["item"] = ranked[S.RANK].astype(str) + ". " + ranked[S.DOC_ID] + " " + label
    return (ranked.sort_values([S.SYSTEM, S.QUERY_ID, S.RANK], kind="stable")
            .groupby([S.SYSTEM, S.QUERY_ID], sort=False)["item"].agg(ITEM.join)
            .rename(TOP_K).reset_index())


def _ranks(name: str, run: pd.DataFrame) -> pd.Series:
    """The run's ranks; without a rank column, score descending then doc_id descending
    (trec_eval's order)."""
    missing = [c for c in (S.QUERY_ID, S.DOC_ID) if c not in run.columns]
    if missing or (S.RANK not in run.columns and S.SCORE not in run.columns):
        raise InputError(f"run of {name!r} needs query_id, doc_id and rank or score; "
                         f"found {list(run.columns)}", name)
    if S.RANK in run.columns:
        rank = pd.to_numeric(run[S.RANK], errors="coerce")
        if rank.isna().any():
            raise InputError("rank must be an integer", name, f"row {rank.isna().idxmax()}")
        return rank.astype("int64")
    ordered = run.assign(**{S.DOC_ID: _text(run[S.DOC_ID])}).sort_values(
        [S.QUERY_ID, S.SCORE, S.DOC_ID], ascending=[True, False, False], kind="stable")
    return (ordered.groupby(S.QUERY_ID, sort=False).cumcount() + 1).reindex(run.index)


def _grades(qrels: pd.DataFrame) -> pd.DataFrame:
    """(query_id, doc_id, grade as Int64), one row per pair."""
    out = pd.DataFrame({S.QUERY_ID: _text(qrels[S.QUERY_ID]), S.DOC_ID: _text(qrels[S.DOC_ID]),
                        S.GRADE: _integers(qrels[S.GRADE], "qrels", missing_ok=False)})
    twice = out.duplicated([S.QUERY_ID, S.DOC_ID])
    if twice.any():
        raise InputError("one grade per (query_id, doc_id); repeated: "
                         f"{tuple(out.loc[twice, [S.QUERY_ID, S.DOC_ID]].iloc[0])}", "qrels")
    return out


# --- writing and rendering ----------------------------------------------------------------


def write(worksheet: pd.DataFrame, path: str | Path) -> Path:
    """The worksheet as CSV (UTF-8, header, ``WORKSHEET_COLUMNS`` in order); returns the path."""
    S.require_columns(worksheet, WORKSHEET_COLUMNS, "worksheet")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    worksheet[list(WORKSHEET_COLUMNS)].to_csv(path, index=False, encoding="utf-8",
                                              lineterminator="\n")
    return path


def markdown(worksheet: pd.DataFrame, limit: int = 20, *, top_k_chars: int = 80) -> str:
    """A markdown section for the report: one line saying how many failures there are, then a
    table (system, query, expected, automatic layer, top k clipped to ``top_k_chars``, after
    a whole item) of the first ``limit`` rows, then how many rows are left for the CSV. No
    heading: the report places it."""
    S.require_columns(worksheet, WORKSHEET_COLUMNS, "worksheet")
    if worksheet.empty:
        return "No failures to inspect.\n"
    head = worksheet.head(max(limit, 0))
    grade = head[S.GRADE].astype("string")
    expected = (_text(head[S.DOC_ID]) + " " + _text(head[EXPECTED_TITLE]) + " ("
                + head[KIND].astype(str)
                + np.where(grade.isna(), "", ", grade " + grade.fillna("")) + ")")
    columns = {
        "system": _cell(head[S.SYSTEM]),
        "query": _cell(_text(head[S.QUERY_ID]) + ": " + _text(head[QUERY_TEXT]), 60),
        "expected": _cell(expected, 60),
        "automatic layer": _cell(head[AUTOMATIC_LAYER]),
        "top k": _cell(head[TOP_K], top_k_chars, at=ITEM),
    }
    table = pd.DataFrame(columns)
    lines = [f"{len(worksheet)} failure(s) to inspect; the first {len(head)} below.", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ("| " + table.agg(" | ".join, axis=1) + " |").tolist()
    if len(worksheet) > len(head):
        lines += ["", f"{len(worksheet) - len(head)} more row(s) in the worksheet CSV."]
    return "\n".join(lines) + "\n"


def _cell(values: pd.Series, width: int | None = None, at: str = " ") -> pd.Series:
    """Text fit for a markdown table cell: whitespace collapsed, pipes escaped; longer than
    ``width`` characters, clipped at the last ``at`` (a word's end; ``ITEM``: a whole top-k
    item) that leaves room for the ellipsis, " …" (a single word longer than that: cut within
    it, "…")."""
    text = _text(values).str.replace(r"\s+", " ", regex=True).str.strip()
    if width is not None:
        text = text.map(lambda t: _clip(t, width, at))
    return text.str.replace("|", r"\|", regex=False).astype(object)


def _clip(text: str, width: int, at: str) -> str:
    if len(text) <= width:
        return text
    cut = text.rfind(at, 0, max(width - 1, 0))
    if cut <= 0:
        return text[:max(width - 1, 0)] + "…"
    return text[:cut].rstrip(" ;,") + " …"


# --- ingesting the reviewer's file --------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Review:
    """What a reviewer's worksheet file says.

    - ``verdicts``: one row per reviewed row (reviewer_layer given and valid), columns
      ``VERDICT_COLUMNS``; ``agrees`` is reviewer_layer == automatic_layer;
    - ``quarantine``: the bad rows, their fields as text, with ``line`` (where the record
      starts; the header is line 1) and ``reason`` (one of ``REASONS``);
    - ``counts``: rows_in = reviewed + unreviewed + quarantined, ``by_reason``, and
      ``not_in_file`` (worksheet rows no row of the file names);
    - ``disagreement_rate``: share of reviewed rows whose reviewer_layer differs from the
      automatic layer; None when nothing was reviewed.
    """

    verdicts: pd.DataFrame
    quarantine: pd.DataFrame
    counts: dict
    disagreement_rate: float | None


def ingest(path: str | Path, worksheet: pd.DataFrame) -> Review:
    """Read a reviewer's copy of ``worksheet`` (CSV, written by ``write`` and edited).

    Needs the columns worksheet_id and reviewer_layer (reviewer_note optional; other columns
    are ignored). Blank lines are skipped; reviewer_layer is read with surrounding whitespace
    removed and case folded (" Ranking " is ``ranking``); a blank one leaves the row
    unreviewed. A row is quarantined with the first reason of ``REASONS`` that applies: more
    fields than the header; a worksheet_id not in ``worksheet``; a worksheet_id already on an
    earlier row of the file (the first row stands, the later ones go); a reviewer_layer not in
    ``LAYERS``. A missing column, an unreadable or missing file is an ``InputError`` naming
    the file. Ingesting the same file again gives the same ``Review``.
    """
    path = Path(path)
    header, body = _read_csv(path)
    missing = [c for c in INGEST_REQUIRED if c not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; found {header}", str(path))
    S.require_columns(worksheet, (WORKSHEET_ID, S.SYSTEM, S.QUERY_ID, S.DOC_ID, AUTOMATIC_LAYER),
             "worksheet")
    sheet = worksheet.assign(**{WORKSHEET_ID: _text(worksheet[WORKSHEET_ID])})
    if sheet[WORKSHEET_ID].duplicated().any():
        raise InputError("worksheet_id repeated in the worksheet", "worksheet")

    lines = pd.Series([line for line, _ in body], dtype="int64")
    width = len(header)
    table = pd.DataFrame([(fields + [""] * width)[:width] for _, fields in body],
                         columns=header, dtype=object, index=lines.index)
    ids = table[WORKSHEET_ID].astype(str).str.strip()
    layer = table[REVIEWER_LAYER].astype(str).str.strip().str.casefold()
    note = (table[REVIEWER_NOTE].astype(str).str.strip() if REVIEWER_NOTE in table
            else pd.Series("", index=table.index, dtype=object))
    checks = {
        TOO_MANY_FIELDS: pd.Series([len(fields) > width for _, fields in body],
                                   index=table.index, dtype=bool),
        UNKNOWN_WORKSHEET_ID: ~ids.isin(sheet[WORKSHEET_ID]),
        REPEATED_WORKSHEET_ID: ids.duplicated(),
        UNKNOWN_LAYER: (layer != "") & ~layer.isin(LAYERS),
    }
    reason = pd.Series(np.select([m.to_numpy(bool) for m in checks.values()], list(checks),
                                 default=""), index=table.index, dtype=object)
    bad = reason != ""
    reviewed = ~bad & (layer != "")

    quarantine = table[bad].astype(object).assign(**{LINE: lines[bad], REASON: reason[bad]})
    quarantine = quarantine[[LINE, *[c for c in header if c not in (LINE, REASON)], REASON]]
    verdicts = pd.DataFrame({WORKSHEET_ID: ids[reviewed], REVIEWER_LAYER: layer[reviewed],
                             REVIEWER_NOTE: note[reviewed]}).merge(
        sheet[[WORKSHEET_ID, S.SYSTEM, S.QUERY_ID, S.DOC_ID, AUTOMATIC_LAYER]],
        how="left", on=WORKSHEET_ID)
    verdicts[AGREES] = (verdicts[REVIEWER_LAYER] == verdicts[AUTOMATIC_LAYER]).astype(bool)
    verdicts = verdicts[list(VERDICT_COLUMNS)].sort_values(
        [S.SYSTEM, S.QUERY_ID, S.DOC_ID, WORKSHEET_ID], kind="stable", ignore_index=True)

    counts = {"rows_in": len(table), "reviewed": int(reviewed.sum()),
              "unreviewed": int((~bad & (layer == "")).sum()), "quarantined": int(bad.sum()),
              "by_reason": {r: int((reason == r).sum()) for r in REASONS},
              "not_in_file": int((~sheet[WORKSHEET_ID].isin(ids[~bad])).sum())}
    if counts["rows_in"] != counts["reviewed"] + counts["unreviewed"] + counts["quarantined"]:
        raise RuntimeError(f"worksheet review counts do not reconcile: {counts}")
    rate = float((~verdicts[AGREES]).mean()) if len(verdicts) else None
    return Review(verdicts, quarantine.reset_index(drop=True), counts, rate)


def apply(failures: pd.DataFrame, review: Review) -> pd.DataFrame:
    """``failures`` (same rows, same order) with ``layer`` replaced by the reviewer's verdict
    where there is one, ``automatic_layer`` keeping the automatic layer and ``layer_source``
    saying which one ``layer`` is (``"automatic"`` or ``"reviewer"``). Verdicts match rows by
    worksheet_id; applying the same review twice changes nothing more (an existing
    ``automatic_layer`` column is taken as the automatic layer)."""
    S.require_columns(failures, (S.SYSTEM, S.QUERY_ID, S.DOC_ID, KIND, LAYER), "failures")
    automatic = failures[AUTOMATIC_LAYER] if AUTOMATIC_LAYER in failures else failures[LAYER]
    verdict = review.verdicts.set_index(WORKSHEET_ID)[REVIEWER_LAYER]
    reviewer = worksheet_ids(failures).map(verdict)
    return failures.assign(**{
        LAYER: reviewer.where(reviewer.notna(), automatic).astype(object),
        AUTOMATIC_LAYER: automatic,
        LAYER_SOURCE: np.where(reviewer.notna(), REVIEWER, AUTOMATIC)})


# --- helpers ------------------------------------------------------------------------------


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and the non-blank records with the line each starts on (quoted fields may span
    lines; the header is line 1)."""
    if not path.exists():
        raise InputError("file not found", str(path))
    text = text_of(path)  # not UTF-8: the byte, its offset and line named
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        records, start = [], 1
        for record in reader:
            records.append((start, record))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"not a readable CSV file: {exc}", str(path), f"line {start}") from None
    if not records:
        raise InputError("empty file: expected a header with worksheet_id and reviewer_layer",
                         str(path))
    header = [name.strip() for name in records[0][1]]
    body = [(line, record) for line, record in records[1:] if any(f.strip() for f in record)]
    return header, body



def _check_values(frame: pd.DataFrame, column: str, allowed: tuple[str, ...],
                  source: str) -> None:
    bad = ~frame[column].isin(allowed)
    if bad.any():
        raise InputError(f"{column} must be one of {', '.join(allowed)}; got "
                         f"{frame[column][bad].iloc[0]!r}", source, f"row {bad.idxmax()}")


def _integers(values: pd.Series, source: str, *, missing_ok: bool) -> pd.Series:
    """Integer grades as nullable Int64; anything else is an InputError."""
    number = pd.to_numeric(values, errors="coerce")
    given = values.notna()
    bad = (given & (number != np.floor(number))) | (~given & (not missing_ok))  # NaN != NaN
    if bad.any():
        raise InputError(f"grade must be an integer, got {values[bad].iloc[0]!r}", source,
                         f"row {bad.idxmax()}")
    return number.astype("Int64")


def _unique(frame: pd.DataFrame, key: str, source: str) -> pd.DataFrame:
    out = frame.assign(**{key: _text(frame[key])})
    twice = out[key].duplicated()
    if twice.any():
        raise InputError(f"{key} must be unique; repeated: {out[key][twice].iloc[0]!r}", source)
    return out


def _text(values: pd.Series) -> pd.Series:
    """Values as str (missing → ""), object dtype."""
    return values.astype("string").fillna("").astype(object)
