"""Stage ``inputs``: every input named in params copied by content into data/input/<slot>.

Runs on every ``dvc repro`` (``always_changed``); DVC hashes each slot, so a stage that
reads one re-runs exactly when that input's content changed, whatever its path. An input
that is not there ends the run with one line naming its params key (releval.project.inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from releval.params import Params
from releval.project.inputs import INPUT_DIR, pin
from stages.common import guarded, params_of, parser


@dataclass(frozen=True)
class Outputs:
    """pinned: one entry (key, slot, files, copied) per input copied into its slot. The
    slots themselves (data/input/<slot>/: the copy and pinned.json) are what ``pin`` writes:
    copying by content is this stage's output, so run() writes them, not main()."""

    pinned: list[dict]


def run(p: Params, out: Path = INPUT_DIR, base: Path | None = None) -> Outputs:
    """Pin every input of ``p`` under ``out``; relative paths resolve from ``base``
    (default: $RELEVAL_INPUT_BASE, else the working directory)."""
    return Outputs(pin(p, out, base))


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(INPUT_DIR))
    args = ap.parse_args()
    result = run(params_of(args), Path(args.out))
    print("inputs: " + ("; ".join(f"{r['key']} pinned ({r['files']} files, {r['copied']} "
                                  "copied)" for r in result.pinned) or "none given (demo data)"))


if __name__ == "__main__":
    guarded(main)
