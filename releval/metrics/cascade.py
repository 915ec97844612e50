"""The user-model measures: ERR (the cascade model) and RBP (the persistence model) with its
residual.

g_i = the grade of the document at position i (unjudged and negative grades: 0); g_max = the
declared scale's top grade (``evaluate(max_grade=...)``, params ``prepare.max_grade``,
``releval metrics --max-grade``), so a document graded g_max is as good as the scale allows.
R = judged documents with grade ≥ rel, as in ``measures``.
"""

from __future__ import annotations

import numpy as np

from releval.metrics.ranking import Ranking
from releval.metrics.registry import UNIT, defined_only, flag, measure, option, share
from releval.metrics.spec import Measure

DEFAULT_MAX_GRADE = 3  # the engine's default scale


def scale_top(r: Ranking) -> int:
    """g_max: the top grade of the declared scale the ranking was built with
    (``Ranking.max_grade``); for a ranking that does not record its scale, the engine's
    default scale or the top judged grade, whichever is higher."""
    declared = getattr(r, "max_grade", None)
    if declared is not None:
        return int(declared)
    return int(max(DEFAULT_MAX_GRADE, np.max(r.qrels_grade, initial=0)))


def _positive_grade(r: Ranking) -> np.ndarray:
    return np.where(r.grade > 0, r.grade, 0.0)  # NaN (unjudged) compares False


@measure("ERR", bounds=UNIT, cutoff="optional", params=())
def expected_reciprocal_rank(r: Ranking, m: Measure) -> np.ndarray:
    """ERR@k = Σ_{i ≤ k} (1/i) R_i Π_{j < i} (1 − R_j), R_i = (2^g_i − 1) / 2^g_max: the
    expected reciprocal rank at which a user who reads down the ranking stops, satisfied by
    the document at i with probability R_i (Chapelle et al. 2009, the cascade model); ERR
    without k uses the whole ranking. g_max is the declared scale's top grade (gdeval, behind
    ir_measures' ERR, fixes g_max = 4: the same value on a 0..4 scale). Undefined when no
    judged document has grade ≥ 1."""
    stop = (np.exp2(_positive_grade(r)) - 1.0) / 2.0 ** scale_top(r)
    n = len(r.q)
    lengths = np.diff(np.r_[r.starts, n])
    by_length = np.argsort(-lengths, kind="stable")  # lists still open at depth d: a prefix
    starts, lengths = r.starts[by_length], lengths[by_length]
    score, reach = np.zeros(len(starts)), np.ones(len(starts))
    depth = int(lengths[0]) if len(lengths) else 0
    for d in range(depth if m.cutoff is None else min(depth, m.cutoff)):
        live = int(np.searchsorted(-lengths, -d, side="left"))  # lists longer than d
        rows = starts[:live] + d
        score[:live] += stop[rows] * reach[:live] / (d + 1.0)
        reach[:live] *= 1.0 - stop[rows]
    out = np.zeros(r.nq)
    out[r.q[starts]] = score
    return defined_only(r, m, out)


def _weights(r: Ranking, m: Measure) -> np.ndarray:
    """(1 − p) p^(i − 1) per row within the cutoff, 0 beyond it."""
    p = option(m, "p")
    return np.where(r.top(m.cutoff), (1.0 - p) * np.power(p, r.pos), 0.0)


@measure("RBP", bounds=UNIT, cutoff="optional", options={"p": share(0.8), "graded": flag(False)})
def rank_biased_precision(r: Ranking, m: Measure) -> np.ndarray:
    """RBP(p)@k = (1 − p) Σ_{i ≤ k} u_i p^(i − 1), u_i = 1 if the document at i is in R else 0
    (ir_measures' RBP(rel=...)), or with graded=True u_i = g_i / g_max (rel then only decides
    which queries are defined); without k the whole ranking (Moffat & Zobel 2008). p = 0.8 by
    default (ir_measures; trec_eval's rbp: 0.9). A user reads on from each document with
    probability p; RBP is the expected utility per document read. Undefined when |R| = 0."""
    u = (_positive_grade(r) / scale_top(r) if option(m, "graded")
         else r.relevant(m.rel).astype(float))
    return defined_only(r, m, r.per_query(_weights(r, m) * u))


@measure("RBP_resid", bounds=UNIT, cutoff="optional", options={"p": share(0.8)}, better="lower")
def rbp_residual(r: Ranking, m: Measure) -> np.ndarray:
    """RBP_resid(p)@k = (1 − p) Σ_{i ≤ n, d_i unjudged} p^(i − 1) + p^n, n = min(k, ranking
    length): how much RBP(p)@k would rise if every unjudged document in the ranking, and
    every document past its end, had the top gain (Moffat & Zobel 2008), so the true RBP lies
    in [RBP, RBP + RBP_resid]. Unjudged = no judgment of grade ≥ 0 (trec_eval reads a negative
    grade as pooled but unjudged). trec_eval's rbp_resid is 0 when no ranked document is
    unjudged (it leaves out p^n). Undefined when |R| = 0."""
    p = option(m, "p")
    unjudged = ~(r.grade >= 0)
    depth = r.n_ret if m.cutoff is None else np.minimum(r.n_ret, m.cutoff)
    return defined_only(r, m, r.per_query(_weights(r, m) * unjudged) + np.power(p, depth))
