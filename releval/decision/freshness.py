"""Freshness of a system's windows: how soon a new document appears, how soon a deleted one
stops appearing.

A document *appears* at a query when the query's window (the system's run, every rank) holds
it; time is the queries' ``issued_at``. The queries' time span is [first issued_at, last
issued_at] over the queries table.

- time to first appearance: for each document published inside the span, the days from its
  ``published_at`` to the first query issued at or after it whose window holds it; a document
  no such window holds has not appeared (NaN), and is counted apart.
- deletion propagation: for each document deleted at or before the last query
  (``deleted_at`` set; one deleted later cannot be observed), the days from its
  ``deleted_at`` to the last query issued at or after it whose window still holds it; 0 when
  no window holds it after its deletion.

Data without times has no freshness: a document without a publication date, or queries
without issue times (the readers' ``EPOCH`` placeholder), is never eligible, so its counts are
0 and its figures undefined; the report then shows no freshness table.

Undefined is NaN: a median or percentile over no document.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import EPOCH

DAY = pd.Timedelta(days=1)


def untimed(queries: pd.DataFrame) -> pd.DataFrame:
    """``queries`` whose ``issued_at`` is a stand-in (the data has no query times), marked
    as such (``EPOCH``): never eligible."""
    return queries.assign(**{S.ISSUED_AT: EPOCH})


def _times(values: pd.Series) -> pd.Series:
    return pd.to_datetime(values, utc=True)


def _seen(run: pd.DataFrame, queries: pd.DataFrame) -> pd.DataFrame:
    """(doc_id, issued_at) of every window entry of ``run`` whose query is in ``queries``."""
    issued = _times(queries[S.ISSUED_AT]).set_axis(queries[S.QUERY_ID].astype(str))
    at = issued.reindex(run[S.QUERY_ID].astype(str)).array
    seen = pd.DataFrame({S.DOC_ID: run[S.DOC_ID].astype(str).to_numpy(), S.ISSUED_AT: at})
    return seen[seen[S.ISSUED_AT].notna()]


def _at(documents: pd.DataFrame, column: str, keep: np.ndarray) -> pd.Series:
    """doc_id -> ``column`` (UTC) of the documents where ``keep`` holds."""
    return (_times(documents[column])[keep]
            .set_axis(documents[S.DOC_ID].astype(str).to_numpy()[keep]).rename(column))


def _delays(seen: pd.DataFrame, since: pd.Series, how: str) -> pd.Series:
    """doc_id (``since``'s) -> days from ``since`` to the ``how`` ("min" | "max") issued_at
    of its appearances at or after ``since``; NaN where none."""
    joined = seen.join(since, on=S.DOC_ID, how="inner")
    joined = joined[joined[S.ISSUED_AT] >= joined[since.name]]
    when = _times(joined.groupby(S.DOC_ID)[S.ISSUED_AT].agg(how).reindex(since.index))
    return (when - since) / DAY


def first_appearance(run: pd.DataFrame, documents: pd.DataFrame,
                     queries: pd.DataFrame) -> pd.Series:
    """doc_id -> days from published_at to its first appearance, for the documents published
    inside the queries' time span (module docstring); NaN where it never appeared."""
    issued = _times(queries[S.ISSUED_AT])
    published = _times(documents[S.PUBLISHED_AT])
    inside = ((published >= issued.min()) & (published <= issued.max())
              & (published != EPOCH) & bool((issued != EPOCH).any()))
    return _delays(_seen(run, queries), _at(documents, S.PUBLISHED_AT, inside.to_numpy()),
                   "min")


def last_appearance(run: pd.DataFrame, documents: pd.DataFrame,
                    queries: pd.DataFrame) -> pd.Series:
    """doc_id -> days from deleted_at to the last query whose window still holds it, for the
    documents deleted at or before the last query (module docstring); NaN where no window
    holds it after its deletion."""
    deleted = _times(documents[S.DELETED_AT])
    observable = (deleted <= _times(queries[S.ISSUED_AT]).max()).to_numpy()  # NaT: False
    return _delays(_seen(run, queries), _at(documents, S.DELETED_AT, observable), "max")


def _quantile(days: pd.Series, q: float) -> float:
    """The q-quantile (linear, as numpy's percentile) of the defined values; NaN when none."""
    days = days.dropna()
    return float(days.quantile(q)) if len(days) else float("nan")


def freshness(run: pd.DataFrame, documents: pd.DataFrame, queries: pd.DataFrame) -> dict:
    """``run``'s freshness (module docstring): ``freshness_eligible`` (documents published
    inside the queries' span), ``freshness_appeared`` (of those, the ones some window holds
    afterwards), ``freshness_median_days`` and ``freshness_p95_days`` (over the appeared);
    ``deleted_eligible`` (documents deleted at or before the last query),
    ``deleted_still_appearing`` (of those, the ones a later window still holds),
    ``deletion_propagation_p95_days`` and ``deletion_propagation_max_days`` (over the
    eligible, 0 for a document that stopped appearing at once). NaN where undefined."""
    first = first_appearance(run, documents, queries)
    late = last_appearance(run, documents, queries)
    gone = late.fillna(0.0)
    return {
        "freshness_eligible": int(len(first)),
        "freshness_appeared": int(first.notna().sum()),
        "freshness_median_days": _quantile(first, 0.5),
        "freshness_p95_days": _quantile(first, 0.95),
        "deleted_eligible": int(len(gone)),
        "deleted_still_appearing": int(late.notna().sum()),
        "deletion_propagation_p95_days": _quantile(gone, 0.95),
        "deletion_propagation_max_days": float(gone.max()) if len(gone) else float("nan"),
    }
