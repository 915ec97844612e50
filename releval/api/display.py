"""How the API's results show themselves: JSON text, and an HTML table for a notebook (a
frame's rows, numbers written as the report and the commands write them,
``releval.report.formats``)."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from releval.report.formats import number


def plain(value: Any) -> Any:
    """``value`` as JSON has it: numpy scalars as Python numbers, NaN as None, containers
    walked."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in (sorted(value) if isinstance(value, set | frozenset)
                                   else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def json_text(doc: Any) -> str:
    """``doc`` as indented JSON (numbers as the commands write them in JSON)."""
    return json.dumps(plain(doc), indent=2, default=str)


def cell(value: Any, spec: str = ".4f") -> str:
    """One table cell's text: a float by ``spec`` (— where undefined), anything else as is."""
    if value is None or isinstance(value, float | np.floating):
        return number(None if value is None or pd.isna(value) else float(value), spec)
    return str(value)


def html_table(frame: pd.DataFrame, caption: str = "",
               formats: Mapping[str, Callable[[Any], str]] | None = None) -> str:
    """``frame`` as an escaped HTML table under ``caption``; ``formats``: a column's own cell
    writer (default ``cell``)."""
    formats = formats or {}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(formats.get(c, cell)(v))}</td>"
                         for c, v in zip(frame.columns, row, strict=True)) + "</tr>"
        for row in frame.itertuples(index=False))
    title = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (f'<table class="releval">{title}<thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>")
