"""The pipeline a project runs, as releval ships it: its DAG (``dvc.yaml``), the example
params (``examples/``) and the code digest that ties a project's outputs to the installed
code.

A project made by ``releval init`` holds no copy of the code: its stages run the installed
``stages`` / ``flows`` / ``releval`` packages. Its ``dvc.yaml`` is the shipped one with every
code dependency replaced by one params key per stage, ``<stage>`` in ``.releval/code.yaml``:
the digest of the files that stage runs, read from the installed packages. The flow rewrites
that file before each run (``refresh``), so upgrading releval re-runs exactly the stages whose
code changed, and the receipt records the version and the digest.

``dag()`` reads the shipped DAG: the source checkout's ``dvc.yaml`` when run from one, else
the wheel's copy ``releval/project/pipeline/dag.yaml`` (not named dvc.yaml, so DVC never
takes it for a pipeline of its own); ``root()`` holds the shipped ``examples/``.

A project's DAG is the shipped one fitted to its params (``fitted``): without
``fusion.systems`` it has no ``fuse`` stage and no stage reads ``data/fused`` (a team's runs
alone fuse nothing); under ``prepare.source: runs`` (no corpus) the ``inputs`` stage pins the
qrels and the queries file and ``prepare`` reads them with the runs' query ids. A source
checkout keeps the full DAG.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from releval.params import Params

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where releval/, stages/, flows/ live
SHIPPED = Path(__file__).resolve().parent / "pipeline"
CODE_FILE = Path(".releval/code.yaml")
CODE_PACKAGES = ("releval", "stages", "flows")


def root() -> Path:
    """The folder holding the shipped ``examples/`` (the checkout, or the wheel's copy)."""
    return PACKAGE_ROOT if (PACKAGE_ROOT / "dvc.yaml").is_file() else SHIPPED


def dag() -> dict:
    """The shipped ``dvc.yaml``, parsed."""
    path = PACKAGE_ROOT / "dvc.yaml"
    return yaml.safe_load((path if path.is_file() else SHIPPED / "dag.yaml").read_text())


def version() -> str:
    """The installed releval's version ("unknown" when not installed as a distribution)."""
    try:
        return metadata.version("releval")
    except metadata.PackageNotFoundError:
        return "unknown"


def _stage_bodies(graph: dict):
    """(name, the dict holding cmd/deps/params/outs) per stage (a foreach stage's ``do``)."""
    for name, stage in graph["stages"].items():
        yield name, stage.get("do", stage)


def _is_code(dep: str) -> bool:
    return Path(dep).parts[0] in CODE_PACKAGES


def code_deps() -> dict[str, list[str]]:
    """Per stage, the code files and folders the shipped ``dvc.yaml`` names as its deps."""
    return {name: [d for d in body.get("deps", []) if _is_code(d)]
            for name, body in _stage_bodies(dag())}


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(f for f in path.rglob("*.py") if "__pycache__" not in f.parts)
    return [path]


def digest(paths: list[str], base: Path = PACKAGE_ROOT) -> str:
    """sha256 over the named files (folders: their .py files), each with its path."""
    h = hashlib.sha256()
    for rel in sorted(paths):
        for f in _files(base / rel):
            h.update(f"\0{f.relative_to(base).as_posix()}\0".encode() + f.read_bytes())
    return h.hexdigest()


def code_digests() -> dict:
    """``.releval/code.yaml``'s content: the version, the whole code's digest, and per
    stage the digest of the files it runs."""
    deps = code_deps()
    return {"version": version(), "code": digest(sorted({d for ds in deps.values() for d in ds})),
            **{stage: digest(paths) for stage, paths in deps.items()}}


FUSE_STAGE = "fuse"
FUSED = "data/fused"
RUNS_ONLY_SLOTS = ("data/input/qrels", "data/input/queries")  # releval.project.inputs slots
RUNS_ONLY_KEYS = ("prepare.qrels", "prepare.queries")  # the params keys naming them
RUNS_SLOT = "data/input/runs"


def fuses(graph: dict) -> bool:
    """Whether the DAG has the fuse stage (its later stages read ``data/fused``)."""
    return FUSE_STAGE in graph.get("stages", {})


def pins_qrels(graph: dict) -> bool:
    """Whether the DAG's inputs stage pins a runs-only project's qrels (``fitted``)."""
    outs = graph.get("stages", {}).get("inputs", {}).get("outs", [])
    return RUNS_ONLY_SLOTS[0] in {next(iter(o)) if isinstance(o, dict) else o for o in outs}


def _reads_fused(path: str) -> bool:
    return path == FUSED or path.startswith(FUSED + "/")


def fitted(graph: dict, params: Params) -> dict:
    """The DAG ``graph`` for ``params`` (module docstring), in place: no fuse stage and no
    ``data/fused`` dep when ``fusion.systems`` is empty; the
    runs-only inputs when ``prepare.source`` is runs."""
    stages = graph["stages"]
    if not params.fusion.systems:
        stages.pop(FUSE_STAGE, None)
        for _, body in _stage_bodies(graph):
            if "deps" in body:
                body["deps"] = [d for d in body["deps"] if not _reads_fused(d)]
    if params.runs_only:
        outs = stages["inputs"]["outs"]
        named = {next(iter(o)) if isinstance(o, dict) else o for o in outs}
        outs += [{slot: {"persist": True}} for slot in RUNS_ONLY_SLOTS if slot not in named]
        watched = stages["inputs"].setdefault("params", [])
        watched += [k for k in RUNS_ONLY_KEYS if k not in watched]
        prepare = stages["prepare"]
        prepare["deps"] += [d for d in (*RUNS_ONLY_SLOTS, RUNS_SLOT)
                            if d not in prepare["deps"]]
        if "candidates.systems" not in prepare["params"]:  # the runs' paths: their query ids
            prepare["params"].append("candidates.systems")
    return graph


def project_dag(params: Params | None = None) -> dict:
    """The shipped ``dvc.yaml`` for a project without the code: fitted to ``params`` when
    given (``fitted``), every code dep replaced by the stage's key of ``.releval/code.yaml``
    among its params."""
    graph = dag()
    if params is not None:
        fitted(graph, params)
    for name, body in _stage_bodies(graph):
        body["deps"] = [d for d in body.get("deps", []) if not _is_code(d)]
        if not body["deps"]:
            del body["deps"]
        body["params"] = [*body.get("params", []), {str(CODE_FILE): [name]}]
    return graph


def project_dag_text(params: Params | None = None) -> str:
    """A project's dvc.yaml as ``releval init`` writes it: a header, then ``project_dag``."""
    header = ["# The pipeline's stages (shipped with releval; `releval init` wrote this copy)."]
    if params is not None and not params.fusion.systems:
        header.append("# No fuse stage, and no stage reads data/fused: fusion.systems is empty.")
    if params is not None and params.runs_only:
        header.append("# prepare.source runs (no corpus): inputs pins the qrels and the queries "
                      "file,\n# prepare reads them with the runs' query ids.")
    return "\n".join(header) + "\n" + yaml.safe_dump(project_dag(params), sort_keys=False,
                                                     width=100)


def refresh(project: Path = Path(".")) -> bool:
    """Rewrite the project's ``.releval/code.yaml`` from the installed code (a project made
    by ``releval init``; a source checkout has none). True when the file is there."""
    target = project / CODE_FILE
    if not target.is_file():
        return False
    text = yaml.safe_dump(code_digests(), sort_keys=False)
    if target.read_text() != text:
        target.write_text(text)
    return True
