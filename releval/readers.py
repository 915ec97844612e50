"""Read qrels and runs from TREC files, BEIR qrels TSV, CSV or parquet (and write TREC runs).

Every frame returned carries ``attrs['source']`` (the path) and ``attrs['unit']``
(``line`` or ``row``) and is indexed by that line/row number, so later validation can
name the exact place of a bad record.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from releval import schema as S
from releval.errors import InputError

TREC_QRELS = (S.QUERY_ID, "iteration", S.DOC_ID, S.GRADE)
TREC_RUN = (S.QUERY_ID, "q0", S.DOC_ID, S.RANK, S.SCORE, S.SYSTEM)


def where(frame: pd.DataFrame, label) -> str:
    """'line 12' / 'row 3' for a frame read by this module; 'index 5' for any other."""
    return f"{frame.attrs.get('unit', 'index')} {label}"


def _tag(frame: pd.DataFrame, source: str, unit: str, first: int) -> pd.DataFrame:
    frame.index = pd.RangeIndex(first, first + len(frame)) if unit == "row" else frame.index
    frame.attrs.update(source=source, unit=unit)
    return frame


def _read_whitespace(path: Path, names: tuple[str, ...]) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=list(names), dtype=str,
                            skip_blank_lines=False, engine="c")
    except pd.errors.ParserError as exc:  # e.g. "Expected 4 fields in line 7, saw 5"
        raise InputError(f"expected {len(names)} whitespace-separated fields "
                         f"({' '.join(names)}): {exc}".rstrip(), str(path)) from None
    frame.index = frame.index + 1  # 1-based line numbers
    frame = frame.dropna(how="all")
    short = frame[frame[names[-1]].isna()]
    if len(short):
        raise InputError(f"expected {len(names)} fields ({' '.join(names)})", str(path),
                         f"line {short.index[0]}")
    return _tag(frame, str(path), "line", 1)


def _numeric(frame: pd.DataFrame, column: str, *, integer: bool) -> None:
    values = pd.to_numeric(frame[column], errors="coerce")
    raw = frame[column]
    bad = values.isna() & raw.notna() & (raw.astype(str).str.lower() != "nan")
    if integer:
        bad |= values.notna() & (values != np.floor(values))
    if bad.any():
        label = bad.idxmax()
        kind = "an integer" if integer else "a number"
        raise InputError(f"{column} must be {kind}, got {raw[label]!r}",
                         frame.attrs["source"], where(frame, label))
    frame[column] = values.astype("int64") if integer and values.notna().all() else values


def _read_table(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _tag(pd.read_parquet(path), str(path), "row", 1)
    sep = "\t" if suffix == ".tsv" else ","
    ids = (S.QUERY_ID, S.DOC_ID, "query-id", "corpus-id")  # BEIR names the ids differently
    frame = pd.read_csv(path, sep=sep, dtype=dict.fromkeys(ids, str))
    frame.index = frame.index + 2  # header is line 1
    return _tag(frame, str(path), "line", 2)


def _require(frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; found {list(frame.columns)}",
                         frame.attrs["source"])


def _is_table(path: Path) -> bool:
    return path.suffix.lower() in {".parquet", ".csv", ".tsv"}


def read_qrels(path: str | Path) -> pd.DataFrame:
    """qrels as (query_id, doc_id, grade): TREC ``qid iter docid grade``, BEIR TSV
    (``query-id corpus-id score`` header), or a CSV/parquet table with contract columns."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", str(path))
    if _is_table(path):
        frame = _read_table(path).rename(
            columns={"query-id": S.QUERY_ID, "corpus-id": S.DOC_ID, "score": S.GRADE})
        frame[[S.QUERY_ID, S.DOC_ID]] = frame[[S.QUERY_ID, S.DOC_ID]].astype(str)
    else:
        frame = _read_whitespace(path, TREC_QRELS)
    _require(frame, (S.QUERY_ID, S.DOC_ID, S.GRADE))
    _numeric(frame, S.GRADE, integer=True)
    return frame


def read_run(path: str | Path) -> pd.DataFrame:
    """A run as (query_id, doc_id, score[, rank][, system]).

    TREC run files (``qid Q0 docid rank score tag``) lose their rank column: trec_eval
    orders them by score descending, ties by doc_id descending, and so does releval.
    Tables (CSV/parquet) keep an explicit ``rank`` when they have one.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", str(path))
    if _is_table(path):
        frame = _read_table(path)
        _require(frame, (S.QUERY_ID, S.DOC_ID))
        frame[[S.QUERY_ID, S.DOC_ID]] = frame[[S.QUERY_ID, S.DOC_ID]].astype(str)
        if S.RANK not in frame.columns:
            _require(frame, (S.SCORE,))
    else:
        frame = _read_whitespace(path, TREC_RUN).drop(columns=["q0", S.RANK])
    if S.SCORE in frame.columns:
        _numeric(frame, S.SCORE, integer=False)
    if S.RANK in frame.columns:
        _numeric(frame, S.RANK, integer=True)
    return frame


def write_trec_run(path: str | Path, run: pd.DataFrame) -> None:
    """Write (query_id, doc_id, score[, system]) as a TREC run: ``qid Q0 docid rank score
    tag``, ranked by score descending within each query."""
    ordered = run.sort_values([S.QUERY_ID, S.SCORE], ascending=[True, False], kind="stable")
    rank = ordered.groupby(S.QUERY_ID).cumcount() + 1
    tag = ordered[S.SYSTEM] if S.SYSTEM in ordered.columns else "run"
    lines = (ordered[S.QUERY_ID].astype(str) + " Q0 " + ordered[S.DOC_ID].astype(str) + " "
             + rank.astype(str) + " " + ordered[S.SCORE].map("{:.6f}".format).astype(str) + " "
             + pd.Series(tag, index=ordered.index).astype(str))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(line + "\n" for line in lines))
