"""Relations every route with a scorer must hold: renamed ids, deeper windows, hidden documents.

- ``doc_rename``: renaming the doc ids by a bijection that keeps their order (ties fall to
  doc_id ascending, so the order is part of the contract) renames the windows and changes
  nothing else. A recommendation route's log is renamed with its items.
- ``prefix_stability``: the top k of a window searched at depth is the window searched at
  k = ⌈depth / 10⌉ (``RouteCase.shallow``: deep enough to be full on the sample, so the
  deeper search has something to differ by).
- ``invisible_document``: a document of each trial's window at k is made invisible (half
  deleted when published, half moved to a tenant no query has); no window then holds any of
  them, and each window is the earlier one without them, refilled from below (searched deep
  enough to refill).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.selftest.cases import RouteCase, stream
from releval.selftest.relation import Relation, Tally, same_windows

ELSEWHERE = "selftest-elsewhere"  # a tenant no query has


def _rerank(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    """``run`` (rows in rank order within each query) ranked 1..n again and cut at depth."""
    run = run.sort_values([S.QUERY_ID, S.RANK], kind="stable")
    run = run.assign(**{S.RANK: run.groupby(S.QUERY_ID).cumcount().to_numpy() + 1})
    return run[run[S.RANK] <= depth].reset_index(drop=True)


def _tally(case: RouteCase, reached: np.ndarray, want: pd.DataFrame,
           got: pd.DataFrame) -> Tally:
    return same_windows(case.queries[S.QUERY_ID].to_numpy(), reached, want, got)


def renamed_ids(doc_ids: pd.Series) -> pd.Series:
    """doc_id -> ``renamed-<n>``, n the id's position in sorted order, zero-padded: a
    bijection that keeps the order of the ids."""
    unique = np.sort(doc_ids.astype(str).unique())
    width = len(str(len(unique)))
    return pd.Series([f"renamed-{i:0{width}d}" for i in range(len(unique))], index=unique)


def doc_rename(case: RouteCase) -> Tally:
    names = renamed_ids(case.documents[S.DOC_ID])
    documents = case.documents.assign(**{S.DOC_ID: case.documents[S.DOC_ID].map(names)})
    log = case.log
    if log is not None:
        log = log.assign(**{S.ITEM_ID: log[S.ITEM_ID].map(names).fillna(log[S.ITEM_ID])})
    renamed = case.search(documents=documents,
                          retriever=case.retriever(documents=documents, log=log))
    back = pd.Series(names.index, index=names.to_numpy())
    got = renamed.assign(**{S.DOC_ID: renamed[S.DOC_ID].map(back)})
    return _tally(case, case.window_sizes() > 0, case.base, got)


def prefix_stability(case: RouteCase) -> Tally:
    shallow = case.search(depth=case.shallow)
    deep = case.base
    return _tally(case, case.window_sizes(shallow) == case.shallow, shallow,
                  deep[deep[S.RANK] <= case.shallow])


def hidden(run: pd.DataFrame, rng: np.random.Generator) -> pd.Series:
    """One document drawn from each non-empty window of ``run``: doc_id -> how it is hidden
    ("deleted" or "tenant", alternating over the drawn documents)."""
    codes, uniques = pd.factorize(run[S.QUERY_ID])
    size = np.bincount(codes, minlength=len(uniques))
    pick = (rng.random(len(uniques)) * size).astype(int) + 1  # a rank of each window
    docs = pd.unique(run.loc[run[S.RANK].to_numpy() == pick[codes], S.DOC_ID])
    return pd.Series(np.where(np.arange(len(docs)) % 2 == 0, "deleted", "tenant"), index=docs)


def invisible_document(case: RouteCase) -> Tally:
    depth = case.shallow
    before = case.search(depth=depth)
    how = hidden(before, stream(case.seed, "invisible_document"))
    documents = case.documents
    ids = documents[S.DOC_ID].astype(str)
    deleted = ids.map(how).eq("deleted").to_numpy()
    moved = ids.map(how).eq("tenant").to_numpy()
    changed = documents.assign(
        **{S.STATUS: documents[S.STATUS].where(~deleted, "deleted"),
           S.DELETED_AT: pd.to_datetime(documents[S.DELETED_AT], utc=True).where(
               ~deleted, pd.to_datetime(documents[S.PUBLISHED_AT], utc=True)),
           S.TENANT: documents[S.TENANT].where(~moved, ELSEWHERE)})
    deep = case.search(depth=depth + len(how))
    want = _rerank(deep[~deep[S.DOC_ID].isin(how.index)], depth)
    got = case.search(documents=changed, depth=depth)
    touched = before.loc[before[S.DOC_ID].isin(how.index), S.QUERY_ID]
    return _tally(case, case.queries[S.QUERY_ID].isin(touched).to_numpy(), want, got)


RELATIONS = (
    Relation("doc_rename", "route",
             "the trial's window is non-empty; the renaming keeps the order of the doc ids "
             "(ties fall to doc_id ascending)",
             "renaming the doc ids renames the window and changes nothing else", doc_rename),
    Relation("prefix_stability", "route",
             "the trial's window at k = ⌈depth / 10⌉ is full (k documents)",
             "the top k of the window searched at depth is the window searched at k",
             prefix_stability),
    Relation("invisible_document", "route",
             "one of the hidden documents was in the trial's window at k = ⌈depth / 10⌉",
             "a document made invisible (deleted, or another tenant's) never appears, and the "
             "window is the earlier one without it, refilled from below", invisible_document),
)
