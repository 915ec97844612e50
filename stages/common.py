"""What every stage's ``main()`` shares: arguments, params, and reading and writing the
artifacts of the catalog (``releval.artifacts``)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.data.readers import read_parquet, text_of, write_trec_run
from releval.documents import Document
from releval.documents.run_stats import RunStats
from releval.errors import InputError, end, reading
from releval.params import Params, load_params


def parser(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--params", default="params.yaml", help="params file")
    return ap


def params_of(args: argparse.Namespace) -> Params:
    return load_params(args.params)


def system_files(p: Params, candidates: str | Path, fused: str | Path,
                 key: str) -> dict[str, Path]:
    """Each evaluated system's artifact ``key`` (``run``, ``latency``, ``stats``: the same in
    the ``candidates`` and ``fused`` groups), candidate systems, then fused ones."""
    return {name: artifacts.within(Path(folder) / name, f"{group}.{key}")
            for group, folder, names in (("candidates", candidates, p.candidates.systems),
                                         ("fused", fused, p.fusion.systems))
            for name in names}


def read_table(path: str | Path) -> pd.DataFrame:
    """A parquet input; InputError (one line) when an earlier stage has not written it or it
    is not readable (releval.data.readers)."""
    return read_parquet(path)


def read_doc(path: str | Path, model: type[Document] | None = None) -> dict:
    """A JSON object input, validated against its document ``model`` when given (a renamed
    or missing key stops the stage naming the file and the key); InputError (one line) when
    missing or not a JSON object."""
    with reading(str(path)):
        doc = json.loads(text_of(path))
    if not isinstance(doc, dict):
        raise InputError("expected a JSON object", str(path))
    return doc if model is None else model.check(doc, str(path))


def system_runs(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, pd.DataFrame]:
    """Every evaluated system's run.parquet."""
    return {name: read_table(path)
            for name, path in system_files(p, candidates, fused, "run").items()}


def system_seeds(p: Params, candidates: str | Path) -> dict[str, pd.DataFrame]:
    """system -> its seeds.parquet (every training seed's window, column ``seed``), for the
    candidate systems trained with several seeds."""
    seeds = {name: artifacts.within(Path(candidates) / name, "candidates.seeds")
             for name in p.candidates.systems}
    tables = {name: read_table(path) for name, path in seeds.items() if path.exists()}
    return {name: table for name, table in tables.items() if not table.empty}


def system_stats(p: Params, candidates: str | Path, fused: str | Path) -> dict[str, dict]:
    """Every evaluated system's run_stats.json."""
    return {name: read_doc(path, RunStats)
            for name, path in system_files(p, candidates, fused, "stats").items()}


def write_json(path: str | Path, doc: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=False, default=str) + "\n")


def write_parquet(path: str | Path, frame: pd.DataFrame) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False)


def write_text(path: str | Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_csv(path: str | Path, frame: pd.DataFrame) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)


WRITERS: dict[str, Callable[[Path, object], None]] = {
    "parquet": write_parquet, "json": write_json, "csv": write_csv, "trec": write_trec_run,
    "md": write_text, "html": write_text, "xml": write_text}


def write(name: str, folder: str | Path, value,
          writer: Callable[[object, Path], object] | None = None) -> Path:
    """Write artifact ``name`` into ``folder`` (the stage's output folder) in its catalog
    format, or with ``writer(value, path)``; a JSON document is validated against its model
    first (the file is the dict as built, its bytes independent of the model). Returns its
    path."""
    path = artifacts.within(folder, name)
    model = artifacts.document(name)
    if model is not None:
        model.check(value, str(path))
    if writer is None:
        WRITERS[artifacts.get(name).format](path, value)
    else:
        writer(value, path)
    return path


def write_outputs(result, group: str, folder: str | Path,
                  **writers: Callable[[object, Path], object]) -> None:
    """Write every field of a stage's ``Outputs`` as the artifact ``<group>.<field>`` into
    ``folder``; ``writers`` name a field's own writer (``writer(value, path)``)."""
    for field in dataclasses.fields(result):
        write(f"{group}.{field.name}", folder, getattr(result, field.name),
              writers.get(field.name))


def guarded(main: Callable[[], None],
            pinned: Callable[[InputError, Params], InputError] | None = None) -> None:
    """Run a stage; bad input (an InputError, or a library's parse error:
    ``releval.errors.PARSE_ERRORS``) ends it with one line ``error: …`` and exit status 2, no
    traceback; any other exception is a bug: its traceback, then one line ``internal error:
    …``, status 1 (a stage's stderr is reports/run.log under ``releval run``). ``pinned``: a
    stage that reads pinned inputs puts an error on a pinned copy in the user's words with
    it, given the stage's params (``releval.project.inputs.in_users_words``)."""
    try:
        main()
    except Exception as exc:
        if pinned is not None and isinstance(exc, InputError):
            exc = pinned(exc, params_of(parser("").parse_known_args()[0]))
        sys.exit(end(exc, verbose=True, hint="its traceback is above, in reports/run.log "
                     "under releval run"))
