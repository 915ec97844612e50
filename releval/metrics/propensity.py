"""Propensity-scored measures for the long tail (Jain, Prabhu and Varma, KDD 2016, "Extreme
Multi-label Loss Functions for Recommendation, Tagging, Ranking & Other Missing Label
Applications"; notation of ``releval.metrics.measures``; a query is a user u at a cut t).

A hit on item l counts 1 / p_l, its inverse propensity at the cut
(``releval.metrics.catalog.inverse_propensity``: 1 / p_l = 1 + C (N_l + B)^{−A},
C = (ln N − 1)(B + 1)^A, N_l the users who bought l before t, N the users who bought anything
before t; options ``A`` = 0.55 and ``B`` = 1.5, the paper's defaults), so a hit on a rarely
bought item counts more than one on a best seller. As pyxclib's ``psprecision`` and
``psndcg`` (the Extreme Classification Repository's reference code), each is normalised by
the best a ranking could achieve, the user's positives ranked by 1 / p descending, as a
ratio of sums over the users: one value per system, in [0, 1]. The users counted are those
with a positive whose cut has N ≥ 3; a user's empty ranking counts 0.
"""

from __future__ import annotations

import numpy as np

from releval.metrics.ranking import Ranking
from releval.metrics.registry import Needs, Pooled, measure, option, positive
from releval.metrics.spec import Measure

OPTIONS = {"A": positive(0.55), "B": positive(1.5)}
_available = Needs(lambda r, m: r.catalog is not None,
                   "the evaluation has no item catalogue (the training popularity) for it")


def _discount(position: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(position + 2.0)


def _parts(r: Ranking, m: Measure, discount) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: Σ_{hits in the top k} discount(position) / p, the best such sum (the
    positives by 1 / p descending in the first k positions), and whether it counts."""
    a, b, k = option(m, "A"), option(m, "B"), m.cutoff
    catalog = r.catalog
    cut = catalog.query_cut[r.query_code]
    hits = r.relevant_rows(m.rel, k)
    weight = catalog.inverse_propensity(cut[r.q[hits]], r.item[hits], a, b)
    got = r.sum_rows(hits, weight * discount(r.pos[hits]))
    positive_ = np.flatnonzero(r.qrels_grade >= m.rel)
    query = r.qrels_q[positive_]
    best_weight = catalog.inverse_propensity(cut[query], r.qrels_item[positive_], a, b)
    order = np.lexsort((-best_weight, query))
    query, best_weight = query[order], best_weight[order]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else query
    place = np.arange(len(query)) - np.repeat(starts, np.diff(np.r_[starts, len(query)]))
    keep = place < k
    best = np.bincount(query[keep], weights=best_weight[keep] * discount(place[keep]),
                       minlength=r.nq)
    counted = (r.n_rel(m.rel) > 0) & (catalog.buyers[cut] >= 3)
    return np.where(counted, got, 0.0), np.where(counted, best, 0.0), counted


def _ratio(got: np.ndarray, best: np.ndarray, counted: np.ndarray) -> Pooled:
    total = best.sum()
    return Pooled(float(got.sum() / total) if total > 0 else np.nan, counted)


@measure("PSP", cutoff="required", params=("rel",), options=OPTIONS, level="system",
         available=_available)
def psp(r: Ranking, m: Measure) -> Pooled:
    """PSP(A, B)@k = [Σ_u Σ_{i ∈ S_k(u) ∩ R_u} 1 / p_i] / [Σ_u Σ_{i ∈ B_k(u)} 1 / p_i]: the
    propensity-scored precision (Jain et al. 2016; its (1/k) and the mean over users cancel),
    normalised by the best achievable, B_k(u) the k positives of u with the largest 1 / p_i
    (all of them when fewer), as pyxclib's psprecision. 1 / p_i = 1 + C (N_i + B)^{−A},
    C = (ln N − 1)(B + 1)^A, N_i the users who bought i before the cut, N those who bought
    anything (A = 0.55, B = 1.5 by default). Summed over the users with a positive whose cut
    has N ≥ 3; undefined when there is none."""
    return _ratio(*_parts(r, m, lambda position: 1.0))


@measure("PSnDCG", cutoff="required", params=("rel",), options=OPTIONS, level="system",
         available=_available)
def psndcg(r: Ranking, m: Measure) -> Pooled:
    """PSnDCG(A, B)@k = [Σ_u PSDCG_u@k / Z_u] / [Σ_u PSDCG*_u@k / Z_u], PSDCG_u@k =
    Σ_{i ∈ S_k(u) ∩ R_u} (1 / p_i) / log2(pos_i + 1), PSDCG*_u@k the same over the best
    ranking (u's positives by 1 / p_i descending), Z_u = Σ_{j ≤ min(k, |R_u|)} 1 / log2(j + 1)
    (the binary IDCG): the propensity-scored nDCG, normalised by the best achievable as
    pyxclib's psndcg, with 1 / p_i, the users and the defaults of PSP."""
    got, best, counted = _parts(r, m, _discount)
    z = np.cumsum(_discount(np.arange(m.cutoff)))[np.clip(r.n_rel(m.rel).astype(int), 1,
                                                            m.cutoff) - 1]
    return _ratio(got / z, best / z, counted)
