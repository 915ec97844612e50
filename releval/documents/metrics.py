"""metrics.json (stage ``evaluate``, a ``dvc metrics`` file): system -> measure -> value."""

from __future__ import annotations

from pydantic import RootModel

from releval.documents import Checked

Number = int | float | None


class Metrics(Checked, RootModel[dict[str, dict[str, Number]]]):
    pass
