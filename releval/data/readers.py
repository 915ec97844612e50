"""Read qrels and runs from TREC files, BEIR qrels TSV, CSV or parquet (and write TREC runs).

Every frame returned carries ``attrs['source']`` (the path) and ``attrs['unit']``
(``line`` or ``row``) and is indexed by that line/row number, so later validation can
name the exact place of a bad record.

One gate for every file any command reads (``existing``, ``text_of``, ``read_parquet``):
a missing path, a folder where a file belongs, text that is not UTF-8 (a UTF-8 BOM is
fine), a NUL byte and an unreadable parquet file are each one InputError naming the file
and, for text, the byte offset and line. Ids are strings: ``NA``, ``null``, ``None`` are
ids like any other, never "missing". TREC lines may carry more fields than the format's:
as trec_eval does, fields after the last one are ignored.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from releval.data import contracts as S
from releval.data import trec_fast
from releval.errors import InputError

TREC_QRELS = (S.QUERY_ID, "iteration", S.DOC_ID, S.GRADE)
TREC_RUN = (S.QUERY_ID, "q0", S.DOC_ID, S.RANK, S.SCORE, S.SYSTEM)


def _tag(frame: pd.DataFrame, source: str, unit: str, first: int) -> pd.DataFrame:
    frame.index = pd.RangeIndex(first, first + len(frame)) if unit == "row" else frame.index
    frame.attrs.update(source=source, unit=unit)
    return frame


def existing(path: str | Path) -> Path:
    """``path`` when it is a file; InputError when it is missing or a folder."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, expected a file", str(path))
    if not path.exists():
        raise InputError("file not found", str(path))
    return path


def sha256_of(path: str | Path) -> str:
    """The sha256 (hex) of a file's bytes; InputError when it is missing (``existing``)."""
    with existing(path).open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def not_utf8(data: bytes, start: int, source: str, offset: int = 0,
             line: int | None = None) -> InputError:
    """The refusal of text whose byte ``start`` of ``data`` is not UTF-8: the byte, its offset
    in the file (``offset``: where ``data`` starts) and its line (``line``: ``data``'s first
    line), and a hint where the file looks UTF-16."""
    line = (line or 1) + data.count(b"\n", 0, start)
    utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    return InputError(
        f"not UTF-8 text: byte 0x{data[start]:02x} at offset {offset + start} (line {line}); "
        "releval reads UTF-8"
        + (" (this file looks UTF-16: convert it, e.g. `iconv -f UTF-16 -t UTF-8`)"
           if utf16 else ""), source)


def json_error(exc: json.JSONDecodeError) -> str:
    """A JSON parse error as a whole sentence: the library's message ends mid-sentence
    ("Invalid control character at"); the column (and the character, for a control
    character) completes it."""
    msg = exc.msg.removesuffix(" at")
    char = (f" {exc.doc[exc.pos]!r}" if "control character" in msg
            and exc.pos < len(exc.doc) else "")
    return f"invalid JSON: {msg}{char} at column {exc.colno}"


def json_lines(path: str | Path) -> Iterator[tuple[int, object]]:
    """Each non-blank line of a JSON-lines file as (its line number, its value), read line by
    line (a corpus may be large); a leading UTF-8 BOM dropped. A line that is not UTF-8 is
    refused naming the byte, its offset in the file and its line (``not_utf8``); one that is
    not JSON naming the line and column (``json_error``)."""
    path = existing(path)
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            data = raw[3:] if number == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
            skipped = len(raw) - len(data)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8(data, exc.start, str(path), offset + skipped, number) from None
            offset += len(raw)
            if not text.strip():
                continue
            try:
                yield number, json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(json_error(exc), str(path), f"line {number}") from None


