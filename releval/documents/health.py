"""health.json (stage ``health``): every system's health figures (null where undefined, with
the reason), the figures' definitions and the qrels they were read against."""

from __future__ import annotations

from typing import Any

from releval.documents import Document, Fixed


class Qrels(Fixed):
    path: str
    sha256: str


class Health(Document):
    systems: dict[str, dict[str, Any]]  # system -> figure -> value, and "undefined" etc.
    definitions: dict[str, str]  # figure -> its definition
    qrels: Qrels
