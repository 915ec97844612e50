"""What an edit costs: the stages each kind of edit re-runs, the stages' start and a no-op run.

For each of two revisions of this repository (``--before``, the anchor, and ``--after``,
default HEAD), in a fresh clone under ``--workdir`` with ``../shared`` beside it:

1. runs the demo (``releval demo``) to fill the DVC cache and ``dvc.lock``, keeping each
   stage's time from its console (the stage's process, DVC and the validation of its
   outputs);
2. for each kind of edit — a line appended to a gate rule's module, a plot, the bootstrap,
   a measure, a route, and one value changed in each params section — asks
   ``dvc status`` which stages are out of date, then undoes the edit;
3. times each stage's start (``python -c "import stages.<name>"``, best of ``--repeat``);
4. times a no-op ``releval run`` (nothing changed: every stage but ``inputs`` and
   ``report`` is skipped).

Prints a table of edit → stages re-run (before | after), the per-stage start times and
the demo's per-stage times with their ratios after / before, and the no-op run's wall time
with its ratio. Foreach stages count once per item (``candidates@bm25`` …), shown as
``candidates×N``.

Usage: python benchmarks/reruns.py --before REV [--after REV] [--repeat N] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
STAGE_LINE = re.compile(r"^\S\s+(\w+)\s+(?:ran|skipped|failed)\s+([\d.]+) s", re.M)
CODE_EDITS = {  # kind of edit -> the file a comment line is appended to
    "a gate rule": "releval/decision/gate/not_worse.py",
    "a plot": "releval/report/plots.py",
    "the bootstrap": "releval/decision/stats.py",
    "a measure": "releval/metrics/cascade.py",
    "a route": "releval/retrieval/dense.py",
}


def _env(clone: Path) -> dict:
    return os.environ | {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                         "PYTHONPATH": str(clone)}


def _run(clone: Path, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=clone, env=_env(clone), capture_output=True, text=True)
    if check and done.returncode not in (0, 1):  # 1: the demo's gate fails, by design
        raise SystemExit(f"{' '.join(argv)} failed in {clone}:\n{done.stderr[-2000:]}")
    return done


def clone(rev: str, workdir: Path) -> Path:
    """A fresh clone of this repository at ``rev``, with ``../shared`` beside it."""
    home = workdir / rev.replace("/", "_")
    home.mkdir(parents=True)
    (home / "shared").symlink_to((ROOT.parent / "shared").resolve())
    subprocess.run(["git", "clone", "-q", str(ROOT), str(home / "main")], check=True)
    subprocess.run(["git", "-C", str(home / "main"), "checkout", "-q", rev], check=True)
    return home / "main"


def stale(clone: Path) -> str:
    """The stages ``dvc status`` finds out of date, foreach items counted per stage."""
    out = _run(clone, str(BIN / "dvc"), "status", "--json").stdout
    names = Counter(name.split("@")[0] for name in json.loads(out or "{}"))
    names.pop("inputs", None)  # always_changed: it runs (and pins) on every run
    if not names:
        return "—"
    return ", ".join(n if k == 1 else f"{n}×{k}" for n, k in names.items())


def _first_scalar(node, path: str):
    """(dotted key, value) of the first number, bool or string below ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            found = _first_scalar(value, f"{path}.{key}")
            if found:
                return found
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found = _first_scalar(value, f"{path}[{i}]")
            if found:
                return found
    elif isinstance(node, (bool, int, float, str)):
        return path, node
    return None


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    return f"{value}x"


def _set(tree, dotted: str, value) -> None:
    keys = [k for part in dotted.strip(".").split(".")
            for k in part.replace("]", "").split("[")]
    for key in keys[:-1]:
        tree = tree[int(key)] if isinstance(tree, list) else tree[key]
    last = keys[-1]
    tree[int(last) if isinstance(tree, list) else last] = value


def edits(clone: Path) -> dict[str, str]:
    """Each kind of edit -> the stages it leaves out of date (the edit undone after)."""
    rows = {}
    for kind, rel in CODE_EDITS.items():
        path = clone / rel
        text = path.read_text()
        path.write_text(text + "# an edit that changes no behaviour\n")
        rows[kind] = stale(clone)
        path.write_text(text)
    params = clone / "params.yaml"
    text = params.read_text()
    for section, body in (yaml.safe_load(text) or {}).items():
        found = _first_scalar(body, "")
        if not found:
            continue
        key, value = found
        tree = yaml.safe_load(text)
        _set(tree[section], key, _changed(value))
        params.write_text(yaml.safe_dump(tree, sort_keys=False))
        rows[f"params {section}{key}"] = stale(clone)
        params.write_text(text)
    return rows


def starts(clone: Path, repeat: int) -> dict[str, float]:
    """stage -> best wall time of ``python -c "import stages.<stage>"`` in seconds."""
    names = sorted(p.stem for p in (clone / "stages").glob("*.py")
                   if p.stem not in ("__init__", "common"))
    best = {}
    for name in names:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            _run(clone, sys.executable, "-c", f"import stages.{name}")
            times.append(time.perf_counter() - start)
        best[name] = min(times)
    return best


def measure(rev: str, workdir: Path, repeat: int) -> dict:
    where = clone(rev, workdir)
    print(f"[{rev}] demo in {where} …", file=sys.stderr, flush=True)
    demo = _run(where, str(BIN / "releval"), "demo")
    stage_times = {name: float(s) for name, s in STAGE_LINE.findall(demo.stdout + demo.stderr)}
    print(f"[{rev}] edits, starts, no-op run …", file=sys.stderr, flush=True)
    rows = edits(where)
    start_times = starts(where, repeat)
    noop = []
    for _ in range(repeat):
        start = time.perf_counter()
        _run(where, str(BIN / "releval"), "run")
        noop.append(time.perf_counter() - start)
    return {"edits": rows, "starts": start_times, "demo": stage_times, "noop": min(noop)}


def _times(title: str, before: dict[str, float], after: dict[str, float], digits: int) -> None:
    """A table of seconds per stage, before and after, with the ratio after / before."""
    print(f"| {title} | before s | after s | after / before |")
    print("|---|---|---|---|")
    for name in dict.fromkeys([*before, *after]):
        b, a = before.get(name), after.get(name)
        ratio = f"{a / b:.2f}" if a and b else "—"
        print(f"| {name} | {b or float('nan'):.{digits}f} | {a or float('nan'):.{digits}f} | "
              f"{ratio} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the anchor revision")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="releval-reruns-"))
    before = measure(args.before, workdir, args.repeat)
    after = measure(args.after, workdir, args.repeat)

    print(f"| edit | stages re-run at {args.before} | stages re-run at {args.after} |")
    print("|---|---|---|")
    for kind in dict.fromkeys([*before["edits"], *after["edits"]]):
        print(f"| {kind} | {before['edits'].get(kind, '—')} | {after['edits'].get(kind, '—')} |")
    print()
    _times("stage start (import)", before["starts"], after["starts"], 2)
    _times("stage in the demo", before["demo"], after["demo"], 1)
    print(f"no-op releval run: before {before['noop']:.1f} s, after {after['noop']:.1f} s, "
          f"after / before {after['noop'] / before['noop']:.2f}")


if __name__ == "__main__":
    main()
