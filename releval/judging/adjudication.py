"""Several grades per (query_id, doc_id) → one qrels row (``S.JUDGED_QRELS_COLUMNS``), by a
method of ``METHODS``; the pairs a person must decide go to the adjudication queue, and an
adjudicator's grades override the computed ones. The hard-negative marks of the dataset and
the judges then join the qrels (``with_hard_negatives``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.judging.ingest import checked_grades

GRADES = "grades"
NEEDS_ADJUDICATION = "needs_adjudication"
QUEUE_COLUMNS = (S.QUERY_ID, S.DOC_ID, S.BLIND_ID, GRADES, S.REASON, NEEDS_ADJUDICATION)
PAIR = [S.QUERY_ID, S.DOC_ID]

# Why a pair goes to the adjudication queue.
TIE = "majority tie"
SPREAD = "large spread"
UNRESOLVED = "unresolved"  # column of a method's result: True where it cannot decide
DATASET = "dataset"  # pool_id and guideline of a dataset's own qrels
COUNTS = ("marked", "kept", "added", "overruled")  # ingest.json's hard_negatives


@dataclass(frozen=True, eq=False)
class Adjudicated:
    """qrels (``S.JUDGED_QRELS_COLUMNS``) and the adjudication queue (``QUEUE_COLUMNS``)."""

    qrels: pd.DataFrame
    queue: pd.DataFrame


def _median(judged: pd.DataFrame) -> pd.DataFrame:
    """Lower median: the grade at sorted position ⌊(n − 1) / 2⌋ (0-based), so an even count
    takes the lower of the two middle grades and the result is always a grade a judge gave."""
    ordered = judged.sort_values([*PAIR, S.GRADE])
    groups = ordered.groupby(PAIR)
    middle = groups.cumcount() == (groups[S.GRADE].transform("size") - 1) // 2
    grade = ordered[middle].set_index(PAIR)[S.GRADE]
    return pd.DataFrame({S.GRADE: grade, UNRESOLVED: False})


def _majority(judged: pd.DataFrame) -> pd.DataFrame:
    """Most frequent grade; a tie between grades is unresolved (``TIE``) and gets the lowest
    of the tied grades."""
    votes = judged.groupby([*PAIR, S.GRADE]).size().rename("votes").reset_index()
    top = votes[votes["votes"] == votes.groupby(PAIR)["votes"].transform("max")].groupby(PAIR)
    return pd.DataFrame({S.GRADE: top[S.GRADE].min(), UNRESOLVED: top.size() > 1})


METHODS: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "median": _median, "majority": _majority}


def adjudicate(judgments: pd.DataFrame, method: str = "median", max_spread: int = 2,
               adjudicator: pd.DataFrame | None = None, *, pool_id: str, guideline: str,
               max_grade: int = 3) -> Adjudicated:
    """One grade per (query_id, doc_id) from its judges' grades, by ``METHODS[method]``.

    A pair is queued when the method leaves it unresolved (majority tie) or its grades
    spread, max − min, by ≥ ``max_spread``. Queued pairs still get the method's grade (lower
    median; lowest tied grade) and ``needs_adjudication`` True in the queue, until an
    adjudicator grades them. ``adjudicator`` (grade with query_id and doc_id, or blind_id;
    rows without a grade are ignored) overrides the computed grade of its pairs, queued or
    not: ``adjudicated`` True. ``agreement`` = share of the pair's judges who gave the final
    grade; ``n_judges`` counts judges, not the adjudicator.
    """
    if method not in METHODS:
        raise InputError(f"unknown adjudication method {method!r}; known: {', '.join(METHODS)}",
                         "adjudicate")
    judged = checked_grades(judgments, max_grade)
    groups = judged.groupby(PAIR)[S.GRADE]
    pairs = METHODS[method](judged).join(groups.agg(["size", "min", "max"]))
    override = _adjudicator_grades(adjudicator, judged, max_grade).reindex(pairs.index)
    final = override.fillna(pairs[S.GRADE]).astype("int64").rename("final")
    spread = (pairs["max"] - pairs["min"]) >= max_spread
    qrels = pd.DataFrame({
        S.GRADE: final, S.N_JUDGES: pairs["size"].astype("int64"),
        S.AGREEMENT: (judged[S.GRADE] == judged.join(final, on=PAIR)["final"])
        .groupby([judged[S.QUERY_ID], judged[S.DOC_ID]]).mean(),
        S.ADJUDICATED: override.notna(), S.POOL_ID: str(pool_id), S.GUIDELINE: guideline,
    }).reset_index()
    blind = (judged.groupby(PAIR)[S.BLIND_ID].min() if S.BLIND_ID in judged
             else pd.Series(None, index=pairs.index, dtype=object))
    queue = pd.DataFrame({
        S.BLIND_ID: blind,
        GRADES: judged.sort_values(S.GRADE).groupby(PAIR)[S.GRADE].agg(list),
        S.REASON: np.select([pairs[UNRESOLVED] & spread, pairs[UNRESOLVED], spread],
                            [f"{TIE}; {SPREAD}", TIE, SPREAD], default=""),
        NEEDS_ADJUDICATION: override.isna()}).reset_index()
    return Adjudicated(qrels[list(S.JUDGED_QRELS_COLUMNS)],
                       queue.loc[queue[S.REASON] != "", list(QUEUE_COLUMNS)]
                       .reset_index(drop=True))


def dataset_qrels(truth: pd.DataFrame) -> pd.DataFrame:
    """A dataset's own qrels (query_id, doc_id, grade) as judged qrels: one judge each,
    agreement NaN, not adjudicated, pool_id and guideline ``DATASET``."""
    return truth[list(S.QRELS_COLUMNS)].assign(**{
        S.N_JUDGES: 1, S.AGREEMENT: float("nan"), S.ADJUDICATED: False, S.POOL_ID: DATASET,
        S.GUIDELINE: DATASET})


def _adjudicator_grades(adjudicator: pd.DataFrame | None, judged: pd.DataFrame,
                        max_grade: int) -> pd.Series:
    """The adjudicator's grade per (query_id, doc_id); an unknown pair, a bad grade or two
    grades for one pair is an InputError."""
    if adjudicator is None:
        return pd.Series(dtype="float64", index=pd.MultiIndex.from_tuples([], names=PAIR))
    by_pair = S.QUERY_ID in adjudicator and S.DOC_ID in adjudicator
    if S.GRADE not in adjudicator or not (by_pair or S.BLIND_ID in adjudicator):
        raise InputError("adjudicator needs grade and query_id, doc_id or blind_id",
                         "adjudicator")
    graded = adjudicator[adjudicator[S.GRADE].notna()]
    if by_pair:
        keys = graded[PAIR].astype(str)
    elif S.BLIND_ID in judged:
        lookup = judged.drop_duplicates(S.BLIND_ID).set_index(S.BLIND_ID)[PAIR]
        keys = lookup.reindex(graded[S.BLIND_ID].astype(str).to_numpy()).set_axis(graded.index)
    else:
        raise InputError("adjudicator grades are by blind_id, but the judgments have none",
                         "adjudicator")
    grade = pd.to_numeric(graded[S.GRADE], errors="coerce")
    known = pd.MultiIndex.from_frame(keys).isin(pd.MultiIndex.from_frame(judged[PAIR]))
    problems = {
        "pair not among the judgments": ~known,
        f"grade must be an integer in 0..{max_grade}":
            ~grade.between(0, max_grade) | (grade != np.floor(grade)),
    }
    for rule, mask in problems.items():
        if np.asarray(mask).any():
            raise InputError(rule, "adjudicator", f"row {graded.index[np.asarray(mask)][0]}")
    result = grade.set_axis(pd.MultiIndex.from_frame(keys))
    if result.groupby(level=PAIR).nunique().gt(1).any():
        raise InputError("two different grades for one pair", "adjudicator")
    return result[~result.index.duplicated()]


def _pairs(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_frame(frame[PAIR].astype(str))


def with_hard_negatives(qrels: pd.DataFrame, dataset: pd.DataFrame,
                        judged: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict]:
    """The judged ``qrels`` with ``S.HARD_NEGATIVE``, sorted by (query_id, doc_id), and the
    counts of ``COUNTS`` (marked, kept, added, overruled).

    A pair is marked when the dataset's judgments (``dataset``: the raw qrels) or any judge's
    accepted judgment of it (``judged``) marks it. A marked pair in ``qrels`` keeps the mark
    while its judged grade is below ``S.HARD_NEGATIVE_BELOW`` (kept) and loses it otherwise
    (overruled: the judged grade decides). A marked pair only the dataset holds (not pooled)
    is added with the dataset's grade and provenance (``dataset_qrels``: pool_id and guideline
    ``DATASET``), or overruled if that grade is relevant. marked = kept + added + overruled,
    in distinct pairs.
    """
    sources = [dataset[S.hard_negative_marks(dataset, "judgments").to_numpy()]]
    if judged is not None:
        sources.append(judged[S.hard_negative_marks(judged, "accepted judgments").to_numpy()])
    flagged = pd.concat([_pairs(s).to_frame(index=False) for s in sources]).drop_duplicates()
    keyed = _pairs(qrels)
    hit = keyed.isin(_pairs(flagged))
    relevant = pd.to_numeric(qrels[S.GRADE]).to_numpy() >= S.HARD_NEGATIVE_BELOW
    unpooled = sources[0][~_pairs(sources[0]).isin(keyed)]
    unpooled = unpooled[~_pairs(unpooled).duplicated()]
    added = pd.to_numeric(unpooled[S.GRADE]).to_numpy() < S.HARD_NEGATIVE_BELOW
    counts = dict(zip(COUNTS, (len(flagged), int((hit & ~relevant).sum()), int(added.sum()),
                               int((hit & relevant).sum() + (~added).sum())), strict=True))
    if counts["marked"] != counts["kept"] + counts["added"] + counts["overruled"]:
        raise RuntimeError(f"hard-negative counts do not reconcile: {counts}")
    out = pd.concat([qrels.assign(**{S.HARD_NEGATIVE: hit & ~relevant}),
                     dataset_qrels(unpooled[added]).assign(**{S.HARD_NEGATIVE: True})],
                    ignore_index=True)
    return out.sort_values(PAIR, kind="stable", ignore_index=True), counts
