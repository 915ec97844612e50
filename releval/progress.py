"""Progress of long work (encoding, retrieval): a rich bar on a terminal or, when the
pipeline's quiet console runs the stage, events the console draws under the stage's line.

Under the console, ``RELEVAL_PROGRESS`` names a file; each update appends one JSON line
``{"description", "done", "total"}`` (at most every ``EVERY_S`` seconds, and the last).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Sized

from rich.progress import track as rich_track

ENV = "RELEVAL_PROGRESS"
EVERY_S = 0.2


def track(sequence: Iterable, description: str, total: int | None = None,
          disable: bool = False, transient: bool = True) -> Iterator:
    """``sequence``'s items, reporting how many were done."""
    path = os.environ.get(ENV)
    if not path:
        yield from rich_track(sequence, description=description, total=total,
                              disable=disable, transient=transient)
        return
    if disable:
        yield from sequence
        return
    total = len(sequence) if total is None and isinstance(sequence, Sized) else total
    last = 0.0
    with open(path, "a", encoding="utf-8") as out:
        def report(done: int) -> None:
            out.write(json.dumps({"description": description, "done": done,
                                  "total": total}) + "\n")
            out.flush()

        report(0)
        done = 0
        for item in sequence:
            yield item
            done += 1
            if time.monotonic() - last >= EVERY_S:
                last = time.monotonic()
                report(done)
        report(done)
