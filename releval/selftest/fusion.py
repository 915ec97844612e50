"""Relations of a fused system: a run fused with itself, and one route weighted alone.

Both run the fusion function on the trial queries' windows of the fused system's two sources.

- ``self_fusion``: fusing a window with itself (under every entry of the system's tuning
  grid, for each source) keeps its order: RRF and a weighted sum of one normalised score
  are increasing in the window's own rank and score, and ties fall to doc_id ascending in
  both.
- ``unit_weights``: linear fusion with weights (1, 0) reproduces the first source's order
  over its window (and (0, 1) the second's): the fused window, restricted to that source's
  documents, is a prefix of its window holding at least every document scored above the
  window's lowest (those tied at the lowest share it with the documents it lacks).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.retrieval.fusion import expand_grid
from releval.selftest.cases import FusionCase
from releval.selftest.relation import Relation, Tally, differences, first_difference, per_trial

TAG = "|"  # joins a source's name to a query id


def _sizes(case: FusionCase, run: pd.DataFrame) -> np.ndarray:
    return run.groupby(S.QUERY_ID).size().reindex(case.query_ids, fill_value=0).to_numpy()


def _merge(examples: np.ndarray, found: np.ndarray, label: str) -> None:
    """Keep each trial's first failure: fill ``examples`` where empty from ``found``."""
    new = (examples == "") & (found != "")
    examples[new] = label + ": " + found[new]


def self_fusion(case: FusionCase) -> Tally:
    c, (first, second) = case.config, case.runs
    grid = [entry for method in c.methods
            for entry in expand_grid(method, c.rrf_k, c.weights, c.norms, (first, second))]
    # both sources' windows in one table, each query id tagged with its source
    runs = pd.concat([run.assign(**{S.QUERY_ID: source + TAG + run[S.QUERY_ID]})
                      for source, run in case.runs.items()], ignore_index=True)
    tagged = np.concatenate([source + TAG + case.query_ids.astype(str)
                             for source in case.runs])
    examples = np.full(len(tagged), "", dtype=object)
    for entry in grid:
        fused = case.fuse({first: runs, second: runs}, case.depth, entry)
        _merge(examples, first_difference(differences(runs, fused, scores=False), tagged),
               f"fused with itself by {entry}")
    examples = examples.reshape(len(case.runs), -1)
    examples = np.where(examples[0] != "", examples[0], examples[1])
    reached = np.maximum(*(_sizes(case, run) for run in case.runs.values())) >= 2
    return Tally.of(reached, examples)


def unit_weights(case: FusionCase) -> Tally:
    c = case.config
    if "linear" not in c.methods:
        return Tally.not_applicable(f"fusion.systems.{case.system}.methods has no linear "
                                    "fusion to weight")
    examples = np.full(len(case.query_ids), "", dtype=object)
    routes = list(case.runs)
    for alone in routes:
        run = case.runs[alone]
        weights = {r: float(r == alone) for r in routes}
        lowest = run.groupby(S.QUERY_ID)[S.SCORE].transform("min")
        above = (run[S.SCORE] > lowest).groupby(run[S.QUERY_ID]).sum()
        for norm in c.norms:
            entry = {"method": "linear", "weights": weights, "norm": norm}
            fused = case.fuse(case.runs, case.depth, entry)
            kept = fused.merge(run, on=[S.QUERY_ID, S.DOC_ID], suffixes=("_fused", ""))
            kept = kept.sort_values([S.QUERY_ID, "rank_fused"], kind="stable")
            kept = kept.assign(rank_fused=kept.groupby(S.QUERY_ID).cumcount() + 1)
            order = kept[kept["rank_fused"] != kept[S.RANK]].drop_duplicates(S.QUERY_ID)
            text = pd.Series([f"{q}: {d} is the source's #{int(r)} but the fusion's "
                              f"#{int(f)} of its documents" for q, d, r, f in zip(
                                  order[S.QUERY_ID], order[S.DOC_ID], order[S.RANK],
                                  order["rank_fused"], strict=True)],
                             index=order[S.QUERY_ID].to_numpy(), dtype=object)
            count = kept.groupby(S.QUERY_ID).size().reindex(above.index, fill_value=0)
            short = above.index[(count < above).to_numpy()]
            text = text.combine_first(pd.Series(
                [f"{q}: the fused window drops documents the source scores above its lowest"
                 for q in short], index=short, dtype=object))
            found = per_trial(case.query_ids, text)
            _merge(examples, found, f"weights {weights} ({norm})")
    sizes = [_sizes(case, run) for run in case.runs.values()]
    reached = (sizes[0] >= 1) & (sizes[1] >= 1) & (np.maximum(*sizes) >= 2)
    return Tally.of(reached, examples)


RELATIONS = (
    Relation("self_fusion", "fusion",
             "the trial's window has at least two documents in one of the sources",
             "fusing a window with itself (every grid entry) keeps its order", self_fusion),
    Relation("unit_weights", "fusion",
             "both sources answered the trial and one holds at least two documents",
             "linear weights (1, 0) reproduce the first source's order over its window, "
             "(0, 1) the second's", unit_weights),
)
