"""The generated cases of the differential parity check (``releval.selftest.differential``):
queries tagged, from their own data, with the code paths of the metrics engine they exercise.

``PATHS`` names each path; one generator per path (``GENERATORS``, a ``Shape`` each) draws
queries until they exercise it; ``cases(seed, n_cases, measures)`` returns the qrels, the run
and each query's tags (``Cases``). ``MEASURES`` are the measures compared by default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.errors import InputError
from releval.metrics.engine import resolve
from releval.metrics.spec import Measure

PATHS: dict[str, str] = {
    "ordinary": "none of the paths below",
    "cutoff_beyond_list": "a cutoff k beyond the ranked list (0 < list length < k)",
    "score_ties": "equal scores within a ranked list (trec_eval's order: doc_id descending)",
    "empty_ranking": "a judged query the run does not rank",
    "negative_grades": "a judgment with a negative grade (beside one ≥ 0: trec_eval cannot "
                       "read a query whose every grade is negative)",
    "unjudged_documents": "a ranked document without a judgment",
    "no_relevant": "a judged query without a relevant document (undefined: NaN)",
    "no_judged_nonrelevant": "a judged query without a non-relevant judgment (0 ≤ grade < 1)",
    "graded": "grades above 1 (0..3)",
}
MEASURES = ("nDCG@10", "nDCG", "nDCG(dcg='exp-log2')@10", "P@10", "R@100", "RR", "RR@10", "AP",
            "AP@10", "Judged@10", "Rprec", "Bpref", "Hit@10", "IPrec@0.5", "NumRet", "NumRel",
            "NumRelRet")
# the families with a value on a query without a relevant document; the others are NaN there,
# where every oracle scores them 0
DEFINED_WITHOUT_RELEVANT = frozenset({"Judged", "NumRet", "NumRel", "NumRelRet"})


@dataclass(frozen=True)
class Shape:
    """How a generator draws a query: its ranked list length (an inclusive range, or "short":
    from 1 to below the smallest cutoff, "long": from the largest cutoff up), the share of
    ranked documents judged, the grades a judgment draws from (uniformly), the number of
    distinct score values (None: every score distinct) and how many judged documents the run
    does not rank (an inclusive range)."""

    lengths: tuple[int, int] | str
    judged: float = 1.0
    grades: tuple[int, ...] = (0, 1)
    levels: int | None = None
    unranked: tuple[int, int] = (1, 3)


GENERATORS: dict[str, Shape] = {
    "ordinary": Shape("long"),
    "cutoff_beyond_list": Shape("short"),
    "score_ties": Shape((4, 30), judged=0.8, grades=(0, 1, 2), levels=3),
    "empty_ranking": Shape((0, 0), grades=(0, 1, 2), unranked=(1, 8)),
    "negative_grades": Shape((5, 30), judged=0.9, grades=(-1, 0, 1, 2)),
    "unjudged_documents": Shape((5, 30), judged=0.5),
    "no_relevant": Shape((3, 30), judged=0.7, grades=(0,)),
    "no_judged_nonrelevant": Shape((3, 30), judged=0.6, grades=(1, 2, 3)),
    "graded": Shape((5, 30), grades=(0, 1, 2, 3)),
}


@dataclass(frozen=True)
class _Docs:
    """Generated documents as flat arrays, grouped by query: query index, ranked?, judged?,
    grade, score (ranked ones), document number within the query; ``nq`` queries."""

    q: np.ndarray
    ranked: np.ndarray
    judged: np.ndarray
    grade: np.ndarray
    score: np.ndarray
    doc: np.ndarray
    nq: int

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.q[mask], minlength=self.nq)

    def take(self, keep: np.ndarray) -> _Docs:
        """The queries ``keep`` (ascending indices), renumbered 0.., in order."""
        code = np.full(self.nq, -1)
        code[keep] = np.arange(len(keep))
        rows = code[self.q] >= 0
        return _Docs(code[self.q[rows]], self.ranked[rows], self.judged[rows], self.grade[rows],
                     self.score[rows], self.doc[rows], len(keep))


_ARRAYS = ("ranked", "judged", "grade", "score", "doc")


def _concat(parts: list[_Docs]) -> _Docs:
    offsets = np.cumsum([0, *(p.nq for p in parts)])
    q = np.concatenate([p.q + o for p, o in zip(parts, offsets[:-1], strict=True)])
    return _Docs(q, *(np.concatenate([getattr(p, a) for p in parts]) for a in _ARRAYS),
                 nq=int(offsets[-1]))


def _draw(rng: np.random.Generator, shape: Shape, n: int, span: tuple[int, int]) -> _Docs:
    low, high = {"short": (1, max(span[0] - 1, 1)), "long": (span[1], span[1] + 10)}.get(
        shape.lengths, shape.lengths)
    length = rng.integers(low, high + 1, n)
    size = length + rng.integers(shape.unranked[0], shape.unranked[1] + 1, n)
    q = np.repeat(np.arange(n), size)
    slot = np.arange(len(q)) - np.repeat(np.cumsum(size) - size, size)
    ranked = slot < length[q]
    judged = ~ranked | (rng.random(len(q)) < shape.judged)
    grade = rng.choice(np.asarray(shape.grades), len(q))
    score = ((length[q] - slot).astype(float) if shape.levels is None
             else rng.integers(0, shape.levels, len(q)).astype(float))
    doc = np.empty(len(q), np.int64)
    doc[np.lexsort((rng.random(len(q)), q))] = slot  # a random numbering within each query
    return _Docs(q, ranked, judged, grade, score, doc, n)


def _tags(d: _Docs) -> pd.DataFrame:
    """Per query: the paths that do not depend on the measure, and ``ranked`` (list length)."""
    j, g = d.judged, d.grade
    rows = np.flatnonzero(d.ranked)
    rows = rows[np.lexsort((d.score[rows], d.q[rows]))]
    tied = (d.q[rows][1:] == d.q[rows][:-1]) & (d.score[rows][1:] == d.score[rows][:-1])
    return pd.DataFrame({
        "score_ties": np.bincount(d.q[rows][1:][tied], minlength=d.nq) > 0,
        "empty_ranking": d.count(d.ranked) == 0,
        "negative_grades": d.count(j & (g < 0)) > 0,
        "unjudged_documents": d.count(d.ranked & ~j) > 0,
        "no_relevant": d.count(j & (g >= 1)) == 0,
        "no_judged_nonrelevant": d.count(j & (g >= 0) & (g < 1)) == 0,
        "graded": d.count(j & (g >= 2)) > 0,
        "ranked": d.count(d.ranked),
    })


def _exercises(path: str, d: _Docs, span: tuple[int, int]) -> np.ndarray:
    """Per query: judged (with a grade ≥ 0: trec_eval cannot read a query whose every grade is
    negative) and on ``path`` (cutoff_beyond_list: beyond the largest cutoff; ordinary: on no
    other path, for any cutoff)."""
    tags = _tags(d)
    n = tags.pop("ranked").to_numpy()
    usable = d.count(d.judged & (d.grade >= 0)) > 0
    if path == "ordinary":
        return usable & ~tags.any(axis=1).to_numpy() & (n >= span[1])
    if path == "cutoff_beyond_list":
        return usable & (n > 0) & (n < span[1])
    return usable & tags[path].to_numpy()


def _generate(rng: np.random.Generator, path: str, n: int, span: tuple[int, int]) -> _Docs:
    """``n`` queries drawn from the path's shape that exercise it."""
    parts, have = [], 0
    for _ in range(50):
        d = _draw(rng, GENERATORS[path], 2 * n + 8, span)
        keep = np.flatnonzero(_exercises(path, d, span))[: n - have]
        parts.append(d.take(keep))
        have += len(keep)
        if have == n:
            return _concat(parts)
    raise InputError(f"no generated query exercises {path} with cutoffs {span}", "differential")


