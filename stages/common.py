"""What every stage's ``main()`` shares: arguments, params and output writing."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from releval.data.readers import read_parquet, text_of
from releval.errors import InputError
from releval.params import Params, load_params


def parser(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--params", default="params.yaml", help="params file")
    return ap


def params_of(args: argparse.Namespace) -> Params:
    return load_params(args.params)


def system_dirs(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, Path]:
    """Each evaluated system's output folder: candidate systems, then fused ones."""
    return {name: Path(folder) / name
            for folder, names in ((candidates, p.candidates.systems), (fused, p.fusion.systems))
            for name in names}


def read_table(path: str | Path) -> pd.DataFrame:
    """A parquet input; InputError (one line) when an earlier stage has not written it or it
    is not readable (releval.data.readers)."""
    return read_parquet(path)


def read_doc(path: str | Path) -> dict:
    """A JSON object input; InputError (one line) when missing or not a JSON object."""
    try:
        doc = json.loads(text_of(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", str(path)) from None
    if not isinstance(doc, dict):
        raise InputError("expected a JSON object", str(path))
    return doc


def system_runs(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, pd.DataFrame]:
    """Every evaluated system's run.parquet."""
    return {name: read_table(folder / "run.parquet")
            for name, folder in system_dirs(p, candidates, fused).items()}


def system_seeds(p: Params, candidates: str | Path) -> dict[str, pd.DataFrame]:
    """system -> its seeds.parquet (every training seed's window, column ``seed``), for the
    candidate systems trained with several seeds."""
    seeds = {name: Path(candidates) / name / "seeds.parquet" for name in p.candidates.systems}
    tables = {name: read_table(path) for name, path in seeds.items() if path.exists()}
    return {name: table for name, table in tables.items() if not table.empty}


def system_stats(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, dict]:
    """Every evaluated system's run_stats.json."""
    return {name: read_doc(folder / "run_stats.json")
            for name, folder in system_dirs(p, candidates, fused).items()}


def write_json(path: str | Path, doc: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=False, default=str) + "\n")


def write_parquet(path: str | Path, frame: pd.DataFrame) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False)


def guarded(main: Callable[[], None]) -> None:
    """Run a stage; bad input ends it with one line and exit status 2, no traceback."""
    try:
        main()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
