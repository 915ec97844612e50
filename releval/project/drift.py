"""``releval drift A B``: the changed documents that moved a system's figure between two
revisions of a project whose code and params are the same.

A and B are git revisions or kept runs' receipts (``releval.project.revision``). They must
agree on the code of the stages the figure comes from (``stages``: the dvc.lock digests of
their code dependencies) and on the params it depends on (``releval.diagnosis.rebuild.
settings``); else drift refuses, naming what changed: it diagnoses a corpus change. Each
revision is rebuilt from its own outputs (documents, queries, qrels, split); the search
(``releval.diagnosis.drift.diagnose``) then holds B's queries, qrels, split and fusion choice
fixed and reverts B's document changes. Where A's documents under B's other inputs give
another figure than A's own rebuild, inputs besides the corpus moved it too: a note says by
how much.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from releval import artifacts
from releval.diagnosis.drift import TOL, Drift, diagnose
from releval.diagnosis.rebuild import Rebuild, settings, windows
from releval.errors import InputError
from releval.numbers import formatted
from releval.params import Params, parse_params
from releval.project.revision import Revision, code_changes, revision

TABLES = {name: artifacts.at(entry) for name, entry in (
    ("documents", "raw.documents"), ("queries", "raw.queries"), ("qrels", "judgments.qrels"),
    ("split_table", "split.split"))}
SHOWN = 3  # differences named in a refusal


@dataclass(frozen=True)
class Diagnosis:
    """The two revisions, what was followed, A's figure from A's own inputs (``own_a``), the
    search over B's (``drift``) and notes."""

    a: Revision
    b: Revision
    system: str
    measure: str
    split: str
    own_a: float
    drift: Drift
    notes: tuple[str, ...]


def stages(p: Params, system: str) -> list[str]:
    """The dvc.lock stages ``system``'s figure comes from."""
    fused = [f"fuse@{system}"] if system in p.fusion.systems else []
    return ["prepare", "split", "judgments", *(f"candidates@{w}" for w in windows(p, system)),
            *fused, "evaluate"]


def _flat(values: dict[str, object]) -> dict[str, object]:
    return {f"{key}.{k}" if isinstance(v, dict) else key: v2
            for key, v in values.items()
            for k, v2 in (v.items() if isinstance(v, dict) else [(None, v)])}


def _refuse(what: str, differences: list[str]) -> None:
    if differences:
        more = f", and {len(differences) - SHOWN} more" if len(differences) > SHOWN else ""
        raise InputError(f"{what} changed from A to B ({'; '.join(differences[:SHOWN])}{more}): "
                         f"drift diagnoses a corpus change under the same {what}", "drift")


def diagnose_revisions(root: Path, ref_a: str, ref_b: str, *, system: str | None = None,
                       measure: str = "nDCG@10", split: str = "test",
                       tol: float = TOL) -> Diagnosis:
    """Drift of ``system`` (default: B's ``compare.candidate``) ``measure`` on ``split``
    from ``ref_a`` to ``ref_b`` (module docstring)."""
    a, b = revision(root, ref_a), revision(root, ref_b)
    pa = parse_params(a.params, f"params.yaml@{ref_a}")
    pb = parse_params(b.params, f"params.yaml@{ref_b}")
    system = system or pb.compare.candidate
    sa, sb = _flat(settings(pa, system)), _flat(settings(pb, system))
    _refuse("params", [f"{k}: {sa.get(k)!r} → {sb.get(k)!r}" for k in sorted(set(sa) | set(sb))
                       if sa.get(k) != sb.get(k)])
    _refuse("code", code_changes(a, b, stages(pb, system)))
    at_a = {name: a.table(path) for name, path in TABLES.items()}
    at_b = {name: b.table(path) for name, path in TABLES.items()}
    own_a = Rebuild.of(pa, system, measure, split, **at_a).figure(at_a["documents"])
    found = diagnose(at_a["documents"], at_b["documents"],
                     Rebuild.of(pb, system, measure, split, **at_b).figure, tol=tol)
    notes = []
    if abs(found.figure_a - own_a) > tol:
        moved = formatted(found.figure_a - own_a, "+.4f")
        notes.append(f"A's documents under B's queries, qrels, split and fusion choice give "
                     f"{formatted(found.figure_a)}, A's own inputs {formatted(own_a)}: inputs "
                     f"besides the corpus moved the figure by {moved}")
    return Diagnosis(a, b, system, measure, split, own_a, found, tuple(notes))
