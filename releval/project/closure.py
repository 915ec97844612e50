"""What a stage runs: the first-party files its command may execute, from the code itself.

``code_files(module)`` is the static import closure of ``python -m module``: the module,
every first-party module it imports (at the top or inside a function: a lazy import may
run), the packages' ``__init__`` on the way, transitively; ``stage_files`` adds the
document models a stage validates by name (the catalog's). It is each stage's exact code
dependency: ``dvc.yaml`` lists it and nothing else (``python -m releval.project.closure``
rewrites the lists, ``make dag``; tests/test_dvc_yaml.py fails on a missing and on an unused
entry), and a project made by ``releval init`` digests it per stage (``template``).

Registries keep closures small: params models are leaves (``releval.params``), so a stage
that reads params does not run the searches or the checks those params configure.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from pathlib import Path

import yaml

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where releval/, stages/, flows/ live
FIRST_PARTY = ("releval", "stages", "flows")


def _module_file(module: str, root: Path) -> Path | None:
    path = root / Path(*module.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imports(path: Path, root: Path) -> set[str]:
    """The dotted names ``path`` imports anywhere in the file (``from a import b``: a and a.b,
    as b may be a module)."""
    rel = path.relative_to(root).with_suffix("")
    package = list(rel.parts[:-1])  # a module's package; for __init__ the package itself
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names |= {base} | {f"{base}.{a.name}" for a in node.names}
    return names


def code_files(module: str, root: Path = PACKAGE_ROOT) -> set[str]:
    """Every first-party file ``python -m module`` may execute, relative to ``root``."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        parts = todo.pop().split(".")
        if parts[0] not in FIRST_PARTY:
            continue
        for i in range(1, len(parts) + 1):
            path = _module_file(".".join(parts[:i]), root)
            if path and path not in seen:
                seen.add(path)
                todo += imports(path, root)
    return {p.relative_to(root).as_posix() for p in seen}


def stage_files(stage: str, module: str, root: Path = PACKAGE_ROOT) -> set[str]:
    """What dvc.yaml's ``stage`` runs: its command module's closure, and the document models
    the catalog names for what it writes (``releval.artifacts``; imported by name when the
    stage validates a document it writes)."""
    from releval import artifacts

    models = {a.document.partition(":")[0] for a in artifacts.written_by(stage) if a.document}
    return set().union(code_files(module, root), *(code_files(m, root) for m in models))


def command_module(cmd: str) -> str:
    """The module a stage's ``python -m <module> …`` command runs."""
    argv = shlex.split(cmd)
    return argv[argv.index("-m") + 1]


def is_code(dep: str) -> bool:
    return Path(dep).parts[0] in FIRST_PARTY


def stage_bodies(graph: dict):
    """(name, the dict holding cmd/deps/params/outs) per stage (a foreach stage's ``do``)."""
    for name, stage in graph["stages"].items():
        yield name, stage.get("do", stage)


_STAGE = re.compile(r"^  (\w+):\s*$")
_DEP = re.compile(r"^(\s+)- (\S+)\s*$")


def rewrite_deps(text: str, root: Path = PACKAGE_ROOT) -> str:
    """``dvc.yaml``'s text with each stage's code deps replaced by its closure (sorted, first
    in its deps list); every other line (data deps, params, outs, comments) as written."""
    closures = {name: sorted(stage_files(name, command_module(body["cmd"]), root))
                for name, body in stage_bodies(yaml.safe_load(text))}
    out, stage, in_deps = [], None, False
    for line in text.splitlines():
        if m := _STAGE.match(line):
            stage = m.group(1)
        if line.strip() == "deps:" and stage in closures:
            out.append(line)
            indent = " " * (len(line) - len(line.lstrip()) + 2)
            out += [f"{indent}- {f}" for f in closures.pop(stage)]
            in_deps = True
            continue
        dep = _DEP.match(line)
        if in_deps and dep and is_code(dep.group(2)):
            continue
        in_deps = in_deps and bool(dep)
        out.append(line)
    if closures:
        raise ValueError(f"stages without a deps list: {', '.join(closures)}")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else PACKAGE_ROOT / "dvc.yaml")
    text = path.read_text()
    new = rewrite_deps(text, path.resolve().parent)
    if new != text:
        path.write_text(new)
    print(f"{path}: code deps {'rewritten' if new != text else 'already exact'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
