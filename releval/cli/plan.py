"""``releval plan``: how many queries the comparison needs to detect ``compare.min_effect``,
from a pilot: this project's per-query values, or those of a past run (a receipt of the
ledger or a git revision, read from the DVC cache)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.table import Table

from releval import artifacts
from releval.cli.output import AsJson, console, emit, fail
from releval.data import contracts as S
from releval.errors import InputError
from releval.report.formats import count, number


def _tables(pilot: str | None, cluster: bool) -> tuple[dict[str, pd.DataFrame], str]:
    """The pilot's per_query, labels (and queries when clustered), and where they came from."""
    from releval.data.readers import read_parquet
    from releval.project.revision import revision

    names = {"per_query": "evaluate.per_query", "labels": "evaluate.labels"}
    if cluster:
        names["queries"] = "raw.queries"
    if pilot is None:
        paths = {k: Path(artifacts.path(v)) for k, v in names.items()}
        missing = [str(p) for p in paths.values() if not p.is_file()]
        if missing:
            raise InputError("missing: run the pipeline first (releval run), or name a past "
                             "run with --pilot", missing[0])
        return {k: read_parquet(p) for k, p in paths.items()}, "this project's outputs"
    rev = revision(Path.cwd(), pilot)
    return {k: rev.table(artifacts.at(v)) for k, v in names.items()}, \
        f"{pilot} (commit {rev.commit[:12]})"


def plan(
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path("params.yaml"),
    pilot: Annotated[str | None, typer.Option(
        "--pilot", help="a past run: its receipt file or a git revision (default: the "
        "per-query values in this project's data/)")] = None,
    power: Annotated[float | None, typer.Option(
        "--power", min=0.01, max=0.99, help="the power to plan for (default: plan.power)")]
    = None,
    min_effect: Annotated[float | None, typer.Option(
        "--min-effect", min=0.0, help="the effect to detect (default: compare.min_effect)")]
    = None,
    as_json: AsJson = False,
) -> None:
    """The queries needed per measure and per slice to detect the minimum effect of
    compare.baseline against compare.candidate at compare.alpha and the stated power.

    Two ways: the paired t test's noncentral-t solution (Sakai's topic-set-size design), with
    the range that σ's (1 − α) interval gives; and a simulation that resamples the pilot's
    differences (for the "all" slice). Beside each: the pilot's n and its minimum detectable
    effect. Units are users where compare.cluster is set."""
    from releval.api.planning import plan as plan_of
    from releval.decision.compare import canonical
    from releval.decision.stats import clusters_of
    from releval.params import load_params

    try:
        p = load_params(params)
        c = p.compare
        measures, effect = canonical(c.measures, c.min_effect if min_effect is None
                                     else min_effect, p.evaluate.rel)
        effects = effect if isinstance(effect, dict) else dict.fromkeys(measures, effect)
        zero = [m for m, e in effects.items() if not e > 0]
        if zero:
            where = ("--min-effect" if min_effect is not None
                     else f"{params}: compare.min_effect")
            fail(f"{where}: {'0' if min_effect is not None else 'zero'} for "
                 f"{', '.join(zero)}: no finite number of queries detects a zero effect; "
                 "give the smallest difference that matters (e.g. --min-effect 0.01)")
        frames, source = _tables(pilot, bool(c.cluster))
        labels = frames["labels"]
        labels = labels[labels[S.DIMENSION].isin(p.slices.dimensions)]
        target = p.plan.power if power is None else power
        planned = plan_of(frames["per_query"], c.baseline, c.candidate, measures,
                          min_effect=effects, alpha=c.alpha, power=target, labels=labels,
                          clusters=clusters_of(frames.get("queries"), c.cluster),
                          rel=p.evaluate.rel, seed=p.base.seed)
    except InputError as exc:
        fail(str(exc))
    if as_json:
        emit({"pilot": source, **planned.to_dict()})
        return
    table = planned.table
    out = console()
    unit = f"; resampled by {c.cluster} (σ per {c.cluster})" if c.cluster else ""
    out.print(f"plan: {c.candidate} against {c.baseline}, α {c.alpha}, power {target}{unit}; "
              f"pilot: {source}", highlight=False)
    grid = Table("slice", "measure", "n", "σ [interval]", "MDE", "MDE (simulated)",
                 "min effect", "needed queries [σ's interval]", "needed (simulated)")
    for r in table.itertuples(index=False):
        name = S.ALL if r.dimension == S.ALL else f"{r.dimension}={r.slice}"
        sd = f"{number(r.sd)} [{number(r.sd_low)}–{number(r.sd_high)}]"
        grid.add_row(name, r.measure, str(r.n), sd, number(r.mde), number(r.mde_simulated),
                     number(effects[r.measure]),
                     f"{count(r.needed_queries)} [{count(r.needed_queries_low)}–"
                     f"{count(r.needed_queries_high)}]",
                     count(r.needed_queries_simulated) if pd.isna(r.needed_queries_simulated_beyond)
                     else f"> {int(r.needed_queries_simulated_beyond):,}")
    out.print(grid)
    undefined = table[table["undefined"].notna()]
    for reason, rows in undefined.groupby("undefined", sort=False):
        where = sorted({S.ALL if d == S.ALL else f"{d}={v}"
                        for d, v in zip(rows[S.DIMENSION], rows[S.SLICE], strict=True)})
        out.print(f"— in {', '.join(where)}: {reason}", highlight=False)
