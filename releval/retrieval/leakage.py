"""How much a random interaction split flatters a recommender, against the forward protocol.

Forward (what the pipeline evaluates): at the test cut t2 each user-query is answered by the
route fitted on the positives before t2 (``History.fitting``), and its positives are the
items bought in [t2, t2 + h): exactly the test queries and their qrels.

Random (the common shortcut): take every positive interaction before t2 + h, and hold out a
seeded random set of them, per interaction and regardless of time, as many as the forward
protocol's test window holds (so the held-out share is the forward one). The route is fitted
on the rest, with the same held-out users, and each user-query is issued at t2 + h, so no
interaction is hidden by time; its positives are the items held out for the user that are
not also in the user's kept part. Both protocols answer the same users.

Per system: HR@10 and nDCG@10 under each (``releval.metrics.evaluate``, users with no
positive undefined and counted out), inflation = random − forward, ratio = random / forward
(None where forward is 0 or undefined).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.history import History
from releval.data.visibility import Visibility
from releval.errors import InputError
from releval.metrics.engine import evaluate
from releval.retrieval import routes
from releval.section import Section

K = 10
MEASURES = {"HR@10": f"Hit@{K}", "nDCG@10": f"nDCG@{K}"}  # reported name -> engine name
PROTOCOL = (
    "forward: fit on positives before the test cut t2, positives = items bought in "
    "[t2, t2+h); random: of all positives before t2+h, a seeded random set as large as the "
    "forward test window is held out per interaction regardless of time, the route is fitted "
    "on the rest and asked at t2+h (nothing time-masked), positives = held-out items not in "
    "the user's kept part; same users, same held-out users, same catalogue")


def _round(value: float) -> float | None:
    return None if pd.isna(value) or not np.isfinite(value) else round(float(value), 6)


def _measured(config: Section, documents: pd.DataFrame, queries: pd.DataFrame,
              qrels: pd.DataFrame, history: History, visibility: Visibility) -> dict:
    run = routes.search(config, documents, queries, K, visibility, history).run
    summary = evaluate(run, qrels, list(MEASURES.values()),
                       queries=queries[S.QUERY_ID].tolist()).summary.set_index(S.MEASURE)
    return {name: summary.loc[engine, S.VALUE] for name, engine in MEASURES.items()} | {
        "n": int(summary.loc[MEASURES["HR@10"], "n"])}


def random_split(configs: Mapping[str, Section], documents: pd.DataFrame,
                 queries: pd.DataFrame, qrels: pd.DataFrame, history: History,
                 horizon_days: int, seed: int) -> dict:
    """The forward and random protocols (module docstring) for each system of ``configs``
    (name -> system model of a route that needs the history) on the test ``queries`` (one
    cut t2) and their ``qrels``; ``history`` is the forward one. JSON-ready: ``protocol``,
    ``cut``, ``issued_at`` (t2 + h), ``horizon_days``, ``seed``, ``interactions`` (positives
    before t2 + h), ``held_out`` and ``share``, ``queries``, and per system ``route``,
    ``forward`` and ``random`` ({HR@10, nDCG@10, n}), ``inflation`` and ``ratio``."""
    for name, config in configs.items():
        if not routes.route_of(config.route).needs_history:
            raise InputError(f"recommend.random_split: system {name} (route {config.route}) "
                             "is not fitted on the interaction log, so it cannot be refitted "
                             "on a random split", "params")
    cuts = pd.to_datetime(queries[S.ISSUED_AT], utc=True).unique()
    if len(cuts) != 1:
        raise InputError(f"the test queries must share one cut, got {len(cuts)}", "queries")
    cut = pd.Timestamp(cuts[0])
    end = cut + pd.Timedelta(days=horizon_days)
    positives = history.positives
    universe = positives[(positives[S.TIMESTAMP] < end).to_numpy()].reset_index(drop=True)
    n_held = int((universe[S.TIMESTAMP] >= cut).sum())
    held = np.zeros(len(universe), bool)
    held[np.random.default_rng(seed).choice(len(universe), size=n_held, replace=False)] = True
    kept = universe[~held].assign(**{S.LABEL: 1})
    shuffled = History(kept, history.exclude_seen, history.held_out)
    asked = queries.assign(**{S.ISSUED_AT: end})
    query_of = pd.Series(queries[S.QUERY_ID].to_numpy(), index=queries[S.USER_ID].astype(str))
    pairs = universe.loc[held, [S.USER_ID, S.ITEM_ID]].drop_duplicates()
    pairs = pairs.merge(kept[[S.USER_ID, S.ITEM_ID]].drop_duplicates(), how="left",
                        indicator=True)
    pairs = pairs[(pairs["_merge"] == "left_only") & pairs[S.USER_ID].isin(query_of.index)]
    random_qrels = pd.DataFrame({S.QUERY_ID: query_of.loc[pairs[S.USER_ID]].to_numpy(),
                                 S.DOC_ID: pairs[S.ITEM_ID].to_numpy(), S.GRADE: 1})
    visibility = Visibility(documents)
    systems = {}
    for name, config in configs.items():
        forward = _measured(config, documents, queries, qrels, history, visibility)
        shortcut = _measured(config, documents, asked, random_qrels, shuffled, visibility)
        systems[name] = {
            "route": config.route,
            "forward": {m: _round(forward[m]) for m in MEASURES} | {"n": forward["n"]},
            "random": {m: _round(shortcut[m]) for m in MEASURES} | {"n": shortcut["n"]},
            "inflation": {m: _round(shortcut[m] - forward[m]) for m in MEASURES},
            "ratio": {m: _round(shortcut[m] / forward[m]) if forward[m] else None
                      for m in MEASURES}}
    return {"protocol": PROTOCOL, "cut": cut.isoformat(), "issued_at": end.isoformat(),
            "horizon_days": int(horizon_days), "seed": int(seed),
            "interactions": len(universe), "held_out": n_held,
            "share": _round(n_held / len(universe)) if len(universe) else None,
            "queries": len(queries), "systems": systems}
