"""Which params file a run uses: DVC's stages always read ``params.yaml`` (dvc.yaml passes it to
every stage and pins its keys), so another file given with ``--params`` becomes params.yaml.
The file it replaces is kept under ``reports/params/`` first: nothing the user wrote is lost.

Before the first stage runs, the params are checked in full (``parsers``: the measure names
too, which the leaf params models cannot check; the flows add the cron string), and every
key dvc.yaml pins that the file leaves to its default is written into it with that default
(``complete``), so DVC never refuses a file releval accepted.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import yaml

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


def parsers() -> dict[str, Callable[[str], object]]:
    """The parsers of the params references a leaf cannot check (``releval.params.CHECKS``)
    that the library has: measure names, by the measure registry. (The flows add the cron
    string's, by Prefect: ``flows.pipeline.parsers``.)"""
    from releval.metrics.names import parse_measures

    return {"measure": parse_measures}


def pinned_keys(dvc_yaml: Path) -> list[str]:
    """The params.yaml keys dvc.yaml reads, in order, once each: each stage's ``foreach``
    source (``${fusion.systems}``) and its pinned params (``fusion.systems.${key}``: the part
    before the template; an entry ``{file: [keys]}`` names another file's keys unless the
    file is params.yaml)."""
    stages = (yaml.safe_load(dvc_yaml.read_text()) or {}).get("stages", {})
    keys = []
    for stage in stages.values():
        if isinstance(stage.get("foreach"), str):
            keys.append(stage["foreach"].removeprefix("${").removesuffix("}"))
        for entry in stage.get("do", stage).get("params", []):
            named = entry.get(str(PARAMS), []) if isinstance(entry, dict) else [entry]
            keys += [str(key).split(".${")[0] for key in named]
    return list(dict.fromkeys(keys))


def complete(params: Path, p, dvc_yaml: Path) -> list[str]:
    """Write into ``params`` every key ``dvc_yaml`` reads that the file leaves to its default,
    with the value ``p`` (the file's validated ``Params``) holds: a missing section as a block
    at the end, a missing key inside a section in place (``releval.params.write_overrides``);
    every comment and the layout kept. Returns the keys written (a key under a missing one
    is written with it)."""
    from releval.params import holds, lookup, read_raw, write_overrides

    raw, values = read_raw(params), p.model_dump(mode="json")
    absent = [key for key in pinned_keys(dvc_yaml) if not holds(raw, key)]
    missing = [k for k in absent if not any(k.startswith(o + ".") for o in absent)]
    inside = [key for key in missing if "." in key]
    write_overrides(params, [f"{key}={json.dumps(lookup(values, key))}"
                             for key in reversed(inside)])
    sections = {key: lookup(values, key) for key in missing if "." not in key}
    if sections:
        text = params.read_text()
        params.write_text(text + ("" if text.endswith("\n") or not text else "\n")
                          + yaml.safe_dump(sections, sort_keys=False))
    return missing
