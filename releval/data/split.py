"""Split the query log into train / validation / test, and report what leaks across it.

Temporal methods ("dates", "quantiles") place two UTC cut points c1 ≤ c2 and apply one rule:

    train: issued_at < c1    validation: c1 ≤ issued_at < c2    test: issued_at ≥ c2

A query issued exactly at a cut goes to the later split, so queries with equal issue times
always share a split, every test query is issued strictly after every validation query, which
is issued strictly after every train query, and no query of an earlier split is issued at or
after the cut that ends it. The "given" method takes a dataset's own split and is not temporal.
Every query lands in exactly one split.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError

TRAIN, VALIDATION, TEST = S.SPLITS
Cuts = tuple[pd.Timestamp, pd.Timestamp]
EXAMPLES = 10  # ids named in an error message or listed as examples in a report
RULE = "train: issued_at < c1; validation: c1 <= issued_at < c2; test: issued_at >= c2"
GIVEN_NOTE = "split given by the dataset, not by time"
NORMALISED = "normalised_text"


@dataclass(frozen=True, eq=False)
class Split:
    """A split table (query_id, split), its cut points (UTC; None when given) and method."""

    table: pd.DataFrame
    cuts: Cuts | None
    method: str


def _first(ids: pd.Series) -> str:
    return ", ".join(map(str, ids.iloc[:EXAMPLES]))



def _issue_times(queries: pd.DataFrame) -> pd.Series:
    """issued_at as UTC timestamps; a missing or unparsable time is an InputError."""
    times = pd.to_datetime(queries[S.ISSUED_AT], utc=True, errors="coerce")
    if times.isna().any():
        raise InputError(f"issued_at must be a timestamp; missing for query "
                         f"{_first(queries.loc[times.isna(), S.QUERY_ID])}", "queries")
    return times


def _by_cuts(times: pd.Series, cuts: Cuts) -> pd.Series:
    """The module rule: 0 = train, 1 = validation, 2 = test, mapped to split names."""
    index = (times >= cuts[0]).astype(int) + (times >= cuts[1]).astype(int)
    return pd.Series(np.asarray(S.SPLITS)[index.to_numpy()], index=times.index)


def _dates(queries: pd.DataFrame, *, cuts: tuple[str, str] | None, **_) -> tuple[pd.Series, Cuts]:
    """Cut at two ISO dates (naive dates are UTC); they must be strictly increasing."""
    if cuts is None or len(cuts) != 2:
        raise InputError("method 'dates' needs cuts=(validation_from, test_from)", "split")
    try:
        c1, c2 = (pd.to_datetime(c, utc=True) for c in cuts)
    except (ValueError, TypeError) as exc:
        raise InputError(f"cuts must be ISO dates, got {cuts!r}: {exc}", "split") from None
    if not c1 < c2:
        raise InputError(f"cuts must be increasing, got {cuts[0]} then {cuts[1]}", "split")
    return _by_cuts(_issue_times(queries), (c1, c2)), (c1, c2)


def _quantiles(queries: pd.DataFrame, *, quantiles: tuple[float, float],
               **_) -> tuple[pd.Series, Cuts]:
    """Cut at observed issue times: c_i = quantile q_i of issued_at, interpolation 'higher'.

    Needs 0 < q1 < q2 < 1. With n distinct times, train gets ceil(q1·(n−1)) queries; ties at a
    cut go to the later split, so earlier splits can come out smaller than the quantiles say.
    """
    q1, q2 = quantiles
    if not 0 < q1 < q2 < 1:
        raise InputError(f"quantiles must be increasing within (0, 1), got {quantiles!r}",
                         "split")
    if queries.empty:
        raise InputError("no queries to take quantiles of", "queries")
    times = _issue_times(queries)
    cuts = (times.quantile(q1, interpolation="higher"),
            times.quantile(q2, interpolation="higher"))
    return _by_cuts(times, cuts), cuts


def _given(queries: pd.DataFrame, *, given: pd.DataFrame | None, **_) -> tuple[pd.Series, None]:
    """The dataset's own (query_id, split); with no split given, every query is test."""
    if given is None:
        return pd.Series(TEST, index=queries.index), None
    S.require_columns(given, (S.QUERY_ID, S.SPLIT), "given split")
    bad = given[~given[S.SPLIT].isin(S.SPLITS)]
    if len(bad):
        raise InputError(f"split must be one of {', '.join(S.SPLITS)}, got "
                         f"{bad[S.SPLIT].iloc[0]!r} for query {bad[S.QUERY_ID].iloc[0]}",
                         "given split")
    pairs = given[[S.QUERY_ID, S.SPLIT]].drop_duplicates()
    twice = pairs[S.QUERY_ID].duplicated()
    if twice.any():
        raise InputError(f"queries in more than one split: {_first(pairs.loc[twice, S.QUERY_ID])}",
                         "given split")
    labels = queries[S.QUERY_ID].map(pairs.set_index(S.QUERY_ID)[S.SPLIT])
    missing = queries.loc[labels.isna(), S.QUERY_ID]
    if len(missing):
        raise InputError(f"{len(missing)} queries not in the given split: {_first(missing)}",
                         "given split")
    return labels, None