def text_of(path: str | Path) -> str:
    """A text file's content as UTF-8 (a leading BOM dropped); InputError naming the byte
    offset and line of the first byte that is not UTF-8, or of a NUL byte."""
    path = existing(path)
    data = path.read_bytes()
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    data = data[bom:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # the offset is the file's, its BOM counted
        raise not_utf8(data, exc.start, str(path), bom) from None
    nul = text.find("\0")
    if nul >= 0:
        raise InputError(f"a NUL byte at offset {nul} (line {text.count(chr(10), 0, nul) + 1}):"
                         " a binary file, not text", str(path))
    return text


def read_parquet(path: str | Path) -> pd.DataFrame:
    """A parquet table; InputError when missing, a folder or not readable as parquet."""
    path = existing(path)
    try:
        return pd.read_parquet(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"not a readable parquet file ({first})", str(path)) from None


def _read_whitespace(path: Path, names: tuple[str, ...]) -> pd.DataFrame:
    """Whitespace-separated fields, the first ``len(names)`` of each line (later ones are
    ignored, as trec_eval ignores them); ids read as strings, never as missing."""
    text = text_of(path)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=r"\s+", header=None, names=list(names),
                            usecols=range(len(names)), dtype=str, na_filter=False,
                            skip_blank_lines=False, engine="c")
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(columns=list(names), dtype=str)
    except pd.errors.ParserError:  # every line is short of the format's fields
        number, line = next((i, x) for i, x in enumerate(text.splitlines(), 1) if x.strip())
        raise InputError(f"expected {len(names)} fields ({' '.join(names)}), saw "
                         f"{len(line.split())}", str(path), f"line {number}") from None
    frame.index = frame.index + 1  # 1-based line numbers
    frame = frame[(frame != "").any(axis=1)]
    short = frame[frame[names[-1]] == ""]
    if len(short):
        first = short.index[0]
        seen = int((short.loc[first] != "").sum())
        raise InputError(f"expected {len(names)} fields ({' '.join(names)}), saw {seen}",
                         str(path), f"line {first}")
    return _tag(frame, str(path), "line", 1)


def _read_trec(path: Path, names: tuple[str, ...], kinds: dict[str, trec_fast.Kind],
               compact: bool) -> pd.DataFrame:
    """A TREC file: the compiled reader for the common shape (``trec_fast``), else the
    general whitespace reader; the columns of ``kinds`` (others are read, then dropped). The
    system column (a run's tag, the same on most lines) is categorical; with ``compact`` the
    fast reader's query ids are too, and its doc ids Arrow strings (``trec_fast.read``)."""
    path = existing(path)
    frame = trec_fast.read(path, names, kinds, compact=compact)
    if frame is None:
        frame = _read_whitespace(path, names)
        frame = frame.drop(columns=[c for c in names if c not in kinds])
        for name, kind in kinds.items():
            if kind == "category":
                frame[name] = frame[name].astype("category")
    return _tag(frame, str(path), "line", 1)


def _fields_of_line(path: str, line: int) -> int | None:
    """How many whitespace-separated fields line ``line`` of the text file ``path`` holds
    (None when it cannot be read back: standard input, a table)."""
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                if number == line:
                    return len(raw.split())
    except OSError:
        return None
    return None


def _numeric(frame: pd.DataFrame, column: str, *, integer: bool,
             fields: tuple[str, ...] = ()) -> None:
    """``column`` as numbers (integers with ``integer``); InputError at the first that is
    not one. ``fields``: a TREC file's fields, for a line that holds more of them than the
    format (an id with a space splits into more fields): the count is the error, not the
    value that landed in ``column``."""
    raw = frame[column]
    if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
        values = raw  # already numbers (a parquet table, the fast TREC reader)
        bad = pd.Series(False, index=raw.index)
    else:
        values = pd.to_numeric(raw, errors="coerce")
        bad = values.isna() & raw.notna()
        if bad.any():  # "nan" is a number (NaN), refused later where NaN is not allowed
            bad &= (raw.astype(str).str.lower() != "nan") | integer
    if integer and not pd.api.types.is_integer_dtype(values):
        bad |= values.notna() & (values != np.floor(values))
    if bad.any():
        label = bad.idxmax()
        kind = "an integer" if integer else "a number"
        seen = (_fields_of_line(frame.attrs["source"], int(label))
                if fields and frame.attrs.get("unit") == "line" else None)
        if seen is not None and seen > len(fields):
            raise InputError(f"expected {len(fields)} fields ({' '.join(fields)}), got {seen}: "
                             f"an id holding a space splits into more fields (read as "
                             f"trec_eval reads it, {column} would be {raw[label]!r})",
                             frame.attrs["source"], S.where(frame, label))
        raise InputError(f"{column} must be {kind}, got {raw[label]!r}",
                         frame.attrs["source"], S.where(frame, label))
    if integer and not pd.api.types.is_integer_dtype(values) and values.notna().all():
        values = values.astype("int64")
    frame[column] = values


