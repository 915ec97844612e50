"""What must be held fixed for a controlled comparison, measured per side.

``CONDITIONS``, each a comparable plain value taken from one system's evaluation:

- queries: the evaluated queries, "<n> queries (<digest>)";
- qrels: the revision of the judgments the queries may see (digest of their visible
  (query_id, doc_id, grade) rows);
- budget: the candidate budget (run stats' ``depth``);
- time_window: first … last query time of the evaluated queries, with the corpus digest;
- visibility: whether the route drops from its whole window what the query may not see
  (``releval.retrieval.routes.Route.enforces_visibility``; a fused window: iff both its
  sources do), else how many forbidden pairs it returned.

Digests are the first 12 hex characters of sha256.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.decision.compare import Uncontrolled
from releval.judging.pooling import corpus_digest
from releval.retrieval.routes import FUSED, route_of

CONDITIONS = ("queries", "qrels", "budget", "time_window", "visibility")
ENFORCED = "enforced by the route"


def digest(frame: pd.DataFrame) -> str:
    """12 hex characters of sha256 over the rows' pandas hashes (index ignored)."""
    rows = pd.util.hash_pandas_object(frame.reset_index(drop=True), index=False)
    return hashlib.sha256(rows.to_numpy().tobytes()).hexdigest()[:12]


def qrels_revision(qrels: pd.DataFrame) -> str:
    """The digest of the (query_id, doc_id, grade) rows, sorted by query_id, doc_id."""
    return digest(qrels[[S.QUERY_ID, S.DOC_ID, S.GRADE]].sort_values([S.QUERY_ID, S.DOC_ID]))


def enforced(system: str, stats: dict[str, dict]) -> bool:
    """``system``'s route drops what the query may not see from its whole window; a fused
    window (route ``FUSED``): iff both its ``sources`` (run stats) do."""
    s = stats[system]
    if s["route"] == FUSED:
        return all(enforced(source, stats) for source in s["sources"])
    return route_of(s["route"]).enforces_visibility


def conditions(system: str, per_query: pd.DataFrame, queries: pd.DataFrame, qrels: str,
               corpus: str, stats: dict[str, dict]) -> dict:
    """``CONDITIONS`` for ``system``'s evaluation (``per_query`` rows of that system), with
    ``qrels`` the qrels revision and ``corpus`` the corpus digest; ``stats``: system -> its
    run_stats.json."""
    ids = np.sort(per_query.loc[per_query[S.SYSTEM] == system, S.QUERY_ID].unique())
    times = pd.to_datetime(queries.loc[queries[S.QUERY_ID].isin(ids), S.ISSUED_AT], utc=True)
    window = f"{times.min():%Y-%m-%d %H:%M} … {times.max():%Y-%m-%d %H:%M}" if len(ids) else "—"
    forbidden = stats[system].get("visibility", {}).get("forbidden")
    return {
        "queries": f"{len(ids)} queries ({digest(pd.DataFrame({S.QUERY_ID: ids}))})",
        "qrels": qrels,
        "budget": stats[system]["depth"],
        "time_window": f"{window}; corpus {corpus}",
        "visibility": ENFORCED if enforced(system, stats) else
        "not enforced" + (f" ({forbidden} forbidden pairs returned)" if forbidden else ""),
    }


def held_fixed(systems: tuple[str, ...], per_query: pd.DataFrame, queries: pd.DataFrame,
               documents: pd.DataFrame, qrels: pd.DataFrame,
               stats: dict[str, dict]) -> dict[str, dict]:
    """system -> its ``conditions``; ``qrels``: the visible judgments of the evaluated
    queries."""
    revision, corpus = qrels_revision(qrels), corpus_digest(documents)[:12]
    return {s: conditions(s, per_query, queries, revision, corpus, stats) for s in systems}


def condition_differences(baseline: dict, candidate: dict) -> list[str]:
    """One readable line per condition in ``CONDITIONS`` whose value differs between the two
    sides' condition dicts (a condition missing on a side counts as different)."""
    return [f"{key}: baseline {baseline.get(key)!r} ≠ candidate {candidate.get(key)!r}"
            for key in CONDITIONS if baseline.get(key) != candidate.get(key)]


def controlled(held: dict[str, dict], baseline: str, candidate: str,
               allow_uncontrolled: bool) -> list[str]:
    """The condition differences of ``candidate`` against ``baseline``; ``Uncontrolled``
    (refused, the differences listed) when any differs, unless ``allow_uncontrolled``."""
    diffs = condition_differences(held[baseline], held[candidate])
    if diffs and not allow_uncontrolled:
        raise Uncontrolled(f"{candidate} vs {baseline} is not a controlled comparison, "
                           f"refused: {'; '.join(diffs)}. Set compare.allow_uncontrolled: true "
                           "to compare anyway (outputs labelled uncontrolled)", "compare")
    return diffs
