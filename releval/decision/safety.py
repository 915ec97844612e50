"""Safety violations: returned documents a query must never get, counted over whole windows.

The rule is zero tolerance. A returned (query_id, doc_id) pair is a violation when

- the query may not see the document by the access and time rule
  (``releval.data.visibility.forbidden_reasons``: unknown_document, other_tenant, acl, status,
  deleted, not_yet_published; one reason per pair, the first that applies), and/or
- the pair is listed in the must_not_return table (reason ``must_not_return``).

A pair breaking both gives two rows. Every rank of every window is checked, not only the top
k: a candidate window feeds re-rankers, answer generation and caches downstream, so a leak at
rank 57 is a leak. ``in_top_k`` only says where it sits; violations below the top k are
counted apart (``below_top_k``) because a high nDCG@k never offsets them. A fused system
answers for its own window and for every route it is built from.

``violations(runs, ...)`` gives one row per (system, returned pair, reason broken);
``in_splits`` adds each row's split; ``summary(violations, systems_routes)`` the counts per
system.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import REASONS, forbidden_reasons
from releval.errors import InputError

MUST_NOT_RETURN = "must_not_return"
IN_TOP_K = "in_top_k"
UNASSIGNED = "unassigned"  # the split of a query the split table lacks
VIOLATION_COLUMNS = (S.SYSTEM, S.ROUTE, S.QUERY_ID, S.DOC_ID, S.RANK, S.REASON, IN_TOP_K)
# Every reason a violation row can carry, in reporting order.
SAFETY_REASONS = (MUST_NOT_RETURN, "other_tenant", "acl", "status", "deleted",
                  "not_yet_published", "unknown_document")
if set(SAFETY_REASONS) != {MUST_NOT_RETURN, *REASONS}:  # one registry: visibility.REASONS
    raise RuntimeError("safety.SAFETY_REASONS is out of step with visibility.REASONS")


def _empty() -> pd.DataFrame:
    return pd.DataFrame({
        S.SYSTEM: pd.Series(dtype="str"), S.ROUTE: pd.Series(dtype="str"),
        S.QUERY_ID: pd.Series(dtype="str"), S.DOC_ID: pd.Series(dtype="str"),
        S.RANK: pd.Series(dtype=np.int64), S.REASON: pd.Series(dtype="str"),
        IN_TOP_K: pd.Series(dtype=bool)})


def _windows(runs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every row of every run: system (the dict key), route (the run's, else the key),
    query_id, doc_id, rank."""
    frames = []
    for name, run in runs.items():
        S.require_columns(run, (S.QUERY_ID, S.DOC_ID, S.RANK), name)
        route = run[S.ROUTE] if S.ROUTE in run.columns else name
        frames.append(pd.DataFrame({
            S.SYSTEM: pd.Series(name, index=run.index, dtype="str"),
            S.ROUTE: pd.Series(route, index=run.index).astype("str"),
            S.QUERY_ID: run[S.QUERY_ID].astype("str"), S.DOC_ID: run[S.DOC_ID].astype("str"),
            S.RANK: run[S.RANK].astype(np.int64)}))
    return pd.concat(frames, ignore_index=True) if frames else _empty().iloc[:, :5]


def violations(runs: dict[str, pd.DataFrame], queries: pd.DataFrame, documents: pd.DataFrame,
               must_not_return: pd.DataFrame, *, top_k: int = 10) -> pd.DataFrame:
    """Every safety violation in the whole window of each run (module docstring: zero
    tolerance, every rank checked).

    ``runs``: system name -> run (query_id, doc_id, rank; route if present). ``queries`` and
    ``documents`` per the contracts (every run query_id must be in ``queries``);
    ``must_not_return``: (query_id, doc_id, reason). Returns one row per (system, returned
    pair, reason broken) with columns ``VIOLATION_COLUMNS``: system, route, query_id, doc_id,
    rank, reason (a ``SAFETY_REASONS`` entry), in_top_k (rank ≤ top_k); ordered by system
    (as in ``runs``), query_id, rank, then reason order. Vectorised: one classification of
    the distinct returned pairs, then merges.
    """
    if isinstance(top_k, bool) or not isinstance(top_k, int | np.integer) or top_k < 1:
        raise InputError(f"top_k must be an integer ≥ 1, got {top_k!r}", "safety")
    rows = _windows(runs)
    if rows.empty:
        return _empty()
    key = [S.QUERY_ID, S.DOC_ID]
    pairs = rows[key].drop_duplicates().reset_index(drop=True)
    reason = forbidden_reasons(pairs, queries, documents)
    hidden = pairs.assign(**{S.REASON: reason})[reason != ""]
    banned = pd.DataFrame({S.QUERY_ID: must_not_return[S.QUERY_ID].astype("str"),
                           S.DOC_ID: must_not_return[S.DOC_ID].astype("str")}
                          ).drop_duplicates().assign(**{S.REASON: MUST_NOT_RETURN})
    flagged = pd.concat([hidden, banned], ignore_index=True).astype({S.REASON: "str"})
    found = rows.merge(flagged, on=key, how="inner")
    found[IN_TOP_K] = found[S.RANK] <= top_k
    found = found.assign(_system=pd.Index(list(runs)).get_indexer(found[S.SYSTEM]),
                         _reason=pd.Index(SAFETY_REASONS).get_indexer(found[S.REASON]))
    found = found.sort_values(["_system", S.QUERY_ID, S.RANK, "_reason"], kind="stable")
    return found.reset_index(drop=True)[list(VIOLATION_COLUMNS)]


def in_splits(violations: pd.DataFrame, split: pd.DataFrame) -> pd.DataFrame:
    """``violations`` with a ``split`` column: each row's query's split from ``split``
    (query_id, split), ``UNASSIGNED`` where the table lacks the query."""
    where = pd.Series(split[S.SPLIT].astype("str").to_numpy(),
                      index=split[S.QUERY_ID].astype("str").to_numpy())
    return violations.assign(**{
        S.SPLIT: violations[S.QUERY_ID].map(where).fillna(UNASSIGNED).astype("str")})


def summary(violations: pd.DataFrame, systems_routes: dict[str, list[str]]) -> dict:
    """Per system of ``systems_routes`` (name -> the systems whose windows it answers for:
    itself and every route it is built from, e.g. ``{"hybrid": ["hybrid", "bm25", "dense"]}``;
    the name itself always counts), over the ``violations`` rows of those windows:

    - ``violations``: the number of rows (zero tolerance: any row is a failure);
    - ``by_reason``: rows per reason, every ``SAFETY_REASONS`` entry present (zeros included);
    - ``queries_affected``: distinct query_ids among the rows;
    - ``below_top_k``: rows ranked below the top k (not ``in_top_k``), which a high nDCG
      never offsets;
    - ``own``: rows in the system's own window only.
    """
    out = {}
    for name, routes in systems_routes.items():
        covered = list(dict.fromkeys([name, *routes]))
        rows = violations[violations[S.SYSTEM].isin(covered)]
        counts = rows[S.REASON].value_counts()
        out[name] = {
            "violations": int(len(rows)),
            "by_reason": {r: int(counts.get(r, 0)) for r in SAFETY_REASONS},
            "queries_affected": int(rows[S.QUERY_ID].nunique()),
            "below_top_k": int((~rows[IN_TOP_K].astype(bool)).sum()),
            "own": int((rows[S.SYSTEM] == name).sum()),
        }
    return out
