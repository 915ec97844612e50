"""Stage ``inputs``: every input named in params copied by content into data/input/<slot>.

Runs on every ``dvc repro`` (``always_changed``); DVC hashes each slot, so a stage that
reads one re-runs exactly when that input's content changed, whatever its path. An input
that is not there ends the run with one line naming its params key (releval.inputs).
"""

from __future__ import annotations

from pathlib import Path

from releval.inputs import pin
from stages.common import guarded, params_of, parser


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/input")
    args = ap.parse_args()
    report = pin(params_of(args), Path(args.out))
    print("inputs: " + ("; ".join(f"{r['key']} pinned ({r['files']} files, {r['copied']} "
                                  "copied)" for r in report) or "none given (demo data)"))


if __name__ == "__main__":
    guarded(main)
