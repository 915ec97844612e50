"""Stage ``fixture``: every system evaluated on the pinned fixture beside the live window.

The fixture (``fixture.path``, read as ``fixture.source``: a frozen corpus, topics and
judgments, pinned by stage inputs) is searched by each system's route and scored with
``compare.measures``; fused systems use the choice stage fuse froze (run_stats.json)
(``releval.project.fixture``). Outputs (data/fixture/): per_query.parquet (system,
query_id, measure, value) and fixture.json (the fixture's size; per system and measure
mean, bootstrap CI, n, n_undefined; the systems that cannot search it, with why). Without a
fixture both say so and hold no figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from releval.artifacts import reads
from releval.decision.compare import canonical
from releval.documents.run_stats import RunStats
from releval.params import Params
from releval.project.fixture import NONE, evaluate_fixture, read
from releval.project.inputs import INPUT_DIR, pinned


@dataclass(frozen=True)
class Inputs:
    """stats: each fused system's run_stats.json (its frozen fusion choice); pinned: the
    folder of the pinned fixture."""

    stats: dict[str, RunStats] = reads("fused.stats", each="fused")
    pinned: Path = INPUT_DIR


@dataclass(frozen=True)
class Outputs:
    """One field per artifact ``fixture.<field>`` (``releval.artifacts``)."""

    per_query: pd.DataFrame
    summary: dict


def run(p: Params, inputs: Inputs) -> Outputs:
    """The fixture's per-query figures and fixture.json (no figures without a fixture)."""
    folder = pinned(p, "fixture.path", inputs.pinned)
    if folder is None:
        return Outputs(NONE, {"fixture": None, "systems": {}, "not_applicable": {}})
    fusions = {name: inputs.stats[name].fusion for name in p.fusion.systems}
    per_query, summary = evaluate_fixture(p, read(str(folder), p.fixture.source), fusions)
    return Outputs(per_query, {"fixture": p.fixture.path, **summary})


def line(p: Params, result: Outputs) -> str:
    summary = result.summary
    if summary["fixture"] is None:
        return "fixture: none (fixture.path is null)"
    first = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)[0][0]
    figures = ", ".join(f"{s} {m[first]['mean']:.4f}" for s, m in summary["systems"].items()
                        if m.get(first, {}).get("mean") is not None)
    return (f"fixture: {summary['queries']} topics, {summary['documents']} documents; "
            f"{first}: {figures}")
