"""Validations already passed, keyed by content: a suite that passed on these bytes, with
these suite parameters and this suite code, is not run again (a skipped stage's outputs are
the bytes validated when it ran, so a no-op run neither reads nor checks them).

The key is sha256 over the suite's name, its parameters, the digest of the code the suites
run (``flows.validation``'s import closure) and the file's own sha256. Passed keys are kept
in ``<validation dir>/passed.txt`` (beside the suites' JSON reports), one per line; a failed
check is never kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from releval.project.closure import PACKAGE_ROOT, code_files
from releval.project.template import digest

LEDGER = "passed.txt"  # one key per line, oldest first
KEEP = 1000  # the most recent passed keys kept


@functools.cache
def suite_code() -> str:
    """The digest of every file the suites run."""
    return digest(sorted(code_files("flows.validation")), PACKAGE_ROOT)


def key(suite: str, params: dict, path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    text = json.dumps([suite, params, suite_code(), h.hexdigest()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class Ledger:
    """The passed keys of one validation folder, oldest first (an unreadable file: none)."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / LEDGER
        try:
            self.keys = self.path.read_text().split()
        except OSError:
            self.keys = []

    def __contains__(self, k: str) -> bool:
        return k in self.keys

    def add(self, k: str) -> None:
        """Keep ``k`` (written whole: a concurrent writer loses a key, never the file)."""
        self.keys = [*(x for x in self.keys if x != k), k][-KEEP:]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{LEDGER}.{os.getpid()}.tmp")
        tmp.write_text("".join(f"{x}\n" for x in self.keys))
        tmp.replace(self.path)