METHODS: dict[str, Callable[..., tuple[pd.Series, Cuts | None]]] = {
    "dates": _dates,
    "quantiles": _quantiles,
    "given": _given,
}


def split_queries(queries: pd.DataFrame, method: str, *, cuts: tuple[str, str] | None = None,
                  quantiles: tuple[float, float] = (0.7, 0.85),
                  given: pd.DataFrame | None = None) -> Split:
    """Assign every query to exactly one split by a method of ``METHODS`` (see module rule).

    The table keeps the order of ``queries``; query_id must be unique.
    """
    if method not in METHODS:
        raise InputError(f"unknown split method {method!r}; known: {', '.join(METHODS)}", "split")
    S.require_columns(queries, (S.QUERY_ID, S.ISSUED_AT), "queries")
    twice = queries[S.QUERY_ID].duplicated()
    if twice.any():
        repeated = _first(queries.loc[twice, S.QUERY_ID])
        raise InputError(f"query_id must be unique; repeated: {repeated}", "queries")
    labels, cut_points = METHODS[method](queries, cuts=cuts, quantiles=quantiles, given=given)
    table = pd.DataFrame({S.QUERY_ID: queries[S.QUERY_ID].to_numpy(),
                          S.SPLIT: labels.to_numpy(dtype=object)})
    return Split(table=table, cuts=cut_points, method=method)


def queries_in(split_table: pd.DataFrame, splits) -> pd.Series:
    """The query ids that ``split_table`` (query_id, split) puts in any of ``splits``."""
    return split_table.loc[split_table[S.SPLIT].isin(splits), S.QUERY_ID]


def require_evaluated(split: Split, splits, source: str, judged: pd.DataFrame | None = None,
                      why: Callable[[str], str] | None = None) -> None:
    """InputError naming ``source`` when the evaluated splits (``splits``:
    ``evaluate.splits``) hold no query, or, given ``judged`` (the judgments known before
    judging: recommendation mode's, from the log), none of their queries has one: nothing
    there could be measured, and the stage that finds it says so rather than a statistic
    later. ``why(split)`` words a split's emptiness in the data's own terms; by default its
    cut points."""
    splits = list(splits)
    chosen = queries_in(split.table, splits)
    empty = chosen.empty if judged is None else not judged[S.QUERY_ID].isin(chosen).any()
    if not empty:
        return
    if why is not None:
        raise InputError("; ".join(why(s) for s in splits), source)
    where = "" if split.cuts is None else \
        f" (cuts {split.cuts[0]:%Y-%m-%d} and {split.cuts[1]:%Y-%m-%d}: {RULE})"
    what = "query" if judged is None else "judged query"
    raise InputError(f"no {what} in the evaluated split{'s' * (len(splits) > 1)} "
                     f"{', '.join(splits)}{where}", source)


def normalise_text(text: pd.Series) -> pd.Series:
    """Lowercase, drop punctuation (non-word, non-space characters), collapse whitespace."""
    return (text.astype(str).str.lower().str.replace(r"[^\w\s]", "", regex=True)
            .str.replace(r"\s+", " ", regex=True).str.strip())