IDS = (S.QUERY_ID, S.DOC_ID, "query-id", "corpus-id")  # BEIR names the ids differently
BEIR_QRELS = ("query-id", "corpus-id", "score")


def read_delimited(path: str | Path, sep: str = ",", header: bool = True,
                   names: tuple[str, ...] | None = None) -> pd.DataFrame:
    """A CSV/TSV table through the gate: only an empty field is missing (``NA`` is a
    value); a line with more fields than the header is an InputError naming it. Indexed by
    line number."""
    path = existing(path)
    try:
        frame = pd.read_csv(io.StringIO(text_of(path)), sep=sep, dtype=dict.fromkeys(IDS, str),
                            keep_default_na=False, na_values=[""],
                            header=0 if header else None, names=list(names) if names else None)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(columns=list(names or ()))
    except pd.errors.ParserError as exc:  # "Expected 3 fields in line 7, saw 4"
        raise InputError(f"{str(exc).strip().splitlines()[-1].rstrip('.')} (more fields "
                         "than the header)", str(path)) from None
    first = 2 if header else 1
    frame.index = frame.index + first
    return _tag(frame, str(path), "line", first)


def read_table(path: Path) -> pd.DataFrame:
    """A parquet (tagged by row), TSV or CSV (tagged by line) table through the gate."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _tag(read_parquet(path), str(path), "row", 1)
    return read_delimited(path, "\t" if suffix == ".tsv" else ",")


def read_strings(path: Path) -> pd.DataFrame:
    """A CSV or parquet table whose CSV cells are as strings (only an empty cell is
    missing) indexed by line number, parquet indexed by 1-based row."""
    if path.suffix.lower() == ".parquet":
        frame = read_parquet(path)
        frame.index, unit = pd.RangeIndex(1, len(frame) + 1), "row"
    else:
        with warnings.catch_warnings():  # a long first line: an index pandas would invent
            warnings.simplefilter("error", pd.errors.ParserWarning)
            try:
                frame = pd.read_csv(io.StringIO(text_of(path)), dtype=str, index_col=False,
                                    keep_default_na=False, na_values=[""])
            except pd.errors.EmptyDataError:
                frame = pd.DataFrame()
            except pd.errors.ParserWarning:
                raise InputError("more fields than the header", str(path), "line 2") from None
            except pd.errors.ParserError as exc:  # "... Expected 4 fields in line 7, saw 5"
                found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
                if not found:
                    raise InputError(f"not readable as CSV ({exc})", str(path)) from None
                header, line, seen = found.groups()
                raise InputError(f"{seen} fields, more than the header's {header}", str(path),
                                 f"line {line}") from None
        frame.index, unit = pd.RangeIndex(2, len(frame) + 2), "line"
    frame.attrs.update(source=str(path), unit=unit)
    return frame


def _headerless_beir(frame: pd.DataFrame) -> bool:
    """A TSV whose first line is a judgment, not BEIR's header (3 fields, integer grade)."""
    cols = [str(c) for c in frame.columns]
    if len(cols) != 3 or set(cols) & {*IDS, "score", S.GRADE}:
        return False
    try:
        return float(cols[2]) == int(float(cols[2]))
    except ValueError:
        return False


def is_table(path: Path) -> bool:
    return path.suffix.lower() in {".parquet", ".csv", ".tsv"}


