"""The measures: one registry entry each, its formula in its docstring.

Notation (per query): R = judged documents with grade ≥ rel (rel defaults to 1);
S_k = the first k ranked documents; pos(d) = 1-based position of d in the ranking.
"Undefined" means the value is NaN: the query is excluded from the mean and counted,
never scored 0 or 1. ``judged_only=True`` computes a measure on the condensed list, the
ranking without its unjudged documents (``releval.metrics.condensed``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from releval.errors import InputError
from releval.metrics.condensed import OPTION as JUDGED_ONLY
from releval.metrics.condensed import condensable, plain_only
from releval.metrics.ranking import Ranking
from releval.metrics.registry import (
    GAIN_FORMS,
    MEASURES,
    UNIT,
    has_hard_negatives,
    measure,
    option,
    proportion,
)
from releval.metrics.spec import Measure

__all__ = ["MEASURES", "gain", "measure"]


def _over_relevant(r: Ranking, numerator: np.ndarray, rel: int, denominator=None) -> np.ndarray:
    """numerator / denominator (default |R|), undefined (NaN) where |R| = 0."""
    n_rel = r.n_rel(rel)
    den = n_rel if denominator is None else denominator
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n_rel > 0, numerator / np.maximum(den, 1), np.nan)


def _hits(r: Ranking, m: Measure) -> np.ndarray:
    return r.sum_rows(r.relevant_rows(m.rel, m.cutoff))


def _cut(name: str) -> Callable[[Measure], str | None]:
    return lambda m: f"{name}_{m.cutoff}"


@measure("P", bounds=UNIT, cutoff="required", trec=plain_only(_cut("P")), options=JUDGED_ONLY)
@condensable
def precision(r: Ranking, m: Measure) -> np.ndarray:
    """P@k = |R ∩ S_k| / k, with k fixed even when fewer than k documents are returned.
    Undefined when |R| = 0."""
    return _over_relevant(r, _hits(r, m), m.rel, np.full(r.nq, m.cutoff))


@measure("R", bounds=UNIT, cutoff="required", trec=plain_only(_cut("recall")), options=JUDGED_ONLY)
@condensable
def recall(r: Ranking, m: Measure) -> np.ndarray:
    """R@k = |R ∩ S_k| / |R| (the denominator is every known relevant document).
    Undefined when |R| = 0."""
    return _over_relevant(r, _hits(r, m), m.rel)


@measure("R_cap", bounds=UNIT, cutoff="required", options=JUDGED_ONLY)
@condensable
def capped_recall(r: Ranking, m: Measure) -> np.ndarray:
    """R_cap@k = |R ∩ S_k| / min(|R|, k): recall that can reach 1 when |R| > k.
    Undefined when |R| = 0."""
    return _over_relevant(r, _hits(r, m), m.rel, np.minimum(r.n_rel(m.rel), m.cutoff))


@measure("Hit", cutoff="required", trec=plain_only(_cut("success")), options=JUDGED_ONLY,
         bounds=UNIT)
@condensable
def hit(r: Ranking, m: Measure) -> np.ndarray:
    """Hit@k = 1 if |R ∩ S_k| > 0 else 0 (trec_eval success_k, ir_measures Success@k; HR@k,
    the hit rate, names it too). Undefined when |R| = 0."""
    return _over_relevant(r, (_hits(r, m) > 0).astype(float), m.rel, np.ones(r.nq))


@measure("RR", bounds=UNIT, cutoff="optional", options=JUDGED_ONLY,
         trec=plain_only(lambda m: None if m.cutoff else "recip_rank"))
@condensable
def reciprocal_rank(r: Ranking, m: Measure) -> np.ndarray:
    """RR@k = 1 / pos(d) of the first d ∈ R with pos(d) ≤ k, else 0; RR has no cutoff.
    MRR is the mean of RR. Undefined when |R| = 0."""
    first = r.first(r.relevant_rows(m.rel, m.cutoff))
    return _over_relevant(r, 1.0 / (first + 1.0), m.rel, np.ones(r.nq))


@measure("AP", bounds=UNIT, cutoff="optional", options=JUDGED_ONLY,
         trec=plain_only(lambda m: "map" if m.cutoff is None else f"map_cut_{m.cutoff}"))
@condensable
def average_precision(r: Ranking, m: Measure) -> np.ndarray:
    """AP@k = (1/|R|) Σ_{d ∈ R ∩ S_k} |R ∩ S_pos(d)| / pos(d); AP uses the whole ranking.
    The denominator is |R| even with a cutoff, as in trec_eval's map_cut and rectools' MAP
    (recommenders' map_at_k divides by min(|R|, k)). MAP@k, its mean, names it too.
    Undefined when |R| = 0."""
    hits = r.relevant_rows(m.rel, m.cutoff)
    return _over_relevant(r, r.sum_rows(hits, r.ordinal(hits) / (r.pos[hits] + 1.0)), m.rel)


@measure("GMAP", bounds=UNIT, cutoff="none", options=JUDGED_ONLY, aggregate="geometric",
         trec=plain_only(lambda m: "gm_map"))
@condensable
def geometric_map(r: Ranking, m: Measure) -> np.ndarray:
    """GMAP = exp((1/n) Σ_q log(max(AP_q, ε))), ε = 10⁻⁵: the geometric mean of AP over the n
    queries (trec_eval's gm_map, its floor MIN_GEO_MEAN), which rewards a system that is
    consistent over queries more than MAP does. The per-query value is AP; a query with
    AP = 0 contributes log ε. Undefined when |R| = 0."""
    return average_precision(r, m)


def gain(m: Measure, grade: np.ndarray) -> np.ndarray:
    """Gain per grade: grade (dcg='log2'), 2^grade − 1 (dcg='exp-log2') or the ``gains``
    map (grades it does not name keep gain = grade, as trec_eval). Negative grades and
    unjudged documents gain 0."""
    g = np.where(np.isnan(grade) | (grade < 0), 0.0, grade)
    out = GAIN_FORMS[m.dcg](g)
    for level, value in m.gains or ():
        out = np.where(g == level, value, out)
    return np.where(grade >= 0, out, 0.0)  # NaN compares False


@measure("nDCG", bounds=UNIT, cutoff="optional", params=("dcg", "gains"), options=JUDGED_ONLY,
         trec=plain_only(lambda m: None if m.dcg != "log2" or m.gains else
                         ("ndcg" if m.cutoff is None else f"ndcg_cut_{m.cutoff}")))
@condensable
def ndcg(r: Ranking, m: Measure) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k, DCG@k = Σ_{i ≤ k} gain(d_i) / log2(i + 1), IDCG@k the same
    over all judged documents of the query sorted by gain (the ideal ranking). Gain is
    the grade by default (trec_eval, ir_measures); see ``gain``. With binary grades it is
    rectools' NDCG(divide_by_achievable=True) (its default divides by the IDCG of k relevant
    items). Undefined when IDCG = 0 (no judged document with positive gain)."""
    top = r.top_rows(m.cutoff)
    dcg = r.sum_rows(top, gain(m, r.grade[top]) / np.log2(r.pos[top] + 2.0))
    idcg = _ideal_dcg(r, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), np.nan)


def _ideal_dcg(r: Ranking, m: Measure) -> np.ndarray:
    """IDCG@k per query from its count of judgments per grade: grade levels in the ideal
    order (gain descending) fill positions one block after another, and a block over
    positions [a, b) adds gain · (D(b) − D(a)), D(n) = Σ_{i < n} 1 / log2(i + 2), D capped at
    k."""
    levels = np.arange(r.max_grade + 1, dtype=float)
    gains = gain(m, levels)
    order = np.argsort(-gains, kind="stable")
    order = order[gains[order] > 0]
    counts = r.grade_counts()[:, order]
    ends = np.cumsum(counts, axis=1)
    cap = int(ends[:, -1].max(initial=0)) if m.cutoff is None else m.cutoff
    cum = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(cap) + 2.0))]
    begins, ends = np.minimum(ends - counts, cap), np.minimum(ends, cap)
    return ((cum[ends] - cum[begins]) * gains[order]).sum(axis=1)