def _shared_sources(split_table: pd.DataFrame, qrels: pd.DataFrame,
                    documents: pd.DataFrame) -> dict:
    """source_ids relevant (grade ≥ 1) to both a train and a test query.

    A judged doc_id missing from ``documents`` counts as its own source.
    """
    relevant = qrels.loc[qrels[S.GRADE] >= 1, [S.QUERY_ID, S.DOC_ID]].merge(
        documents[[S.DOC_ID, S.SOURCE_ID]], on=S.DOC_ID, how="left")
    relevant[S.SOURCE_ID] = relevant[S.SOURCE_ID].fillna(relevant[S.DOC_ID])
    relevant = (relevant.merge(split_table, on=S.QUERY_ID)
                .loc[lambda f: f[S.SPLIT].isin((TRAIN, TEST))]
                .drop_duplicates([S.QUERY_ID, S.SOURCE_ID]))
    per_source = (relevant.groupby([S.SOURCE_ID, S.SPLIT]).size().unstack(fill_value=0)
                  .reindex(columns=[TRAIN, TEST], fill_value=0))
    shared = (per_source[(per_source[TRAIN] > 0) & (per_source[TEST] > 0)]
              .rename(columns={TRAIN: "train_queries", TEST: "test_queries"})
              .reset_index()
              .sort_values(["test_queries", "train_queries", S.SOURCE_ID],
                           ascending=[False, False, True]))
    affected = relevant.loc[(relevant[S.SPLIT] == TEST)
                            & relevant[S.SOURCE_ID].isin(shared[S.SOURCE_ID]), S.QUERY_ID]
    return {"count": len(shared), "test_queries_affected": int(affected.nunique()),
            "sources": shared.astype({S.SOURCE_ID: object}).to_dict(orient="records")}


def _duplicate_texts(queries: pd.DataFrame, split_table: pd.DataFrame) -> dict:
    """Test queries whose normalised text (``normalise_text``, non-empty) also occurs in train."""
    texts = split_table.merge(queries[[S.QUERY_ID, S.TEXT]], on=S.QUERY_ID)
    texts[NORMALISED] = normalise_text(texts[S.TEXT])
    texts = texts[texts[NORMALISED] != ""]
    pairs = (texts.loc[texts[S.SPLIT] == TEST, [S.QUERY_ID, NORMALISED]]
             .merge(texts.loc[texts[S.SPLIT] == TRAIN, [S.QUERY_ID, NORMALISED]],
                    on=NORMALISED, suffixes=("", "_train"))
             .sort_values([S.QUERY_ID, f"{S.QUERY_ID}_train"]))
    first = pairs.groupby(S.QUERY_ID).head(EXAMPLES)
    examples = (first.groupby(S.QUERY_ID, sort=True)
                .agg(text=(NORMALISED, "first"), train_query_ids=(f"{S.QUERY_ID}_train", list))
                .head(EXAMPLES).reset_index())
    return {"count": int(pairs[S.QUERY_ID].nunique()),
            "examples": examples.astype({S.QUERY_ID: object, "text": object})
            .to_dict(orient="records")}


def leakage(queries: pd.DataFrame, split_table: pd.DataFrame, qrels: pd.DataFrame,
            documents: pd.DataFrame) -> dict:
    """What connects the test split to train: shared relevant sources and repeated texts.

    Returns ``{"shared_sources": {count, test_queries_affected, sources: [{source_id,
    train_queries, test_queries}]}, "duplicate_texts": {count, examples: [{query_id, text,
    train_query_ids}]}}``; counts are complete, example lists hold at most ``EXAMPLES``.
    """
    return {"shared_sources": _shared_sources(split_table, qrels, documents),
            "duplicate_texts": _duplicate_texts(queries, split_table)}


def split_report(split: Split, queries: pd.DataFrame, qrels: pd.DataFrame,
                 documents: pd.DataFrame) -> dict:
    """JSON-ready summary: method, rule and cuts, counts per split and per split × tag, leakage.

    Queries without tags are counted per split but not per tag; a given split carries a note.
    """
    table = split.table
    counts = table[S.SPLIT].value_counts().reindex(list(S.SPLITS), fill_value=0)
    tags = (table.merge(queries[[S.QUERY_ID, S.TAGS]], on=S.QUERY_ID)
            .explode(S.TAGS).dropna(subset=[S.TAGS]))
    by_tag = (tags.groupby([S.SPLIT, S.TAGS]).size().unstack(fill_value=0)
              .reindex(list(S.SPLITS), fill_value=0))
    report = {
        "method": split.method,
        "temporal": split.cuts is not None,
        "rule": RULE if split.cuts is not None else None,
        "cuts": None if split.cuts is None else [c.isoformat() for c in split.cuts],
        "counts": {s: int(n) for s, n in counts.items()},
        "counts_by_tag": {s: {str(t): int(n) for t, n in row.items()}
                          for s, row in by_tag.iterrows()},
        "leakage": leakage(queries, table, qrels, documents),
    }
    if split.method == "given":
        report["note"] = GIVEN_NOTE
    return report
