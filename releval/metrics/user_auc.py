"""AUC per user and GAUC: how far up a user's ranking puts the user's positives, against
negatives (notation of ``releval.metrics.measures``; a query is a user at a cut)."""

from __future__ import annotations

import numpy as np

from releval.metrics.ranking import Ranking
from releval.metrics.registry import UNIT, Pooled, measure
from releval.metrics.spec import Measure


def user_auc(r: Ranking, m: Measure) -> np.ndarray:
    """Per query: the AUC of its ranking (see ``auc``); NaN where undefined."""
    positive = r.relevant(m.rel)
    n_pos = r.n_rel(m.rel)
    catalog = r.catalog
    if catalog is None or catalog.negatives == "window":
        negative = ~positive
        n_neg = r.per_query(negative)
        outside_neg = np.zeros(r.nq)
    else:
        negative = catalog.in_sample(r.query_code[r.q], r.item) & ~positive
        judged_positive = (r.qrels_grade >= m.rel) & catalog.in_sample(
            r.query_code[r.qrels_q], r.qrels_item)
        n_neg = catalog.sample_sizes(r.query_code) - np.bincount(
            r.qrels_q, weights=judged_positive, minlength=r.nq)
        outside_neg = n_neg - r.per_query(negative)
    below = (n_neg - outside_neg)[r.q] - r.running(negative)  # window negatives under the row
    wins = r.per_query(np.where(positive, below + outside_neg[r.q], 0.0))
    wins += 0.5 * (n_pos - r.per_query(positive)) * outside_neg  # outside: ties, ½ each
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((n_pos > 0) & (n_neg > 0), wins / (n_pos * n_neg), np.nan)


@measure("AUC", bounds=UNIT, cutoff="none")
def auc(r: Ranking, m: Measure) -> np.ndarray:
    """AUC = (1 / (|R|·|N|)) Σ_{p ∈ R} Σ_{n ∈ N} ([s(p) > s(n)] + ½ [s(p) = s(n)]): the
    user's ROC AUC, positives R against negatives N, over the whole window. s is the
    position (higher up scores higher); items outside the window score below every window
    item and tie with each other. N: the window's items not in R (``recommend.negatives:
    window``, and always without a catalogue), or the catalogue's seeded sample of
    ``n_negatives`` items of the catalogue at the cut that the user never bought, less R
    (``sample``; ``Catalog.sample``). Undefined when |R| = 0 or |N| = 0. Equals
    scikit-learn's roc_auc_score on the user's (label, score) pairs; in window mode it equals
    rectools' PartialAUC@k where each window holds exactly k negatives (rectools keeps only
    the top k negatives)."""
    return user_auc(r, m)


@measure("GAUC", bounds=UNIT, cutoff="none", level="system")
def gauc(r: Ranking, m: Measure) -> Pooled:
    """GAUC = Σ_u |R_u| AUC_u / Σ_u |R_u| over the users u whose AUC is defined: the
    per-user AUC (``AUC``, same negatives) weighted by the user's number of positives (the
    GAUC of Zhou et al. 2018 weights by impressions or clicks; here the positives are the
    user's purchases). One value per system; n: users with an AUC."""
    per_user = user_auc(r, m)
    defined = ~np.isnan(per_user)
    weight = np.where(defined, r.n_rel(m.rel), 0.0)
    value = float((weight * np.where(defined, per_user, 0.0)).sum() / weight.sum()) \
        if weight.sum() > 0 else np.nan
    return Pooled(value, defined)
