"""Stage ``inputs``: every input named in params copied by content into data/input/<slot>.

Runs on every ``dvc repro`` (``always_changed``); DVC hashes each slot, so a stage that
reads one re-runs exactly when that input's content changed, whatever its path. An input
that is not there ends the run with one line naming its params key (releval.project.inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from releval.params import Params
from releval.project.inputs import pin
from stages.common import written_with


def _copied(pinned: list[dict], slot: Path) -> None:
    """Nothing left to write: ``pin`` copies each slot as it compares it by content."""


@dataclass(frozen=True)
class Inputs:
    """None: the inputs are the files params name (``releval.project.inputs``)."""


@dataclass(frozen=True)
class Outputs:
    """slot: one entry (key, slot, files, copied) per input copied into its slot,
    data/input/<slot>/ (the copy and pinned.json)."""

    slot: list[dict] = written_with(_copied)


def run(p: Params, inputs: Inputs) -> Outputs:
    """Pin every input of ``p`` under data/input/; relative paths resolve from
    $RELEVAL_INPUT_BASE, else the working directory."""
    return Outputs(pin(p))


def line(p: Params, result: Outputs) -> str:
    return "inputs: " + ("; ".join(f"{r['key']} pinned ({r['files']} files, {r['copied']} "
                                   "copied)" for r in result.slot) or "none given (demo data)")
