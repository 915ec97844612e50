"""What every stage's ``main()`` shares: arguments, params and output writing."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from releval import schema as S
from releval.errors import InputError
from releval.metrics import resolve
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


def system_runs(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, pd.DataFrame]:
    """Every evaluated system's run.parquet."""
    return {name: pd.read_parquet(folder / "run.parquet")
            for name, folder in system_dirs(p, candidates, fused).items()}


def system_stats(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, dict]:
    """Every evaluated system's run_stats.json."""
    return {name: json.loads((folder / "run_stats.json").read_text())
            for name, folder in system_dirs(p, candidates, fused).items()}


def compared(p: Params) -> tuple[list[str], float | dict[str, float]]:
    """``compare.measures`` and ``compare.min_effect`` under their canonical names (as the
    evaluate stage names them with ``evaluate.rel``)."""
    measures = [m.name for m in resolve(p.compare.measures, p.evaluate.rel)]
    effect = p.compare.min_effect
    if isinstance(effect, dict):
        effect = {m.name: v for name, v in effect.items()
                  for m in resolve([name], p.evaluate.rel)}
    return measures, effect


def evaluated_queries(p: Params, split: pd.DataFrame, queries: pd.DataFrame
                      ) -> tuple[pd.Series, pd.Series]:
    """The ``evaluate.splits`` query ids whose relevance is measured, and those left out for
    carrying the ``no_answer.tag`` tag."""
    in_split = split.loc[split[S.SPLIT].isin(p.evaluate.splits), S.QUERY_ID]
    tagged = queries[S.TAGS].map(lambda tags: tags is not None and p.no_answer.tag in list(tags))
    no_answer = in_split.isin(queries.loc[tagged.to_numpy(dtype=bool), S.QUERY_ID])
    return in_split[~no_answer], in_split[no_answer]


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
