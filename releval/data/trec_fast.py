"""TREC run and qrels files read by Arrow's CSV reader: the common shape, fast.

Most TREC files separate their fields by one space (or one tab) and have no blank lines, no
quotes and exactly the format's fields on every line. Such a file is read here with
``pyarrow.csv`` (multi-threaded, ids straight into Arrow strings, scores and grades parsed
as numbers), and the result is the frame ``releval.data.readers`` returns for it. Anything
else returns None and the general reader takes over, so every rule and every error message
stays the general reader's: a missing field, a NUL byte, a byte that is not UTF-8, a quote, a
blank line, a field that is not a number, more fields than the format's, runs of blanks.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv

BLOCK_SIZE = 1 << 24  # bytes per block: the unit of the reader's threads
SCAN = 1 << 24  # bytes per block of the scan for what the general reader must handle


def _delimiter(path: Path) -> str | None:
    """" " or "\\t" when the file uses that one character between fields and never the
    other; else None. A quote, a NUL byte or a carriage return that does not end a line also
    sends the file to the general reader. Scanned in blocks: the file is never held whole."""
    delimiter = other = None
    last = b""
    with open(path, "rb") as f:
        while block := f.read(SCAN):
            if delimiter is None:
                end = block.find(b"\n", 0, 65536)
                head = block[: end if end >= 0 else 65536]
                space, tab = b" " in head, b"\t" in head
                if space == tab:
                    return None
                delimiter, other = (b" ", b"\t") if space else (b"\t", b" ")
            if any(block.find(c) >= 0 for c in (other, b'"', b"\0")):
                return None
            if b"\r" in block or last == b"\r":
                joined = last + block  # a CR at a block's end, its LF in the next one
                if joined.count(b"\r") - joined[-1:].count(b"\r") != joined.count(b"\r\n"):
                    return None  # a carriage return that does not end a line
            last = block[-1:]
    return None if delimiter is None else delimiter.decode()


def read(path: Path, names: tuple[str, ...], types: dict[str, pa.DataType]
         ) -> pd.DataFrame | None:
    """The TREC file at ``path`` as a frame of the ``types`` columns (ids: large strings; a
    dictionary type: a categorical column) indexed by line number; the other columns are
    read as strings (a field is there, not empty) and left out, batch by batch. None when
    the general reader must read it."""
    delimiter = _delimiter(path)
    if delimiter is None:
        return None
    column_types = {name: types.get(name, pa.string()) for name in names}
    kept = [name for name in names if name in types]
    batches = []
    try:
        reader = csv.open_csv(
            path, read_options=csv.ReadOptions(column_names=list(names), block_size=BLOCK_SIZE),
            parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                           double_quote=False, escape_char=False,
                                           newlines_in_values=False, ignore_empty_lines=False),
            convert_options=csv.ConvertOptions(column_types=column_types, null_values=[],
                                               strings_can_be_null=False,
                                               quoted_strings_can_be_null=False,
                                               check_utf8=True))
        for batch in reader:
            for name in names:
                column = batch.column(name)
                if column.null_count:
                    return None
                values = column.dictionary if pa.types.is_dictionary(column.type) else column
                if (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)) \
                        and len(values) and pc.min(pc.binary_length(values)).as_py() == 0:
                    return None  # an empty field (a blank line, two delimiters)
            batches.append(batch.select(kept))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a line with more or fewer fields, a bad number or byte: the rules' turn
    if not batches:
        return None
    frame = pa.Table.from_batches(batches).to_pandas()  # strings stay in Arrow's chunks
    del batches
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return frame
