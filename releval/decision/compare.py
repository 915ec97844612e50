"""Candidate against baseline: a paired comparison when both answer the same queries;
otherwise refused with the differences, or (when allowed) the unpaired rate/mix view.

What else must be held fixed for a controlled comparison (qrels revision, budget, time
window, visibility) is measured in ``releval.decision.conditions``.

Inputs are per-query metric tables (query_id, measure, value); optional maps from query_id
to a slice label, a traffic weight and a cluster (user) id. The two refusals are domain
errors that carry what differs (``MeasuresDiffer``, ``QueriesDiffer``); the ``releval
compare`` command reads its files (``releval.cli.inputs``) and words these refusals with its
own flags.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.aggregation import aggregates, decompose
from releval.decision.missing import chosen
from releval.decision.stats import compare_table, holm, holm_verdicts
from releval.errors import InputError
from releval.metrics.engine import resolve

SIDES = ("baseline", "candidate")


class Uncontrolled(InputError):
    """The two sides do not answer the same queries: no paired comparison is possible."""


class QueriesDiffer(Uncontrolled):
    """``compare`` refused: the two tables' query sets differ (``differences``) and an
    uncontrolled comparison was not allowed."""

    def __init__(self, differences: dict, source: str = "compare"):
        self.differences = differences
        d = differences
        super().__init__("not a controlled comparison, refused: "
                         f"{d['queries_only_in_baseline']} queries only in the baseline "
                         f"(e.g. {d['examples_baseline']}), {d['queries_only_in_candidate']} "
                         f"only in the candidate (e.g. {d['examples_candidate']})", source)

    def __reduce__(self):
        return type(self), (self.differences, self.source)


class MeasuresDiffer(InputError):
    """``compare`` refused: no measures were named and some measures (``one_side``) are in
    only one of the two tables; ``common`` are those both have."""

    def __init__(self, one_side: list[str], common: list[str], source: str = "compare"):
        self.one_side, self.common = list(one_side), list(common)
        super().__init__(f"measure(s) {', '.join(one_side)} in only one of the two tables "
                         f"(both have: {', '.join(common) or 'none'})", source)

    def __reduce__(self):
        return type(self), (self.one_side, self.common, self.source)


def canonical(measures: list[str], min_effect: float | dict[str, float],
              rel: int) -> tuple[list[str], float | dict[str, float]]:
    """``compare.measures`` and ``compare.min_effect`` under their canonical names, as the
    evaluate stage names them with ``evaluate.rel``."""
    names = [m.name for m in resolve(measures, rel)]
    if isinstance(min_effect, dict):
        min_effect = {m.name: v for name, v in min_effect.items() for m in resolve([name], rel)}
    return names, min_effect


def differences(baseline: pd.DataFrame, candidate: pd.DataFrame) -> dict:
    """What differs between the two sides' query sets (counts and a few examples)."""
    a, b = set(baseline[S.QUERY_ID]), set(candidate[S.QUERY_ID])
    only_a, only_b = sorted(a - b), sorted(b - a)
    return {"queries_only_in_baseline": len(only_a), "queries_only_in_candidate": len(only_b),
            "examples_baseline": only_a[:5], "examples_candidate": only_b[:5]}


def _paired(frame: pd.DataFrame, measures: list[str], slices: pd.Series | None,
            clusters: pd.Series | None, **options) -> pd.DataFrame:
    groups = [(S.ALL, frame)]
    if slices is not None:
        labelled = frame.assign(_slice=frame[S.QUERY_ID].map(slices))
        groups += [(str(k), g.drop(columns="_slice")) for k, g in labelled.groupby("_slice")]
    tables = [compare_table(g, *SIDES, measures, clusters=clusters, **options).assign(slice=k)
              for k, g in groups]
    table = pd.concat(tables, ignore_index=True)
    table["p_holm"] = holm(table["p_value"].to_numpy())  # over measures × slices
    table["verdict"] = holm_verdicts(table["verdict"], table["p_holm"], options["alpha"])
    return table


