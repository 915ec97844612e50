"""Automatic labels beside the human ones, kept apart and validated (stage ``autojudge``).

The sample: a seeded random ``validation_share`` of the evaluated queries that people judged
(``releval.judging.automatic.split_human``: by query, so PPI's labelled sample is a uniform
random sample of queries). Each labelled
pair has a ``role``: ``validation`` (judged by people, its query in the sample: the judge is
fitted here, cross-fitted so no pair's label comes from a fit on itself, and it is PPI's
labelled sample), ``heldout`` (judged by people, its query outside the sample: the ground
truth only, never seen by the judge or by PPI) or ``hole`` (a pooled pair nobody judged,
labelled by the judge when ``fill_holes``).

Three label sets (``LABEL_SETS``), never mixed silently: ``human`` (people's grades),
``automatic`` (the judge's grades on every labelled pair) and ``both`` (people's grades,
the holes filled by the judge). Every figure names its set; ``shares`` counts each set's
pairs by source.

Comparisons with people read the held-out queries: the agreement on their pairs both
judged, and each system's measure under human and under automatic labels over them (the
two rankings). PPI reads per-query values: Y (human) on the validation queries, Ŷ
(automatic) on every evaluated query.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.judging.automatic import LABEL_COLUMNS, ROLE, ROLES

VALIDATION, HELDOUT, HOLE = ROLES
LABELS = "labels"
AUTOMATIC_COLUMNS = (*LABEL_COLUMNS, ROLE)  # query_id, doc_id, grade, judge, model,
# confidence, role
PER_QUERY_COLUMNS = (LABELS, S.SYSTEM, *S.PER_QUERY_COLUMNS)
LABEL_SETS = {"human": "people's grades",
              "automatic": "the automatic judge's grades on every labelled pair",
              "both": "people's grades, the pool's unjudged pairs filled by the judge"}
NOT_CONFIGURED = "no automatic judge configured (judgments.automatic)"


def labelled_pairs(human: pd.DataFrame, pool: pd.DataFrame, validation: pd.Index,
                   fill_holes: bool) -> pd.DataFrame:
    """(query_id, doc_id, role) of every pair the judge labels: the human-judged pairs
    (validation or heldout by their query) and, when ``fill_holes``, the pooled pairs of the
    same queries that nobody judged (hole)."""
    judged = human[[S.QUERY_ID, S.DOC_ID]].astype(str).drop_duplicates()
    judged[ROLE] = np.where(judged[S.QUERY_ID].isin(validation), VALIDATION, HELDOUT)
    holes = pool[[S.QUERY_ID, S.DOC_ID]].astype(str).drop_duplicates()
    holes = holes[holes[S.QUERY_ID].isin(judged[S.QUERY_ID]) & fill_holes]
    key = pd.MultiIndex.from_frame(judged[[S.QUERY_ID, S.DOC_ID]])
    holes = holes[~pd.MultiIndex.from_frame(holes).isin(key)].assign(**{ROLE: HOLE})
    return pd.concat([judged, holes], ignore_index=True)


def label_sets(human: pd.DataFrame, automatic: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``LABEL_SETS`` as qrels (query_id, doc_id, grade): people's, the judge's, and
    people's with the holes filled by the judge."""
    qrels = list(S.QRELS_COLUMNS)
    people = human[qrels].astype({S.QUERY_ID: str, S.DOC_ID: str})
    judge = automatic[qrels]
    return {"human": people, "automatic": judge,
            "both": pd.concat([people, judge[automatic[ROLE] == HOLE]], ignore_index=True)}


def shares(automatic: pd.DataFrame, human: pd.DataFrame) -> dict:
    """Each label set's pairs by source (human, automatic) and the automatic share."""
    holes = int((automatic[ROLE] == HOLE).sum())
    counts = {"human": {"human": len(human), "automatic": 0},
              "automatic": {"human": 0, "automatic": len(automatic)},
              "both": {"human": len(human), "automatic": holes}}
    return {name: c | {"automatic_share": c["automatic"] / max(1, c["human"] + c["automatic"]),
                       "describes": LABEL_SETS[name]}
            for name, c in counts.items()}


def values(per_query: pd.DataFrame, labels: str, measure: str,
           queries: pd.Index | None = None) -> pd.DataFrame:
    """(query × system) values of ``measure`` under label set ``labels`` (on ``queries``)."""
    rows = per_query[(per_query[LABELS] == labels) & (per_query[S.MEASURE] == measure)]
    table = rows.pivot(index=S.QUERY_ID, columns=S.SYSTEM, values=S.VALUE)
    return table if queries is None else table.reindex(queries)


def means(per_query: pd.DataFrame, queries: pd.Index, measures: list[str]) -> dict:
    """measure -> system -> {label set: mean over ``queries``, NaN left out; None when
    undefined everywhere}."""
    rows = per_query[per_query[S.QUERY_ID].isin(queries)]
    table = rows.groupby([S.MEASURE, S.SYSTEM, LABELS])[S.VALUE].mean()
    out: dict = {}
    for (measure, system, labels), value in table.items():
        if measure in measures:
            out.setdefault(measure, {}).setdefault(system, {})[labels] = (
                None if pd.isna(value) else round(float(value), 6))
    return out


def per_query_summary(table: pd.DataFrame, column: str = "kappa_quadratic",
                      lowest: int = 5) -> dict:
    """The per-query agreement in brief: the quartiles of ``column`` over the queries where
    it is defined, how many it is undefined for, and the ``lowest`` queries."""
    defined = table[table[column].notna()]
    quartiles = defined[column].quantile([0.25, 0.5, 0.75]).to_numpy() if len(defined) else []
    worst = defined.nsmallest(lowest, column)
    return {"figure": column, "queries": int(len(table)), "undefined": int(len(table)
                                                                           - len(defined)),
            "quartiles": [float(q) for q in quartiles],
            "lowest": records(worst[[S.QUERY_ID, "pairs", "exact", column]])}


def records(frame: pd.DataFrame) -> list[dict]:
    """A frame as JSON-ready records (numpy scalars as Python ones, NaN as None)."""
    return [{k: plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def plain(value):
    """``value`` with numpy scalars, frames and NaN made JSON-ready, recursively."""
    if isinstance(value, pd.DataFrame):
        return records(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def too_few(human: pd.Series, auto: pd.Series, labelled: pd.Index) -> str | None:
    """Why a PPI interval of these per-query values is undefined: fewer than 2 labelled
    queries defined under both label sets, or fewer than 2 other queries defined under
    automatic labels; None when it is defined."""
    inside = auto.index.isin(labelled)
    n = int((human.reindex(labelled).notna() & auto.reindex(labelled).notna()).sum())
    big_n = int(auto[~inside].notna().sum())
    if n < 2 or big_n < 2:
        return (f"undefined: {n} labelled and {big_n} unlabelled queries with a defined "
                "value (2 of each needed)")
    return None


def defined_systems(human: pd.DataFrame, auto: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The systems with a defined value on some query under both label sets, and the others
    (left out of a ranking, undefined is not zero)."""
    both = human.notna().any() & auto.reindex(columns=human.columns).notna().any()
    return list(human.columns[both.to_numpy()]), list(human.columns[~both.to_numpy()])
