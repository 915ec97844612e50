"""The automatic labels' figures that decide (docs/automatic-judgments.md): per system and
measure the PPI intervals beside the human-only and automatic-only ones, the compared pair's
PPI difference that ``judgments.automatic.gate: ppi`` reads, and the two rankings' agreement.
Inputs are the autojudge stage's per-query values under each label set
(``releval.judging.validated``)."""

from __future__ import annotations

import pandas as pd

from releval.decision import ppi
from releval.decision.ranking_agreement import ranking_agreement
from releval.judging import validated as V
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measures
from releval.params import Params


def bounds_of(measure: str) -> tuple[float, float] | None:
    """The range of ``measure``'s values (the measure registry's; None: open)."""
    return MEASURES[parse_measures(measure)[0].family].bounds


def ppi_figures(per_query: pd.DataFrame, measures: list[str], validation: pd.Index,
              evaluated: pd.Index, heldout: pd.Index, alpha: float) -> dict:
    """measure -> system -> PPI (n validation queries' human values, every evaluated query's
    automatic value) beside the human-only and automatic-only intervals and the held-out
    queries' human mean (the ground truth the interval should cover); ``undefined`` with the
    reason where too few queries have a value (``validated.too_few``)."""
    out: dict = {}
    for measure in measures:
        human = V.values(per_query, "human", measure, evaluated)
        auto = V.values(per_query, "automatic", measure, evaluated)
        for system in human.columns:
            why = V.too_few(human[system], auto[system], validation)
            figures = ({"undefined": why} if why else ppi.clipped(
                ppi.intervals(human[system], auto[system], validation, alpha=alpha),
                bounds_of(measure)))
            truth = human[system].reindex(heldout)
            figures["heldout_human"] = (None if truth.isna().all()
                                        else round(float(truth.mean()), 6))
            out.setdefault(measure, {})[system] = figures
    return out


def difference_figures(p: Params, per_query: pd.DataFrame, measures: list[str],
                     validation: pd.Index, evaluated: pd.Index) -> dict:
    """measure -> the PPI intervals of compare.candidate − compare.baseline (``ppi.difference``),
    the figures ``gate: ppi`` reads (``undefined``, with the reason, where too few queries
    have a defined difference: ``validated.too_few``)."""
    base, cand, out = p.compare.baseline, p.compare.candidate, {}
    for measure in measures:
        human = V.values(per_query, "human", measure, evaluated)
        auto = V.values(per_query, "automatic", measure, evaluated)
        if {base, cand} <= set(human.columns):
            y, yhat = human[cand] - human[base], auto[cand] - auto[base]
            why = V.too_few(y, yhat, validation)
            bounds = bounds_of(measure)
            out[measure] = ({"undefined": why} if why else ppi.clipped(ppi.difference(
                human[base], human[cand], auto[base], auto[cand], validation,
                alpha=p.compare.alpha), bounds and (bounds[0] - bounds[1],
                                                     bounds[1] - bounds[0]))
                            ) | {"baseline": base, "candidate": cand}
    return out


def ranking_figures(per_query: pd.DataFrame, measure: str, queries: pd.Index, p: Params) -> dict:
    """``ranking_agreement`` of ``measure`` on ``queries`` (human vs automatic), its
    rankings and flips as records (the pairs' table left out: the flips are its news); a
    system undefined under either label set is left out and named, and fewer than 2 systems
    leave the ranking undefined, with the reason."""
    better = MEASURES[parse_measures(measure)[0].family].better
    human = V.values(per_query, "human", measure, queries)
    auto = V.values(per_query, "automatic", measure, queries).reindex(columns=human.columns)
    kept, left_out = V.defined_systems(human, auto)
    about = {"higher_is_better": better == "higher", "left_out": left_out}
    if len(kept) < 2:
        return about | {"systems": len(kept), "undefined": f"{len(kept)} system(s) with a "
                        "defined value under both label sets: no ranking to compare"}
    result = ranking_agreement(human[kept], auto[kept], alpha=p.compare.alpha,
                               seed=p.base.seed, higher_is_better=better == "higher")
    result.pop("pairs")
    return result | about
