"""The one timer every benchmark uses: the best wall time of a few runs."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """(fastest of ``repeat`` calls in seconds, the last call's result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result