@measure("Rprec", cutoff="none", trec=plain_only(lambda m: "Rprec"), options=JUDGED_ONLY,
         bounds=UNIT)
@condensable
def r_precision(r: Ranking, m: Measure) -> np.ndarray:
    """Rprec = |R ∩ S_|R|| / |R|: precision at rank |R|. Undefined when |R| = 0."""
    rows = r.relevant_rows(m.rel)
    return _over_relevant(r, r.sum_rows(rows[r.pos[rows] < r.n_rel(m.rel)[r.q[rows]]]), m.rel)


# trec_eval's iprec_at_recall levels: the points of the standard precision–recall curve
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


# per ranking object and rel: the precision at each relevant row, shared by the recall levels
_AT_HITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _precision_at_hits(r: Ranking, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(|R ∩ S_pos| / pos at each relevant row in row order; per query, the index of its first
    relevant row among them; per query, how many there are)."""
    cached = _AT_HITS.setdefault(r, {})
    if rel not in cached:
        hits = r.relevant_rows(rel)
        precision_at_hit = r.ordinal(hits) / (r.pos[hits] + 1.0)
        hit_q = r.q[hits]
        start = np.zeros(r.nq, np.int64)
        head = np.flatnonzero(np.r_[True, hit_q[1:] != hit_q[:-1]][: len(hits)])
        start[hit_q[head]] = head
        cached[rel] = precision_at_hit, start, np.bincount(hit_q, minlength=r.nq)
    return cached[rel]


@measure("IPrec", bounds=UNIT, cutoff="none", options={"recall": proportion(), **JUDGED_ONLY},
         trec=plain_only(lambda m: f"iprec_at_recall_{option(m, 'recall'):.2f}"))
@condensable
def interpolated_precision(r: Ranking, m: Measure) -> np.ndarray:
    """IPrec@x = max {|R ∩ S_i| / i : |R ∩ S_i| ≥ max(c, 1)} over the whole ranking, 0 when
    fewer than c relevant documents are ranked, with c = ⌊x·|R| + 0.9⌋: interpolated
    precision at recall level x ∈ [0, 1], the best precision at any rank whose recall
    reaches x. c is trec_eval's count of relevant documents for recall x (pytrec_eval,
    trec_eval 9): ⌈x·|R|⌉ unless x·|R| lies within 0.1 above an integer; trec_eval 10 rounds
    x·|R| to the nearest integer instead. The 11 levels 0.0, 0.1, …, 1.0 (trec_eval's
    iprec_at_recall) draw the precision–recall curve. Undefined when |R| = 0."""
    x = option(m, "recall")
    if x is None:
        raise InputError("IPrec needs a recall level, e.g. IPrec@0.5", m.name)
    precision_at_hit, start, n_hit = _precision_at_hits(r, m.rel)
    need = np.maximum(np.floor(x * r.n_rel(m.rel) + 0.9), 1).astype(np.int64)
    reached = np.flatnonzero(need <= n_hit)
    reached = reached[np.argsort(start[reached], kind="stable")]  # in row order: one pass
    out = np.zeros(r.nq)
    if len(reached):  # the best precision from the need-th hit to the query's last
        bounds = np.empty(2 * len(reached), np.int64)
        bounds[0::2] = start[reached] + need[reached] - 1
        bounds[1::2] = start[reached] + n_hit[reached]
        out[reached] = np.maximum.reduceat(np.r_[precision_at_hit, 0.0], bounds)[0::2]
    return _over_relevant(r, out, m.rel, np.ones(r.nq))


@measure("Bpref", bounds=UNIT, cutoff="none", trec=lambda m: "bpref")
def bpref(r: Ranking, m: Measure) -> np.ndarray:
    """Bpref = (1/|R|) Σ_{d ∈ R retrieved} (1 − min(n_d, |R|) / min(N, |R|)), where n_d is
    the number of judged non-relevant documents ranked above d and N the number of judged
    non-relevant documents (0 ≤ grade < rel); a term with n_d = 0 is 1. Unjudged
    documents and negative grades are skipped, as in trec_eval. Undefined when |R| = 0."""
    rel = r.relevant(m.rel)
    nonrel = (r.grade >= 0) & (r.grade < m.rel)
    above = r.running(nonrel)  # a relevant row is not non-relevant: counts those above it
    n_rel, n_nonrel = r.n_rel(m.rel)[r.q], r.n_nonrel(m.rel)[r.q]
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(above > 0, 1.0 - np.minimum(above, n_rel) / np.minimum(n_nonrel, n_rel),
                        1.0)
    # added in rank order as trec_eval adds: a sum at an exact half rounds as it prints
    return _over_relevant(r, r.per_query_in_order(np.where(rel, term, 0.0)), m.rel)


@measure("Judged", bounds=UNIT, cutoff="required", params=())
def judged(r: Ranking, m: Measure) -> np.ndarray:
    """Judged@k = |{d ∈ S_k : d has a judgment of any grade}| / k (as ir_measures):
    unjudged is not irrelevant, so this says how far the other figures can be trusted.
    Undefined for a query without any judgment (nobody judged it: there is nothing to cover),
    so its mean runs over the judged queries, as ir_measures' over the qrels' queries."""
    return np.where(r.n_judged() > 0, r.per_query(r.judged & r.top(m.cutoff)) / m.cutoff,
                    np.nan)


@measure("HardNeg", cutoff="required", params=(), better="lower", available=has_hard_negatives,
         bounds=UNIT)
def hard_negative_rate(r: Ranking, m: Measure) -> np.ndarray:
    """HardNeg@k = |{d ∈ S_k : d is judged a hard negative}| / k, with k fixed even when fewer
    than k documents are returned (as P@k): the share of the top k taken by documents the
    qrels mark ``hard_negative`` (judged not relevant and deliberately close to a relevant
    one). Lower is better; shown beside P@k, it says whether precision is lost to near
    misses. Undefined for a query without judgments. Not applicable when the qrels mark no
    hard negative (no column, or none marked): it would be 0 whatever the ranking."""
    top = r.top_rows(m.cutoff)
    return np.where(r.n_judged() > 0, r.sum_rows(top[r.hard[top]]) / m.cutoff, np.nan)


@measure("NumRet", cutoff="none", params=(), aggregate="sum", options=JUDGED_ONLY,
         trec=plain_only(lambda m: "num_ret"))
@condensable
def num_ret(r: Ranking, m: Measure) -> np.ndarray:
    """NumRet = number of ranked documents. Summed over queries, as trec_eval."""
    return r.n_ret.astype(float)


@measure("NumRel", cutoff="none", aggregate="sum", trec=lambda m: "num_rel")
def num_rel(r: Ranking, m: Measure) -> np.ndarray:
    """NumRel = |R|. Summed over queries, as trec_eval."""
    return r.n_rel(m.rel)


@measure("NumRelRet", cutoff="none", aggregate="sum", trec=lambda m: "num_rel_ret")
def num_rel_ret(r: Ranking, m: Measure) -> np.ndarray:
    """NumRelRet = |R ∩ ranking|. Summed over queries, as trec_eval."""
    return r.sum_rows(r.relevant_rows(m.rel))


# the user-model families (cascade: ERR, RBP) and the recommendation ones register in the same
# registry, after the relevance ones
from releval.metrics import (  # noqa: E402, F401
    beyond,
    calibration,
    cascade,
    exposure,
    propensity,
    user_auc,
)
