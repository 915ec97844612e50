"""The flow's validation: the compiled pandas checks (``flows.validation``) against Great
Expectations running the same suites (``flows.validation_gx``), and the import of each.

Each suite's frame is its good test frame (tests/flows/test_validation.py) tiled to
``--rows`` rows, the string columns of its keys made unique per copy (so every check passes
and runs in full), then read back from parquet as the flow reads a stage's output. Prints
per suite the best time of each (GX's ephemeral context created beforehand), the ratio
compiled / GX and whether the two reports are the same; then the import time of
``flows.validation`` alone and with GX (``flows.validation_gx``), each the best of
``--repeat`` fresh processes.
Usage: python benchmarks/validation_speed.py [--rows N] [--repeat R] [--suite NAME ...]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from timing import best_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows import validation, validation_gx  # noqa: E402
from tests.flows.test_validation import GOOD  # noqa: E402

KEYED = {"expect_column_values_to_be_unique", "expect_compound_columns_to_be_unique"}


def frame(name: str, rows: int) -> pd.DataFrame:
    """Suite ``name``'s good frame tiled to ``rows`` rows, its keys unique per copy, through
    parquet."""
    good = GOOD[name]()
    copies = -(-rows // len(good))
    tiled = pd.concat([good] * copies, ignore_index=True).iloc[:rows]
    copy = pd.Series(np.repeat(np.arange(copies), len(good))[:rows].astype(str))
    spec = validation.suite(name).expectations
    keys = {c for e in spec if e.type in KEYED for c in validation.columns(e.kwargs)}
    in_sets = {e.kwargs["column"] for e in spec if e.type == "expect_column_values_to_be_in_set"}
    tiled = tiled.assign(**{c: tiled[c] + "~" + copy for c in sorted(keys - in_sets)
                            if pd.api.types.is_string_dtype(tiled[c])})
    return pd.read_parquet(io.BytesIO(tiled.to_parquet()))


def import_seconds(module: str, repeat: int) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                                    capture_output=True, text=True).stdout)
               for _ in range(repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--suite", action="append", choices=sorted(validation.SUITES))
    args = ap.parse_args()
    validation_gx.validate("split", GOOD["split"]())  # GX's context, once
    print(f"{'suite':<20} {'rows':>8} {'GX s':>8} {'compiled s':>11} {'ratio':>7}  same report")
    totals = np.zeros(2)
    for name in args.suite or sorted(validation.SUITES):
        data = frame(name, args.rows)
        gx_s, gx = best_of(partial(validation_gx.validate, name, data), args.repeat)
        ours_s, ours = best_of(partial(validation.validate, name, data), args.repeat)
        assert ours.success, ours.failures
        totals += gx_s, ours_s
        print(f"{name:<20} {len(data):>8,} {gx_s:>8.3f} {ours_s:>11.4f} {ours_s / gx_s:>7.3f}"
              f"  {'yes' if ours == gx else 'NO'}")
    print(f"{'all':<20} {'':>8} {totals[0]:>8.3f} {totals[1]:>11.4f} "
          f"{totals[1] / totals[0]:>7.3f}")
    alone = import_seconds("flows.validation", args.repeat)
    with_gx = import_seconds("flows.validation_gx", args.repeat)
    print(f"import flows.validation: {alone:.2f} s; with GX (flows.validation_gx): "
          f"{with_gx:.2f} s; ratio {alone / with_gx:.3f}")


if __name__ == "__main__":
    main()
