"""Relations of the evaluator: what must not change a metric, and what a perfect run scores.

The run is the first scoring system's windows of judged queries, the qrels the dataset's own
judgments of them; every configured measure is compared per query (equal within
``TOLERANCE``, NaN equal to NaN).

- ``row_permutation``: shuffling the rows of the run and of the qrels changes no metric.
- ``id_rename``: renaming query ids and doc ids by random bijections (order not kept: the run
  has ranks) changes no metric of the renamed queries.
- ``split_files``: the run written as one TREC file, or its rows split at random between two
  files read back and concatenated, scores the same (both read through
  ``releval.data.readers``).
- ``ideal_ndcg``: a run ranking each query's judged documents by grade, highest first,
  scores nDCG 1 (uncut, and in every configured nDCG measure).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.readers import read_run, write_trec_run
from releval.selftest.cases import EvaluatorCase, stream
from releval.selftest.relation import Relation, Tally

TOLERANCE = 1e-12
NO_RUN = "no candidates system has a scorer to produce a run"


def mismatches(want: pd.DataFrame, got: pd.DataFrame) -> np.ndarray:
    """Per row (query) of two (query_id × measure) tables: '' when every value agrees, else
    the first measure that differs in one line."""
    got = got.reindex(index=want.index, columns=want.columns)
    a, b = want.to_numpy(dtype=float), got.to_numpy(dtype=float)
    same = np.isclose(a, b, rtol=0, atol=TOLERANCE, equal_nan=True)
    out = np.full(len(want), "", dtype=object)
    for row in np.flatnonzero(~same.all(axis=1)):
        col = int(np.argmin(same[row]))
        out[row] = (f"{want.index[row]}: {want.columns[col]} is {b[row, col]:.6g}, "
                    f"expected {a[row, col]:.6g}")
    return out


def _tally(case: EvaluatorCase, examples: np.ndarray, also=True) -> Tally:
    """Reached: the query has a relevant judgment (and ``also`` holds for it)."""
    qrels = case.qrels
    relevant = qrels.loc[qrels[S.GRADE] >= case.rel, S.QUERY_ID]
    return Tally.of(pd.Index(case.query_ids).isin(relevant) & also, examples)


def row_permutation(case: EvaluatorCase) -> Tally:
    if case.run is None:
        return Tally.not_applicable(NO_RUN)
    rng = stream(case.seed, "row_permutation")
    run = case.run.sample(frac=1, random_state=rng).reset_index(drop=True)
    qrels = case.qrels.sample(frac=1, random_state=rng).reset_index(drop=True)
    return _tally(case, mismatches(case.values(case.run, case.qrels), case.values(run, qrels)))


def _bijection(values: pd.Series, prefix: str, rng: np.random.Generator) -> pd.Series:
    """Each distinct value -> ``<prefix><n>``, n a random permutation of 0..m-1."""
    unique = pd.unique(values.astype(str))
    width = len(str(len(unique)))
    return pd.Series([f"{prefix}{i:0{width}d}" for i in rng.permutation(len(unique))],
                     index=unique)


def id_rename(case: EvaluatorCase) -> Tally:
    if case.run is None:
        return Tally.not_applicable(NO_RUN)
    rng = stream(case.seed, "id_rename")
    run, qrels = case.run, case.qrels
    queries = _bijection(pd.concat([pd.Series(case.query_ids), run[S.QUERY_ID],
                                    qrels[S.QUERY_ID]]), "q", rng)
    docs = _bijection(pd.concat([run[S.DOC_ID], qrels[S.DOC_ID]]), "d", rng)

    def rename(table: pd.DataFrame) -> pd.DataFrame:
        return table.assign(**{S.QUERY_ID: table[S.QUERY_ID].astype(str).map(queries),
                               S.DOC_ID: table[S.DOC_ID].astype(str).map(docs)})

    got = case.values(rename(run), rename(qrels), queries[list(case.query_ids)].to_numpy())
    got.index = pd.Index(case.query_ids, dtype=object)
    return _tally(case, mismatches(case.values(run, qrels), got))


def split_files(case: EvaluatorCase) -> Tally:
    if case.run is None:
        return Tally.not_applicable(NO_RUN)
    rng = stream(case.seed, "split_files")
    first = rng.random(len(case.run)) < 0.5
    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / name for name in ("run.trec", "part1.trec", "part2.trec")]
        for path, rows in zip(paths, (case.run, case.run[first], case.run[~first]),
                              strict=True):
            write_trec_run(path, rows)
        whole, *parts = (read_run(path) for path in paths)
    joined = pd.concat(parts, ignore_index=True)
    examples = mismatches(case.values(whole, case.qrels), case.values(joined, case.qrels))
    ids = pd.Index(case.query_ids)
    both = ids.isin(case.run.loc[first, S.QUERY_ID]) & ids.isin(case.run.loc[~first, S.QUERY_ID])
    return _tally(case, examples, both)


def ideal_ndcg(case: EvaluatorCase) -> Tally:
    qrels = case.qrels[case.qrels[S.QUERY_ID].isin(case.query_ids)]
    ideal = qrels[qrels[S.GRADE] > 0].sort_values([S.QUERY_ID, S.GRADE, S.DOC_ID],
                                                  ascending=[True, False, True])
    ideal = ideal.assign(**{S.RANK: ideal.groupby(S.QUERY_ID).cumcount() + 1})
    ideal = ideal.assign(**{S.SCORE: -ideal[S.RANK].astype(float)})
    measures = ["nDCG", *(m for m in case.measures if m.startswith("nDCG"))]
    values = case.values(ideal[[S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE]], case.qrels,
                         measures=measures)
    ones = pd.DataFrame(1.0, index=values.index, columns=values.columns)
    return _tally(case, mismatches(ones, values))


RELATIONS = (
    Relation("row_permutation", "evaluator", "the query has a relevant judgment",
             "permuting the rows of the run and of the qrels changes no metric",
             row_permutation),
    Relation("id_rename", "evaluator", "the query has a relevant judgment",
             "renaming query and doc ids (bijections) changes no metric", id_rename),
    Relation("split_files", "evaluator",
             "the query has a relevant judgment and rows in both files",
             "a run split into two TREC files and concatenated scores as the one file",
             split_files),
    Relation("ideal_ndcg", "evaluator", "the query has a judgment of grade ≥ rel",
             "a run equal to the ideal ranking scores nDCG 1", ideal_ndcg),
)
