"""No-answer queries: does a system refuse when there is nothing to find?

A query tagged ``tag`` (default ``no_answer``) has no relevant document; relevance means
leave it out, and this module reports it alone. A system's window for a query *answers* when
it holds at least one candidate whose score reaches the system's threshold (any candidate
when the system has no threshold). Over the chosen queries, per system:

- correct_refusal_rate = correct_refusals / no_answer_queries, where correct_refusals counts
  the no-answer queries whose window does not answer; None (undefined, never 0) when there
  are no no-answer queries;
- no_result_rate = no_result / answerable_queries, where answerable_queries are the other
  queries and no_result counts those whose window does not answer; None when there are none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.membership import member


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def has_tag(queries: pd.DataFrame, tag: str) -> np.ndarray:
    """Per row of ``queries``: does its tags list hold ``tag`` (no tags: False)."""
    tags = queries[S.TAGS].explode()
    return (tags == tag).groupby(level=0).any().reindex(queries.index, fill_value=False
                                                           ).to_numpy(dtype=bool)


def evaluated_queries(split: pd.DataFrame, queries: pd.DataFrame, splits: Iterable[str],
                      tag: str) -> tuple[pd.Series, pd.Series]:
    """The query ids of ``splits`` (``evaluate.splits``) whose relevance is measured, and those
    left out for carrying the no-answer ``tag``: a no-answer query has nothing to find."""
    in_split = split.loc[split[S.SPLIT].isin(list(splits)), S.QUERY_ID]
    no_answer = in_split.isin(queries.loc[has_tag(queries, tag), S.QUERY_ID])
    return in_split[~no_answer], in_split[no_answer]


def refusals(runs: dict[str, pd.DataFrame], queries: pd.DataFrame, query_ids: Iterable[str], *,
             tag: str = "no_answer",
             thresholds: Mapping[str, float] | None = None) -> dict[str, dict]:
    """Refusal figures per system of ``runs`` (name -> run with query_id and score) over the
    queries of ``queries`` whose query_id is in ``query_ids`` (module docstring for the
    formulas). ``thresholds``: system -> the score a candidate must reach to answer (none:
    any candidate answers).

    Returns ``{system: {no_answer_queries, correct_refusals, correct_refusal_rate,
    answerable_queries, no_result, no_result_rate, threshold}}`` with rates None where
    undefined and threshold None where the system has none.
    """
    thresholds = dict(thresholds or {})
    chosen = queries[queries[S.QUERY_ID].isin(pd.Index(list(query_ids)))]
    no_answer = has_tag(chosen, tag)
    out = {}
    for name, run in runs.items():
        threshold = thresholds.get(name)
        answering = run if threshold is None else run[run[S.SCORE] >= threshold]
        answers = member(chosen[S.QUERY_ID], answering[S.QUERY_ID])
        n_none, n_answerable = int(no_answer.sum()), int((~no_answer).sum())
        refused = int((no_answer & ~answers).sum())
        empty = int((~no_answer & ~answers).sum())
        out[name] = {
            "no_answer_queries": n_none, "correct_refusals": refused,
            "correct_refusal_rate": _rate(refused, n_none),
            "answerable_queries": n_answerable, "no_result": empty,
            "no_result_rate": _rate(empty, n_answerable),
            "threshold": None if threshold is None else float(threshold),
        }
    return out