def read_qrels(path: str | Path, *, comments: bool = False, compact: bool = False
               ) -> pd.DataFrame:
    """qrels as (query_id, doc_id, grade): TREC ``qid iter docid grade``, BEIR TSV
    (``query-id corpus-id score`` header), or a CSV/parquet table with contract columns.
    ``comments``: a TREC file's comment lines are skipped as trec_eval 10.0 skips them
    (``QRELS_COMMENT``); ``compact``: a TREC file's ids in the evaluator's form, without a
    string per row (``_read_trec``)."""
    if comments and not is_table(existing(path)):
        return _without_comments(partial(read_qrels, compact=compact), path, QRELS_COMMENT)
    path = existing(path)
    if is_table(path):
        frame = read_table(path)
        if path.suffix.lower() == ".tsv" and _headerless_beir(frame):  # read line 1 as data
            frame = read_delimited(path, "\t", header=False, names=BEIR_QRELS)
        frame = frame.rename(
            columns={"query-id": S.QUERY_ID, "corpus-id": S.DOC_ID, "score": S.GRADE})
        frame[[S.QUERY_ID, S.DOC_ID]] = frame[[S.QUERY_ID, S.DOC_ID]].astype(str)
    else:
        frame = _read_trec(path, TREC_QRELS, {S.QUERY_ID: "ids", S.DOC_ID: "text",
                                              S.GRADE: "int"}, compact)
    S.require_columns(frame, (S.QUERY_ID, S.DOC_ID, S.GRADE), "qrels")
    _numeric(frame, S.GRADE, integer=True, fields=() if is_table(path) else TREC_QRELS)
    return frame


# trec_eval 10.0's comment lines (``get_trec_results.c``, ``get_qrels.c``), each match
# replaced by its group ``kept`` (a comment's line stays, blank, so errors name the file's
# line): in a run, a line whose first non-blank character is "#"; in qrels, a line whose
# first character is "#", one at a time (the line after one is a judgment whatever it holds)
RUN_COMMENT = re.compile(rb"(?m)^[ \t\r\v\f]*#[^\n]*(?P<kept>)")
QRELS_COMMENT = re.compile(rb"(?m)^#[^\n]*(?P<kept>\n[^\n]*)?")


def _without_comments(read, path: str | Path, comment: re.Pattern | None) -> pd.DataFrame:
    """``read`` of the TREC text at ``path`` (``-``: standard input) with ``comment``'s
    matches made blank; errors name ``path`` (``<stdin>``) and the line as it has it."""
    name = "<stdin>" if str(path) == "-" else str(existing(path))
    text = sys.stdin.buffer.read() if name == "<stdin>" else Path(path).read_bytes()
    if comment is not None:
        text = comment.sub(rb"\g<kept>", text)
    with tempfile.NamedTemporaryFile(prefix="releval-", suffix=".trec", delete=False) as handle:
        handle.write(text)
    try:
        frame = read(handle.name)
    except InputError as exc:
        raise InputError(exc.rule, name, exc.where) from None
    finally:
        Path(handle.name).unlink()
    frame.attrs["source"] = name
    return frame


def read_run(path: str | Path, *, comments: bool = False, compact: bool = False
             ) -> pd.DataFrame:
    """A run as (query_id, doc_id, score[, rank][, system]).

    TREC run files (``qid Q0 docid rank score tag``) lose their rank column: trec_eval
    orders them by score descending, ties by doc_id descending, and so does releval.
    Tables (CSV/parquet) keep an explicit ``rank`` when they have one. ``-`` reads a TREC
    run from standard input; ``comments`` skips its comment lines as trec_eval 10.0 does
    (``RUN_COMMENT``); ``compact``: a TREC run's ids in the evaluator's form, without a
    string per row (``_read_trec``).
    """
    if str(path) == "-" or comments and not is_table(existing(path)):
        return _without_comments(partial(read_run, compact=compact), path,
                                 RUN_COMMENT if comments else None)
    path = existing(path)
    if is_table(path):
        frame = read_table(path)
        S.require_columns(frame, (S.QUERY_ID, S.DOC_ID), "run")
        frame[[S.QUERY_ID, S.DOC_ID]] = frame[[S.QUERY_ID, S.DOC_ID]].astype(str)
        if S.RANK not in frame.columns:
            S.require_columns(frame, (S.SCORE,), "run")
    else:
        frame = _read_trec(path, TREC_RUN, {S.QUERY_ID: "ids", S.DOC_ID: "text",
                                            S.SCORE: "float", S.SYSTEM: "category"}, compact)
    if S.SCORE in frame.columns:
        _numeric(frame, S.SCORE, integer=False, fields=() if is_table(path) else TREC_RUN)
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
