"""Which params file a run uses: DVC's stages always read ``params.yaml`` (dvc.yaml passes it to
every stage and pins its keys), so another file given with ``--params`` becomes params.yaml.
The file it replaces is kept under ``reports/params/`` first: nothing the user wrote is lost.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from releval import artifacts
from releval.errors import InputError

PARAMS = Path("params.yaml")
KEPT = artifacts.path("reports.params")


def adopt(chosen: Path, root: Path) -> tuple[Path, str | None]:
    """``root``'s params.yaml holding ``chosen``'s text: (params.yaml, a line saying what was
    done, or None when ``chosen`` is params.yaml itself or already its copy)."""
    target = root / PARAMS
    chosen = chosen if chosen.is_absolute() else Path.cwd() / chosen
    if chosen.resolve() == target.resolve():
        return target, None
    if not chosen.is_file():
        raise InputError("file not found", str(chosen))
    text = chosen.read_text()
    if target.exists() and target.read_text() == text:
        return target, None
    kept = None
    if target.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        kept = root / KEPT / f"params-{stamp}.yaml"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(target, kept)
    target.write_text(text)
    note = f"params.yaml ← {chosen.relative_to(root) if chosen.is_relative_to(root) else chosen}"
    return target, note + (f" (the previous one is kept as {kept.relative_to(root)})"
                           if kept else "")
