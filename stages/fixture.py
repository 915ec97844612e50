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

from pathlib import Path

from releval import artifacts
from releval.decision.compare import canonical
from releval.documents.run_stats import RunStats
from releval.params import Params
from releval.project.fixture import NONE, evaluate_fixture, read
from releval.project.inputs import in_users_words, pinned
from stages.common import (
    guarded,
    params_of,
    parser,
    read_doc,
    write,
)


def run(p: Params, folder: Path | None, stats: dict[str, dict]):
    """(per_query, summary) on the fixture at ``folder`` (None: no fixture)."""
    if folder is None:
        return NONE, {"fixture": None, "systems": {}, "not_applicable": {}}
    fusions = {name: stats[name]["fusion"] for name in p.fusion.systems}
    per_query, summary = evaluate_fixture(p, read(str(folder), p.fixture.source), fusions)
    return per_query, {"fixture": p.fixture.path, **summary}


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--fused", default=artifacts.group_folder("fused"))
    ap.add_argument("--out", default=artifacts.folder("fixture"))
    args = ap.parse_args()
    p = params_of(args)
    folder = pinned(p, "fixture.path")
    stats = {name: read_doc(artifacts.within(Path(args.fused) / name, "fused.stats"), RunStats)
             for name in p.fusion.systems}
    per_query, summary = run(p, folder, stats)
    out = Path(args.out)
    write("fixture.per_query", out, per_query)
    write("fixture.summary", out, summary)
    if folder is None:
        print("fixture: none (fixture.path is null)")
        return
    first = canonical(p.compare.measures, p.compare.min_effect, p.evaluate.rel)[0][0]
    figures = ", ".join(f"{s} {m[first]['mean']:.4f}" for s, m in summary["systems"].items()
                        if m.get(first, {}).get("mean") is not None)
    print(f"fixture: {summary['queries']} topics, {summary['documents']} documents; "
          f"{first}: {figures}")


if __name__ == "__main__":
    guarded(main, in_users_words)
