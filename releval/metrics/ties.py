"""Score ties: how far a measure's value hangs on the order of documents with equal scores.

trec_eval ranks a TREC run by score descending and breaks a score tie by doc_id descending
(``releval.metrics.ranking``); other tools keep the input order. Either way the tie, not the
system, decides which of the tied documents comes first. For every measure and evaluated
query this module gives:

- ``value``: the measure in the evaluated order (trec_eval's for a run ranked by score): the
  engine's value (``releval.metrics.evaluate``);
- ``worst`` and ``best``: the worst and the best value over every order of the tied
  documents (each tie group permuted in place, the groups keeping their positions): the
  least and the greatest, the other way round for a measure where lower is better;
- ``tied``: a tie group straddles the measure's cutoff k (holds documents both at positions
  ≤ k and > k; Rprec's cutoff is |R|; a ``judged_only`` measure counts positions over the
  condensed list, where a group's judged documents stay one block); for a measure without a
  cutoff, the value depends on the order of tied documents (worst ≠ best);
- ``changed``: worst ≠ best.

A tie group is a maximal run of consecutive ranked documents of one query with equal scores;
a group of one document is no tie. A query whose value is undefined (NaN) has no tie to
report (tied and changed are False, worst and best NaN).

Exact extremes. Within each tie group the value is least when the tied documents are sorted
by one key per document ascending and greatest when sorted descending (``KEYS``). Exchange
argument: swapping two adjacent documents so that the one with the larger key comes first
never lowers the value, and every order of a group reaches the sorted one by such swaps
(``tests/metrics/test_ties.py`` checks every keyed family against all orders of small
random runs). The keys:

- P, R, R_cap, Hit, RR, AP, GMAP, Rprec, IPrec, NumRelRet: relevant (grade ≥ rel) or not: a
  relevant document moved up counts in every cutoff it enters and raises the precision at
  every relevant document after it;
- nDCG (any ``dcg`` form or ``gains`` map, monotone or not): the document's gain; the
  discounts 1/log2(i + 1) do not increase with i and are 0 past the cutoff, so by the
  rearrangement inequality gains sorted descending maximise DCG (IDCG does not depend on
  the ranking);
- RBP: u_i (relevant, or g_i / g_max when graded), by the same rearrangement over the
  weights (1 − p) p^(i − 1); RBP_resid: unjudged or not (lower is better, so its worst is
  the greater value: unjudged documents first);
- ERR: the grade (unjudged and negative: 0): for adjacent stop probabilities a ≥ b the
  order (a, b) beats (b, a) by (a − b)(1/i − 1/(i + 1)) times the chance to reach i, and
  leaves every later term unchanged;
- the ``judged_only`` forms of these: the same key (the unjudged documents a tie holds
  leave the condensed list wherever they stand);
- Bpref: relevant 2, unjudged or negative grade 1, judged non-relevant 0: Bpref counts only
  the judged non-relevant documents above each relevant one;
- Judged: judged (any grade) or not; HardNeg: a marked hard negative or not (lower is
  better, so its worst is the greater value: hard negatives first);
- AUC: positive 2, neither 1 (outside the sampled negatives), negative 0;
- NumRet, NumRel: do not depend on the order (worst = best = value).

Any other family (the beyond-accuracy measures such as Novelty, ILD, Serendipity, LongTail;
a family registered without a key): worst and best are not computed (NaN, ``exact`` False);
``tied`` is still reported for a measure with a cutoff (it does not depend on the measure)
and is unknown (NA) for one without. System-level measures (one value per system) are left
out.

A run with a ``rank`` column is ranked by its ranks, not by its scores: the rank decides,
there is no tie to report and worst = best = value (``rank_decides=True``, as ``releval
metrics``). The pipeline's candidate windows carry ranks that their routes derived from the
scores, breaking the routes' own ties; ``rank_decides=False`` then takes the scores of
consecutive ranked documents: equal ones form a tie group, and the rank's order among them is
one of the orders considered.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.metrics.engine import DEFAULT_MEASURES, resolve
from releval.metrics.measures import MEASURES, gain
from releval.metrics.ranking import Ranking
from releval.metrics.registry import AGGREGATES, option
from releval.metrics.spec import Measure

TIE_COLUMNS = (S.QUERY_ID, S.MEASURE, S.VALUE, "worst", "best", "tied", "changed")
SUMMARY_COLUMNS = (S.MEASURE, S.VALUE, "worst", "best", "n", "ties", "changed", "exact")
# the per-row fields of a Ranking that describe the ranked document (they move with it when
# tied documents change places); q and pos describe the position and stay
DOCUMENT_FIELDS = ("grade", "judged", "hard", "probability", "item")


def _relevant(r: Ranking, m: Measure) -> np.ndarray:
    return r.relevant(m.rel).astype(float)


def _bpref_key(r: Ranking, m: Measure) -> np.ndarray:
    nonrel = (r.grade >= 0) & (r.grade < m.rel)
    return np.where(r.relevant(m.rel), 2.0, np.where(nonrel, 0.0, 1.0))


def _auc_key(r: Ranking, m: Measure) -> np.ndarray:
    positive = r.relevant(m.rel)
    catalog = r.catalog
    if catalog is None or catalog.negatives == "window":
        return positive.astype(float)
    negative = catalog.in_sample(r.query_code[r.q], r.item) & ~positive
    return np.where(positive, 2.0, np.where(negative, 0.0, 1.0))


def _positive_grade(r: Ranking, m: Measure) -> np.ndarray:
    return np.where(r.grade > 0, r.grade, 0.0)  # NaN (unjudged) compares False


def _rbp_key(r: Ranking, m: Measure) -> np.ndarray:
    return _positive_grade(r, m) if option(m, "graded") else _relevant(r, m)


Key = Callable[[Ranking, Measure], np.ndarray] | None  # None: the order does not matter
KEYS: dict[str, Key] = {
    **dict.fromkeys(("P", "R", "R_cap", "Hit", "RR", "AP", "GMAP", "Rprec", "IPrec", "NumRelRet"),
                    _relevant),
    "nDCG": lambda r, m: gain(m, r.grade),
    "ERR": _positive_grade,
    "RBP": _rbp_key,
    "RBP_resid": lambda r, m: (~(r.grade >= 0)).astype(float),
    "Bpref": _bpref_key,
    "Judged": lambda r, m: r.judged.astype(float),
    "HardNeg": lambda r, m: r.hard.astype(float),  # only evaluated where the qrels mark some
    "AUC": _auc_key,
    "NumRet": None,
    "NumRel": None,
}


@dataclass(frozen=True)
class Ties:
    """Result of ``ties``.

    per_query: ``TIE_COLUMNS`` for every evaluated query and per-query measure (tied and
    changed are nullable booleans: NA where not known). summary: one row per per-query
    measure: value, worst and best aggregated as the engine does over the n queries with a
    value (the family's ``AGGREGATES`` entry: mean, sum or geometric mean), ties (queries
    with ``tied``, NA where not known), changed (queries with worst ≠ best, NA where not
    computed) and exact (whether worst and best were computed). counts: the evaluated
    queries, the queries with a tie group, the tie groups and the documents in them.
    by_rank: the run's rank column decided the order (no ties).
    """

    per_query: pd.DataFrame
    summary: pd.DataFrame
    counts: dict[str, int]
    by_rank: bool

    def entries(self) -> dict[str, dict]:
        """Per measure, what a summary.json records: ``ties`` (queries with a tie across the
        cutoff, None where not known) and ``tie_range`` ([worst, best] of the mean, 6
        decimals; None where not computed or undefined)."""
        out = {}
        for r in self.summary.itertuples(index=False):
            known = r.exact and not (pd.isna(r.worst) or pd.isna(r.best))
            out[r.measure] = {"ties": None if pd.isna(r.ties) else int(r.ties),
                              "tie_range": [round(float(r.worst), 6), round(float(r.best), 6)]
                              if known else None}
        return out


def row_scores(run: pd.DataFrame, r: Ranking) -> np.ndarray:
    """Each ranked row's score, in ``r``'s order (rows of the evaluated queries only).

    Within a query the Ranking's row at position p holds the document with the p-th greatest
    score (ties broken by doc_id, which does not change the score), or, for a run with a rank
    column, the document with the p-th smallest rank: sorting each query's scores by the same
    key gives the scores in ranked order without knowing which tied document is which.
    A run with ranks and no score column has no scores: all NaN (NaN equals nothing).
    """
    query_ids = S.ids(run, S.QUERY_ID, "run")
    if not pd.api.types.is_string_dtype(query_ids):
        query_ids = query_ids.astype(str)
    code = pd.Index(r.queries).get_indexer(query_ids.to_numpy())
    keep = code >= 0
    code = code[keep]
    if S.RANK in run.columns:
        score = (pd.to_numeric(run[S.SCORE], errors="coerce").to_numpy(dtype=float)[keep]
                 if S.SCORE in run.columns else np.full(len(code), np.nan))
        order = np.lexsort((S.check_ranks(run)[keep], code))
    else:
        score = S.check_scores(run)[keep]
        order = np.lexsort((-score, code))
    counts = np.bincount(code, minlength=r.nq)
    if not np.array_equal(counts, r.n_ret):
        raise ValueError("the run does not match the Ranking built from it")
    offset = np.cumsum(counts) - counts
    return score[order][offset[r.q] + r.pos]


def _reordered(r: Ranking, order: np.ndarray) -> Ranking:
    """``r`` with row i holding the document of row ``order[i]`` (positions unchanged)."""
    out = copy.copy(r)
    for name in DOCUMENT_FIELDS:  # those the ranking holds (one left to compute stays so)
        if vars(r).get(name) is not None:
            setattr(out, name, vars(r)[name][order])
    return out


@dataclass(frozen=True)
class _Groups:
    """The tie groups (two documents or more) of a ranking: per row its group (-1: none)."""

    group: np.ndarray  # per row
    query: np.ndarray  # per group
    head: np.ndarray  # per group: its first row

    @classmethod
    def of(cls, r: Ranking, score: np.ndarray) -> _Groups:
        n = len(r.q)
        if n == 0:
            empty = np.zeros(0, np.int64)
            return cls(empty, empty, empty)
        new = np.r_[True, (r.q[1:] != r.q[:-1]) | (score[1:] != score[:-1])]
        starts = np.flatnonzero(new)
        sizes = np.diff(np.r_[starts, n])
        tie = sizes > 1
        ordinal = np.where(tie, np.cumsum(tie) - 1, -1)
        return cls(np.repeat(ordinal, sizes), r.q[starts[tie]], starts[tie])

    def straddling(self, r: Ranking, cutoff: np.ndarray, kept: np.ndarray | None = None
                   ) -> np.ndarray:
        """Per query: a group holds documents both within the first ``cutoff[q]`` positions
        and after them. ``kept``: the rows of the list the measure sees (the condensed list
        of a judged_only measure), positions counted over them; a group's kept documents
        stay one block in it whatever their order."""
        kept = np.ones(len(self.group), bool) if kept is None else kept
        tied = self.group >= 0
        size = np.bincount(self.group[tied], weights=kept[tied], minlength=len(self.query))
        first = r.running(kept)[self.head] - kept[self.head]  # kept rows above the group
        k = cutoff[self.query]
        hit = (size >= 2) & (first < k) & (first + size - 1 >= k)
        return np.bincount(self.query[hit], minlength=r.nq) > 0

    def sorted_by(self, key: np.ndarray, descending: bool) -> np.ndarray:
        """Row order with each group's documents sorted by ``key`` (stable), others in place."""
        order = np.arange(len(self.group))
        rows = np.flatnonzero(self.group >= 0)
        k = key[rows]
        order[rows] = rows[np.lexsort((-k if descending else k, self.group[rows]))]
        return order