@dataclass(frozen=True)
class Cases:
    """Generated queries: ``qrels`` (query_id, doc_id, grade), ``run`` (query_id, doc_id,
    score; a query with an empty ranking has no rows) and ``tags``, per query_id (sorted): one
    bool column per path that does not depend on the measure, and ``ranked``, the list
    length."""

    qrels: pd.DataFrame
    run: pd.DataFrame
    tags: pd.DataFrame

    def paths(self, m: Measure) -> pd.DataFrame:
        """Per query, whether it is on each path of ``PATHS`` for ``m``, in that order
        (cutoff_beyond_list: 0 < length < m's cutoff, a path only of a measure with one;
        ordinary: on no other)."""
        n = self.tags["ranked"]
        out = self.tags.drop(columns="ranked")
        if m.cutoff:
            out = out.assign(cutoff_beyond_list=(n > 0) & (n < m.cutoff))
        out = out.assign(ordinary=~out.any(axis=1))
        return out[[p for p in PATHS if p in out.columns]]

    def only(self, keep: np.ndarray) -> Cases:
        """The queries where ``keep`` (a bool per query of ``tags``)."""
        queries = self.tags.index[keep]
        return Cases(self.qrels[self.qrels.query_id.isin(queries)],
                     self.run[self.run.query_id.isin(queries)], self.tags[keep])

    def trec_order(self) -> pd.DataFrame:
        """The run in trec_eval's order (by query; score descending, ties doc_id descending)
        with ``position``, 0.. within each query."""
        run = self.run.sort_values(["query_id", "score", "doc_id"],
                                   ascending=[True, False, False], kind="stable")
        return run.assign(position=run.groupby("query_id").cumcount().to_numpy())


def _span(measures: list[Measure]) -> tuple[int, int]:
    """(smallest, largest) cutoff of ``measures``; (10, 10) when none has one."""
    cuts = [m.cutoff for m in measures if m.cutoff]
    return (min(cuts), max(cuts)) if cuts else (10, 10)


def cases(seed: int = 0, n_cases: int = 450, measures: Iterable[str] = MEASURES) -> Cases:
    """``n_cases`` queries, shared out evenly over ``GENERATORS`` (at least one each), their
    list lengths sized to the cutoffs of ``measures``."""
    if n_cases < len(GENERATORS):
        raise InputError(f"n_cases must be ≥ {len(GENERATORS)} (one query per path), got "
                         f"{n_cases}", "differential")
    span = _span(resolve(measures))
    rng = np.random.default_rng(seed)
    share = np.full(len(GENERATORS), n_cases // len(GENERATORS))
    share[: n_cases % len(GENERATORS)] += 1
    d = _concat([_generate(rng, path, int(n), span)
                 for path, n in zip(GENERATORS, share, strict=True)])
    width = len(str(d.nq - 1))
    queries = np.array([f"c{i:0{width}d}" for i in range(d.nq)], dtype=object)
    docs = np.char.add("d", np.char.zfill(d.doc.astype(str), len(str(d.doc.max()))))
    docs = docs.astype(object)
    qrels = pd.DataFrame({"query_id": queries[d.q[d.judged]], "doc_id": docs[d.judged],
                          "grade": d.grade[d.judged].astype(np.int64)})
    run = pd.DataFrame({"query_id": queries[d.q[d.ranked]], "doc_id": docs[d.ranked],
                        "score": d.score[d.ranked]})
    return Cases(qrels, run, _tags(d).set_axis(pd.Index(queries, name="query_id")))
