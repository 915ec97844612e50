"""The exact deep re-search: systems' routes re-run exactly, far deeper than their windows.

The failure analysis asks whether a missed document is within reach of a system's
representation at all (``releval.diagnosis.layers``, layer ``representation``) and whether an
approximate index lost it (``exact_ann``): both need each route's exact ranking to depth
``deep_k``, searched exactly as ``candidates`` searches (``routes.search``, with the same
interaction history for the recommendation routes).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.history import History
from releval.data.visibility import Visibility
from releval.retrieval import routes
from releval.section import Section

log = logging.getLogger(__name__)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({S.ROUTE_SYSTEM: pd.Series(dtype="str"),
                         S.QUERY_ID: pd.Series(dtype="str"), S.DOC_ID: pd.Series(dtype="str"),
                         S.RANK: pd.Series(dtype=np.int64)})


def exact_ranks(configs: Mapping[str, Section], documents: pd.DataFrame, queries: pd.DataFrame,
                query_ids, deep_k: int, history: History | None = None) -> pd.DataFrame:
    """The exact deep window: for each system of ``configs`` (name -> system model) whose route
    has an exact scorer, that route re-run exactly (``routes.exact``) over the ``query_ids``
    queries to depth ``deep_k``, under the route's visibility rule (``Visibility(documents)``)
    and, for a route that needs it, from ``history`` (the one the candidates stage used).
    Systems without one (external) are skipped; systems whose exact searches are the same
    (e.g. an exact and an HNSW dense system of one model) are searched once.
    Returns ``S.DEEP_COLUMNS``: (route_system, query_id, doc_id, rank)."""
    deep_k = S.integer("deep_k", deep_k, source="failures")
    wanted = {str(q) for q in query_ids}
    asked = queries[queries[S.QUERY_ID].astype(str).isin(wanted)]
    frames, searched = [_empty()], {}
    visibility = None
    for name, config in configs.items():
        scorer = routes.exact(config)
        if scorer is None or asked.empty:
            continue
        key = routes.scorer_key(scorer)
        if key not in searched:
            tick = time.perf_counter()
            visibility = Visibility(documents) if visibility is None else visibility
            searched[key] = routes.search(scorer, documents, asked, deep_k, visibility,
                                          history).run
            log.info("failures: exact %s window of %s to depth %d for %d queries in %.2f s",
                     scorer.route, name, deep_k, len(asked), time.perf_counter() - tick)
        run = searched[key]
        frames.append(pd.DataFrame({
            S.ROUTE_SYSTEM: pd.Series(name, index=run.index, dtype="str"),
            S.QUERY_ID: run[S.QUERY_ID].astype(str), S.DOC_ID: run[S.DOC_ID].astype(str),
            S.RANK: run[S.RANK].astype(np.int64)}))
    return pd.concat(frames, ignore_index=True)[list(S.DEEP_COLUMNS)]