def _values(r: Ranking, m: Measure) -> np.ndarray:
    family = MEASURES[m.family]
    return family.compute(r, m) if family.available(r, m) else np.full(r.nq, np.nan)


def _extremes(r: Ranking, m: Measure, groups: _Groups, value: np.ndarray,
              orders: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(worst, best) per query, None where not computed. ``orders``: the two reordered
    rankings of each key met so far (measures with the same key share them)."""
    if not len(groups.query):
        return value, value  # no tie: every order is the evaluated one
    if m.family not in KEYS:
        return None
    key = KEYS[m.family]
    if key is None or not MEASURES[m.family].available(r, m):
        return value, value
    k = np.asarray(key(r, m), dtype=float)
    if k.tobytes() not in orders:
        orders[k.tobytes()] = [_reordered(r, groups.sorted_by(k, d)) for d in (False, True)]
    low, high = (_values(view, m) for view in orders[k.tobytes()])
    if MEASURES[m.family].better == "lower":
        low, high = high, low
    return low, high


def _aggregate(values: np.ndarray, counted: np.ndarray, how: str) -> float:
    return AGGREGATES[how](values[counted])


def tie_ranges(r: Ranking, score: np.ndarray | None,
               measures: Iterable[Measure]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(per_query, summary, counts) of ``Ties`` for a built Ranking and each ranked row's
    score in its order (``row_scores``); ``score`` None: the order is decided, no ties."""
    groups = _Groups.of(r, np.full(len(r.q), np.nan) if score is None else score)
    per, rows, orders = [], [], {}
    for m in measures:
        family = MEASURES[m.family]
        if family.level != "query":
            continue
        value = _values(r, m)
        counted = ~np.isnan(value)
        extremes = _extremes(r, m, groups, value, orders)
        worst, best = extremes if extremes else (np.full(r.nq, np.nan),) * 2
        moved = ~np.isclose(worst, best, rtol=0.0, atol=1e-12)
        changed = pd.array(counted & moved, dtype="boolean")
        if extremes is None:
            changed[:] = pd.NA
        if m.family == "Rprec" or m.cutoff is not None:
            cutoff = r.n_rel(m.rel) if m.family == "Rprec" else np.full(r.nq, m.cutoff)
            kept = r.grade >= 0 if dict(m.options).get("judged_only") else None
            tied = pd.array(groups.straddling(r, cutoff, kept) & counted, dtype="boolean")
        else:
            tied = changed.copy()
        worst, best = np.where(counted, worst, np.nan), np.where(counted, best, np.nan)
        per.append(pd.DataFrame({S.QUERY_ID: r.queries.astype(str), S.MEASURE: m.name,
                                 S.VALUE: value, "worst": worst, "best": best, "tied": tied,
                                 "changed": changed}))
        rows.append({S.MEASURE: m.name, S.VALUE: _aggregate(value, counted, family.aggregate),
                     "worst": _aggregate(worst, counted, family.aggregate),
                     "best": _aggregate(best, counted, family.aggregate),
                     "n": int(counted.sum()),
                     "ties": None if tied.isna().any() else int(tied.sum()),
                     "changed": None if extremes is None else int(changed.sum()),
                     "exact": extremes is not None})
    per_query = (pd.concat(per, ignore_index=True) if per else
                 pd.DataFrame(columns=list(TIE_COLUMNS)))
    summary = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS)).astype(
        {"n": "int64", "ties": "Int64", "changed": "Int64", "exact": bool})
    counts = {"queries_evaluated": int(r.nq),
              "queries_with_ties": int(len(np.unique(groups.query))),
              "tie_groups": int(len(groups.query)),
              "tied_documents": int((groups.group >= 0).sum())}
    return per_query, summary, counts


def ties(run: pd.DataFrame, qrels: pd.DataFrame,
         measures: Iterable[str | Measure] = DEFAULT_MEASURES, *, rel: int = 1,
         max_grade: int = 3, common_only: bool = False, queries: Iterable[str] | None = None,
         catalog=None, rank_decides: bool = True) -> Ties:
    """The tie diagnostics of ``run`` against ``qrels`` for ``measures``; the other arguments
    are ``releval.metrics.evaluate``'s. ``rank_decides``: a run with a rank column has no
    ties (False: its equal scores tie, see the module's docstring)."""
    wanted = resolve(measures, rel)
    r = Ranking(run, qrels, max_grade=max_grade, common_only=common_only,
                queries=None if queries is None else list(queries), catalog=catalog)
    by_rank = S.RANK in run.columns and rank_decides
    per_query, summary, counts = tie_ranges(r, None if by_rank else row_scores(run, r), wanted)
    return Ties(per_query, summary, counts, by_rank)
