"""``plan``: how many queries a paired comparison needs to detect the smallest effect that
matters, from a pilot's per-query values, as ``releval plan`` and the report compute it
(``releval.decision.planning.plan_table``): the paired t test's noncentral-t solution with
the range σ's interval gives, and a simulation resampling the pilot's differences (the "all"
slice), beside the pilot's n and its minimum detectable effect."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from releval.api.display import html_table, json_text, plain
from releval.api.evaluation import Results
from releval.data import contracts as S
from releval.decision.planning import plan_table
from releval.errors import InputError
from releval.metrics.engine import resolve


@dataclass(frozen=True, eq=False)
class Plan:
    """The plan per (dimension, slice, measure) (``table``: n, the units' σ with its
    interval, MDE analytic and simulated, the needed queries with σ's range and simulated)
    for ``candidate`` against ``baseline`` at ``alpha`` and ``power``; ``effects``: the
    effect planned for, per measure."""

    table: pd.DataFrame
    baseline: str
    candidate: str
    alpha: float
    power: float
    effects: dict[str, float]

    def __repr__(self) -> str:
        return (f"Plan({self.candidate} against {self.baseline}, α {self.alpha:g}, power "
                f"{self.power:g}, {len(self.table)} rows)")

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the pair, α, the power and one plan per row (needed queries as
        integers, None where not computed)."""
        rows = self.table.astype(object).where(self.table.notna(), None).to_dict(
            orient="records")
        return {"baseline": self.baseline, "candidate": self.candidate, "alpha": self.alpha,
                "power": self.power,
                "plans": [{k: int(v) if k.startswith("needed") and v is not None else v
                           for k, v in row.items()} for row in rows]}

    def to_json(self) -> str:
        return json_text(self.to_dict())

    def _repr_html_(self) -> str:
        shown = self.table[[S.DIMENSION, S.SLICE, S.MEASURE, "n", "sd", "mde",
                            "mde_simulated", "needed_queries", "needed_queries_simulated"]]
        return html_table(shown, f"plan: {self.candidate} against {self.baseline}, α "
                                 f"{self.alpha:g}, power {self.power:g}",
                          {c: lambda v: "—" if pd.isna(v) else f"{int(v):,}"
                           for c in ("needed_queries", "needed_queries_simulated")})


def plan(pilot: Results | pd.DataFrame, baseline: str, candidate: str,
         measures: str | Iterable[str] | None = None, *,
         min_effect: float | Mapping[str, float], alpha: float = 0.05, power: float = 0.8,
         labels: pd.DataFrame | None = None, clusters: pd.Series | None = None,
         rel: int = 1, seed: int = 0) -> Plan:
    """The plan for ``candidate`` against ``baseline`` from ``pilot`` (``evaluate``'s
    ``Results``, or a per-query table: system, query_id, measure, value) for each of
    ``measures`` (default: every per-query measure both systems have) to detect
    ``min_effect`` (one, or per measure; it must be > 0) at ``alpha`` with ``power``.
    ``labels`` (query_id, dimension, slice): a plan per slice too; ``clusters`` (query_id →
    user): units are users. ``rel``: the least relevant grade the measures' names mean
    (``evaluate``'s)."""
    per_query = pilot.per_query if isinstance(pilot, Results) else pilot
    S.require_columns(per_query, (S.SYSTEM, *S.PER_QUERY_COLUMNS), "pilot")
    for name in (baseline, candidate):
        if not (per_query[S.SYSTEM] == name).any():
            raise InputError(f"no system {name!r} in the pilot; it has "
                             f"{sorted(map(str, per_query[S.SYSTEM].unique()))}", "pilot")
    if measures is None:
        both = [set(per_query.loc[per_query[S.SYSTEM] == n, S.MEASURE]) for n in
                (baseline, candidate)]
        names = [m for m in dict.fromkeys(per_query[S.MEASURE]) if m in both[0] & both[1]]
    else:
        names = [m.name for m in resolve([measures] if isinstance(measures, str) else measures,
                                            rel)]
    effects = ({m.name: float(v) for k, v in min_effect.items() for m in resolve([k], rel)}
               if isinstance(min_effect, Mapping) else dict.fromkeys(names, float(min_effect)))
    absent = [m for m in names if m not in effects]
    zero = [m for m in names if m in effects and not effects[m] > 0]
    if absent or zero:
        raise InputError(f"min_effect {'is not given' if absent else 'is zero'} for "
                         f"{', '.join(absent or zero)}: no finite number of queries detects a "
                         "zero effect; give the smallest difference that matters", "plan")
    if labels is None:
        labels = pd.DataFrame(columns=[S.QUERY_ID, S.DIMENSION, S.SLICE])
    table = plan_table(per_query, labels, baseline, candidate, names, effects, alpha=alpha,
                       target=power, clusters=clusters, simulate_needed=[S.ALL], seed=seed)
    return Plan(table, baseline, candidate, alpha, power, plain(effects))