def _unpaired(baseline: pd.DataFrame, candidate: pd.DataFrame, measures: list[str],
              slices: pd.Series | None, weights: pd.Series | None) -> list[dict]:
    out = []
    for measure in measures:
        sides = []
        for side in (baseline, candidate):
            rows = side[side[S.MEASURE] == measure]
            sides.append(pd.DataFrame({
                "slice": rows[S.QUERY_ID].map(slices).fillna(S.ALL) if slices is not None
                else S.ALL,
                S.VALUE: rows[S.VALUE].to_numpy(dtype=float),
                S.WEIGHT: rows[S.QUERY_ID].map(weights).fillna(1.0).to_numpy(dtype=float)
                if weights is not None else 1.0}))
        parts = decompose(*sides).to_dict()
        out.append({S.MEASURE: measure, "aggregates_before": aggregates(sides[0]),
                    "aggregates_after": aggregates(sides[1]), **parts})
    return out


def compare(baseline: pd.DataFrame, candidate: pd.DataFrame, measures: list[str] | None = None,
            *, slices: pd.Series | None = None, weights: pd.Series | None = None,
            clusters: pd.Series | None = None, allow_uncontrolled: bool = False,
            min_effect: float | dict[str, float] = 0.0, resamples: int = 10_000,
            alpha: float = 0.05, seed: int = 0, common_measures: bool = False,
            query_set: str = "judged", judged: set[str] | None = None,
            answers: dict[str, set[str] | None] | None = None, **tests) -> dict:
    """The comparison as a JSON-ready dict: ``controlled`` and either ``paired`` rows (one
    per measure × slice, Holm-corrected) or ``uncontrolled`` rows (rate/mix per measure),
    and ``query_set`` (``releval.decision.missing.chosen``): the judged queries (``judged``;
    default: every query of the two tables) the means run over under ``query_set``, from
    what each side's run answers (``answers``: name → query ids, baseline first; None: not
    known). ``tests``: the significance test's options (``releval.decision.stats.paired``).

    Refused with ``MeasuresDiffer`` when no ``measures`` are named, the tables' measures
    differ and not ``common_measures``; with ``QueriesDiffer`` when the query sets differ and
    not ``allow_uncontrolled``; with ``MissingQueries`` under ``query_set`` refuse when a run
    misses a judged query."""
    common = sorted(set(baseline[S.MEASURE]) & set(candidate[S.MEASURE]))
    one_side = sorted(set(baseline[S.MEASURE]) ^ set(candidate[S.MEASURE]))
    if not measures and one_side and not common_measures:
        raise MeasuresDiffer(one_side, common)
    measures = [m.name for m in resolve(measures)] if measures else common
    if not measures:
        raise InputError("the two tables share no measure", "compare")
    missing = [m for m in measures if m not in common]
    if missing:
        raise InputError(f"measure(s) {', '.join(missing)} not in both tables "
                         f"(both have: {', '.join(common)})", "compare")
    if judged is None:
        judged = set(map(str, baseline[S.QUERY_ID])) | set(map(str, candidate[S.QUERY_ID]))
    kept, block = chosen(query_set, judged, answers or dict.fromkeys(SIDES))
    dropped = judged - kept
    if dropped:
        baseline, candidate = (side[~side[S.QUERY_ID].astype(str).isin(dropped)]
                               for side in (baseline, candidate))
    diff = differences(baseline, candidate)
    controlled = not (diff["queries_only_in_baseline"] or diff["queries_only_in_candidate"])
    if not controlled and not allow_uncontrolled:
        raise QueriesDiffer(diff)
    if not controlled:
        return {"controlled": False, "differences": diff, "query_set": block,
                "note": "different query samples: not a controlled comparison",
                "uncontrolled": _unpaired(baseline, candidate, measures, slices, weights)}
    frame = pd.concat([baseline.assign(**{S.SYSTEM: SIDES[0]}),
                       candidate.assign(**{S.SYSTEM: SIDES[1]})], ignore_index=True)
    table = _paired(frame, measures, slices, clusters, min_effect=min_effect,
                    resamples=resamples, alpha=alpha, seed=seed, **tests)
    return {"controlled": True, "differences": diff, "query_set": block,
            "unit": table["unit"].iloc[0],
            "paired": table.replace({np.nan: None}).to_dict(orient="records")}
