"""What every stage shares: ``main`` reads a stage's ``Inputs`` (each field an artifact of
the catalog, ``releval.artifacts.reads``) by its format and model, calls ``run(p, inputs)``
and writes each field of its ``Outputs`` as the artifact ``<group>.<field>``.

A stage module (``python -m stages <name>``, ``stages/__main__.py``) holds ``Inputs``,
``Outputs`` and ``run``, and optionally ``line(p, outputs) -> str`` (its one printed line)
and ``exit_status(outputs) -> int``; its row in ``stages.table`` names its params, and
dvc.yaml's block is generated from both (``python -m stages.table``). An error on a pinned
copy under data/input/ is put in the user's words (``releval.project.inputs``)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import typing
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.data.readers import read_parquet, text_of, write_trec_run
from releval.documents import Checked, Document
from releval.errors import InputError, end, reading
from releval.params import Params, load_params
from releval.project.inputs import in_users_words


def parser(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--params", default="params.yaml", help="params file")
    return ap


def params_of(args: argparse.Namespace) -> Params:
    return load_params(args.params)


def written_with(writer: Callable[[object, Path], object]) -> object:
    """An ``Outputs`` field written by ``writer(value, path)`` instead of its format's."""
    return dataclasses.field(metadata={"writer": writer})


def setting(p: Params, dotted: str):
    """The params value at ``dotted`` (``judgments.automatic``; a property such as
    ``recommendation`` too)."""
    value = p
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _document(hint) -> type[Checked] | None:
    """The document model a field's annotation names (``Summary``, ``Summary | None``,
    ``dict[str, RunStats]``), None for a plain dict."""
    if isinstance(hint, type) and issubclass(hint, Checked):
        return hint
    return next(filter(None, map(_document, typing.get_args(hint))), None)


def read_artifact(name: str, path: Path, hint=None, reader=None):
    """Artifact ``name`` at ``path``: ``reader(path)`` when given, else by its format: a
    parquet table, a JSON document (the model ``hint`` names, else a dict validated against
    the catalog's model), a csv table (strings kept as written), else the path itself."""
    if reader is not None:
        return reader(path)
    form = artifacts.get(name).format
    if form == "parquet":
        return read_table(path)
    if form == "json":
        model = _document(hint)
        return model.read(path) if model else read_doc(path, artifacts.document(name))
    if form == "csv":
        with reading(str(path)):
            return pd.read_csv(path, keep_default_na=False)
    return path


def _paths(read: artifacts.Read, p: Params, item: str | None) -> Path | dict[str, Path]:
    """Where ``read``'s artifact lies: one path, or system -> path (``Read.each``)."""
    if read.each in ("system", "candidate", "fused"):
        key = read.artifact.split(".", 1)[1]
        groups = {"candidates": p.candidates.systems if read.each != "fused" else {},
                  "fused": p.fusion.systems if read.each != "candidate" else {}}
        return {name: artifacts.path(f"{group}.{key}", system=name)
                for group, names in groups.items() for name in names}
    if read.each == "source":
        return {name: artifacts.path(read.artifact, system=name) for name in p.sources(item)}
    return artifacts.path(read.artifact, system=item or "")


def read_inputs(cls: type, p: Params, item: str | None = None):
    """A stage's ``Inputs`` read from the project at the working directory: each field by its
    ``artifacts.Read``; a field without one keeps its default (``item``: the field
    ``system``, a foreach stage's item)."""
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    values = {"system": item} if item is not None else {}
    for f in dataclasses.fields(cls):
        read = f.metadata.get("read")
        if read is None or (read.when and not setting(p, read.when)):
            continue
        where = _paths(read, p, item)
        absent = read.optional or not read.dep
        how = (read.artifact, hints[f.name], read.reader)
        if isinstance(where, dict):
            values[f.name] = {k: read_artifact(how[0], v, *how[1:])
                              for k, v in where.items() if v.exists() or not absent}
        elif where.exists() or not absent:
            values[f.name] = read_artifact(how[0], where, *how[1:])
    return cls(**values)


def write_result(result, group: str, item: str | None = None) -> None:
    """Every field of a stage's ``Outputs`` as artifact ``<group>.<field>`` in its folder."""
    folder = artifacts.folder(group).format(system=item or "")
    write_outputs(result, group, folder,
                  **{f.name: f.metadata["writer"] for f in dataclasses.fields(result)
                     if "writer" in f.metadata})


def main(name: str, argv: list[str] | None = None) -> None:
    """Run stage ``name`` in the project at the working directory: ``--params`` (and
    ``--system`` for a foreach stage), its ``head_start`` begun (if it has one), its inputs
    read, ``run``, its outputs written, its line printed; bad input ends it in one line
    (``guarded``)."""
    module = importlib.import_module(f"stages.{name}")
    ap = parser((module.__doc__ or name).splitlines()[0])
    ap.add_argument("--system", help="a foreach stage's item")
    args = ap.parse_args(argv)
    group = artifacts.written_by(name)[0].name.split(".")[0]

    def body() -> None:
        p = params_of(args)
        if hasattr(module, "head_start"):  # begun beside the reading of the inputs
            module.head_start()
        result = module.run(p, read_inputs(module.Inputs, p, args.system))
        write_result(result, group, args.system)
        if hasattr(module, "line"):
            print(module.line(p, result))
        if hasattr(module, "exit_status") and (status := module.exit_status(result)):
            sys.exit(status)

    guarded(body, in_users_words, args.params)


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
            pinned: Callable[[InputError, Params], InputError] | None = None,
            params: str | None = None) -> None:
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
            try:
                exc = pinned(exc, load_params(params) if params else
                             params_of(parser("").parse_known_args()[0]))
            except InputError as bad_params:  # the params themselves are bad: say that
                exc = bad_params
        sys.exit(end(exc, verbose=True, hint="its traceback is above, in reports/run.log "
                     "under releval run"))
