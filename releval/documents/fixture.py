"""fixture.json (stage ``fixture``): per system and measure the fixture's mean with its CI;
without ``fixture.path`` every part is empty."""

from __future__ import annotations

from releval.documents import Document, Fixed

Number = int | float | None


class Figure(Fixed):
    mean: Number
    ci_low: Number
    ci_high: Number
    n: int
    n_undefined: int


class FixtureSummary(Document):
    fixture: str | None
    systems: dict[str, dict[str, Figure]]  # system -> measure -> figure
    not_applicable: dict[str, str]  # system -> why it has no figures
    queries: int | None = None
    documents: int | None = None
    judgments: int | None = None
