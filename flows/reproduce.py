"""``releval reproduce RECEIPT``: re-run a past run from its pinned inputs and compare.

In a clean temporary git worktree at the receipt's commit, with the receipt's params, the
pipeline runs again from scratch (every stage forced). Inputs come from their sources when
those are still there (so a changed input is named), else from the DVC cache or the default
remote by the digests the run pinned; ``pinned=True`` always restores them. The DVC cache
and the content-keyed embedding cache are shared with the project (both are addressed by
content, so sharing cannot change a number). The looks file the gate read (``reports.looks``)
is written back from the receipt's ``run.looks_file``, so the gate counts the same looks.
Every digest and metric of the new receipt is
compared with the old one; where they differ, how close the reproduction is per system
(``releval.decision.reproduction``: each measure's RMSE over the per-query values, and the
ranked lists' KTU and RBO, read from the original outputs in the DVC cache by the receipt's
digests). A receipt that cannot be re-run here is refused in one line
naming it and what is missing: its commit (not in this repository), or its pinned inputs
(in neither the DVC cache nor the remote: each by params key, slot and md5).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd
import yaml

from releval import artifacts
from releval.data import contracts as S
from releval.data.readers import read_parquet
from releval.decision import reproduction as R
from releval.errors import InputError
from releval.params import Params, parse_params
from releval.project import receipt
from releval.project.inputs import INPUT_DIR, MANIFEST, inputs
from releval.project.revision import cache_dir, cache_file, cached, receipt_commit
from releval.report.formats import number

RUNS = ("candidates.run", "fused.run")  # the outputs whose ranked lists are compared
LABELS = {"rmse": "RMSE ", "order": ""}  # how a closeness line names each part
NONE_IN_BOTH = "no query in both the original and the reproduction"


@dataclass
class Outcome:
    identical: bool
    digests: int
    metrics: int
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    log: Path | None = None
    closeness: list[str] = field(default_factory=list)


def _run(cmd: list[str], cwd: Path, what: str, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise InputError(f"{what} failed: {tail[0]}", " ".join(cmd[:3]))
    return done


def _dvc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "dvc", *args], cwd, f"dvc {args[0]}")


def _share_dvc(root: Path, tree: Path) -> None:
    """The worktree reads the project's DVC cache, and its remote when that is a local
    folder given relative to the project."""
    _dvc("cache", "dir", "--local", str((root / ".dvc" / "cache").resolve()), cwd=tree)
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        default = repo.config["core"].get("remote")
        url = repo.config["remote"].get(default, {}).get("url") if default else None
    if url and "://" not in url and not Path(url).is_absolute():
        _dvc("remote", "modify", "--local", default, "url",
             str((root / ".dvc" / url).resolve()), cwd=tree)


def _restore_pinned(tree: Path, old: dict, path: Path, p: Params) -> list[str]:
    """Check the pinned inputs out of the DVC cache (or pull them from the remote) by the
    ``inputs`` stage's lock entry the run kept; InputError naming the receipt ``path`` and
    each input in neither (params key, slot, digest) when they cannot be restored."""
    entry = old.get("run", {}).get("inputs_lock")
    if not entry:
        raise InputError("the receipt keeps no lock entry of the inputs stage", str(path))
    lock = {"schema": "2.0", "stages": {"inputs": entry}}
    (tree / "dvc.lock").write_text(yaml.safe_dump(lock, sort_keys=False))
    try:
        _dvc("checkout", "inputs", cwd=tree)
        where = "the DVC cache"
    except InputError:
        try:
            _dvc("pull", "inputs", cwd=tree)
        except InputError as exc:
            raise _unrestorable(tree, entry, path, p) or exc from None
        where = "the DVC remote"
    return [f"pinned inputs restored from {where} ({len(entry.get('outs', []))} slots)"]


def _held(item, digest: str) -> str:
    """One pinned input as the run had it: its params key and where its copy came from."""
    if item.external:
        return f"{item.key}, copied from {item.path} as the run's params give it ({digest})"
    what = ("not given in the run's params" if item.path is None else
            f"{item.path}, a pipeline output (not copied)")
    return f"{item.key}, {what}: its slot holds only {MANIFEST} ({digest})"


def _unrestorable(tree: Path, entry: dict, path: Path, p: Params) -> InputError | None:
    """The refusal naming the pinned inputs that are in neither the DVC cache nor the
    remote (after a pull), or None when every one is there (DVC failed for another
    reason)."""
    cache = cache_dir(tree)
    gone = [o for o in entry.get("outs", []) if not cached(cache, o.get("md5") or "")]
    if not gone:
        return None

    def named(out: dict) -> str:
        """What the slot held: the params key, the path the run's params gave (where the
        copy came from) or that none was given, the slot and its digest."""
        slot = out["path"].rstrip("/") + "/"
        held = [i for i in inputs(p) if (str(INPUT_DIR / i.slot) + "/").startswith(slot)]
        digest = f"{out['path']}, md5 {out.get('md5')}"
        if not held:
            return f"{out['path']} (a slot the run's params do not name; md5 {out.get('md5')})"
        return "; ".join(_held(i, digest) for i in held)

    return InputError("the run's pinned inputs are in neither the DVC cache nor the default "
                      f"remote: {'; '.join(map(named, gone))}; `dvc push` them from a clone "
                      "where they exist, or restore the remote", str(path))


def closeness(old: dict, tree: Path, cache: Path) -> list[str]:
    """One line per system: how close the outputs in ``tree`` are to those the receipt
    ``old`` digests (read from the DVC ``cache``): each measure's RMSE over the per-query
    values, and the mean KTU and RBO of the ranked lists; an output either side lacks is
    left out."""
    def pair(path: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        md5 = old["receipt"]["outputs"].get(path) or ""
        then, now = cache_file(cache, md5), tree / path
        return (read_parquet(then), read_parquet(now)) if md5 and then.is_file() \
            and now.is_file() else None

    then, now = [dict(tuple(f.groupby(f[S.SYSTEM].astype(str), sort=False)))
                 for f in pair(artifacts.at("evaluate.per_query")) or ()] or ({}, {})
    per_query = {s: (then[s], now[s]) for s in then if s in now}
    runs = {Path(p).parent.name: two for p in old["receipt"]["outputs"]
            if any(fnmatch(p, artifacts.get(n).pattern) for n in RUNS) and (two := pair(p))}
    close = R.closeness(per_query, runs)
    lines = []
    for system in dict.fromkeys([*per_query, *runs]):
        parts = [LABELS[key] + ", ".join(f"{r.measure} {number(r.value)}" for r in rows)
                 + f" ({max(r.n for r in rows)} queries)" for key, frame in close.items()
                 if (rows := list(frame[frame[S.SYSTEM] == system].itertuples()))]
        lines.append(f"{system}: " + ("; ".join(parts) or NONE_IN_BOTH))
    return lines


def reproduce(path: Path, root: Path, *, pinned_only: bool = False, keep: bool = False,
              progress: Callable[[str], None] = print) -> Outcome:
    old = receipt.read(path, ("code.commit", "params.values", "inputs", "outputs", "metrics",
                              "results"))
    code = old["receipt"]["code"]
    receipt_commit(root, old, path)
    raw = old["receipt"]["params"]["values"]
    p = parse_params(raw, f"{path} (params)")
    notes = []
    if code.get("dirty"):
        notes.append(f"the run's code differed from commit {code['commit'][:12]} (diff "
                     f"sha256 {code['diff_sha256'][:12]}); the worktree has the commit only")
    missing = [i.key for i in inputs(p) if i.external and not (root / i.path).exists()]
    if missing and not pinned_only:
        notes.append(f"source gone ({', '.join(missing)}): using the pinned copies")
    restore = pinned_only or bool(missing)
    tree = Path(tempfile.mkdtemp(prefix="releval-reproduce-"))
    try:
        _run(["git", "worktree", "add", "--detach", str(tree), code["commit"]], root,
             "git worktree add")
        progress(f"worktree at {code['commit'][:12]}: {tree}")
        (tree / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
        if old.get("run", {}).get("looks_file") is not None:  # the gate's input as it read it
            receipt.write(artifacts.path("reports.looks", tree), old["run"]["looks_file"])
        _share_dvc(root, tree)
        cache = artifacts.path("cache.root", root)
        if cache.is_dir():
            shared = artifacts.path("cache.root", tree)
            shared.parent.mkdir(exist_ok=True)
            shared.symlink_to(cache.resolve(), target_is_directory=True)
        if restore:
            notes += _restore_pinned(tree, old, path, p)
        progress("running the pipeline (every stage, from scratch) ...")
        env = os.environ | {"PYTHONPATH": str(tree), "RELEVAL_INPUT_BASE": str(root.resolve())}
        log = artifacts.path("reports.reproduce_log", tree)
        log.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "flows.pipeline", "--params", "params.yaml", "--force",
               *(["--skip", "inputs"] if restore else [])]
        with log.open("w") as handle:
            code_ = subprocess.run(cmd, cwd=tree, env=env, stdout=handle,
                                   stderr=subprocess.STDOUT).returncode
        if code_:
            lines = [x for x in log.read_text().splitlines() if x.startswith("error:")]
            raise InputError(f"the pipeline failed in the worktree: "
                             f"{lines[-1] if lines else 'see ' + str(log)}", str(path))
        new = receipt.read(artifacts.path("reports.receipt", tree))
        digests, metrics = receipt.counted(old)
        diffs = receipt.differences(old, new)
        kept = artifacts.path("reports.reproduce_log", root)
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, kept)
        receipt.write(artifacts.path("reports.reproduced", root), new)
        try:
            close = closeness(old, tree, cache_dir(root)) if diffs else []
        except InputError as exc:  # the figures beside the differences, never the verdict
            close = [f"not measured: {exc}"]
        return Outcome(not diffs, digests, metrics, diffs, notes, kept, close)
    finally:
        if not keep:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=root,
                           capture_output=True)
            shutil.rmtree(tree, ignore_errors=True)
            subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True)


def main() -> None:
    """``python -m flows.reproduce RECEIPT [--pinned] [--keep]``: exit 0 when identical,
    1 when something differs, 2 on bad input."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("receipt", type=Path)
    ap.add_argument("--pinned", action="store_true",
                    help="restore every input from the DVC cache/remote, ignore the sources")
    ap.add_argument("--keep", action="store_true", help="keep the worktree and its log")
    args = ap.parse_args()
    try:
        out = reproduce(args.receipt, Path.cwd(), pinned_only=args.pinned, keep=args.keep)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    for note in out.notes:
        print(f"note: {note}")
    if out.identical:
        print(f"reproduced: identical ({out.digests} digests, {out.metrics} metrics)")
        return
    print(f"reproduced: DIFFERENT ({len(out.differences)} differences; the new receipt is "
          f"{artifacts.at('reports.reproduced')}, the log {out.log})")
    for line in out.differences:
        print(f"  {line}")
    if out.closeness:
        print("how close, per system (RMSE of the per-query values: 0 = identical; KTU and RBO "
              f"of the ranked lists to depth {R.DEPTH}, mean over queries: 1 = identical)")
    for line in out.closeness:
        print(f"  {line}")
    sys.exit(1)


if __name__ == "__main__":
    main()
