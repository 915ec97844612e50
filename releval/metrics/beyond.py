"""Beyond-accuracy measures per user: how new, varied, unpopular and unexpected a user's top k
is (notation of ``releval.metrics.measures``; a query is a user u at a cut t).

They need the catalogue (``releval.metrics.catalog``: popularity, embeddings, co-occurrence
and the expected system at each cut) and are not applicable without it. Each is undefined
where the user has no positive (the engine's rule), so every per-user mean is over the same
users. Items unknown to the catalogue count as never bought and have no vector.
"""

from __future__ import annotations

import numpy as np

from releval.metrics.ranking import Ranking
from releval.metrics.registry import (
    UNIT,
    Needs,
    defined_only,
    has_catalog,
    measure,
    one_of,
    option,
    share,
)
from releval.metrics.spec import Measure


def _mean_over_top(r: Ranking, m: Measure, per_row: np.ndarray) -> np.ndarray:
    """Per query: the mean of ``per_row`` over S_k; NaN when S_k is empty or |R| = 0."""
    top = r.top(m.cutoff)
    size = r.per_query(top)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(size > 0, r.per_query(np.where(top, per_row, 0.0)) / size, np.nan)
    return defined_only(r, m, mean)


def _row_cut(r: Ranking) -> np.ndarray:
    return r.catalog.query_cut[r.query_code[r.q]]


@measure("Novelty", cutoff="required", params=(), available=has_catalog)
def novelty(r: Ranking, m: Measure) -> np.ndarray:
    """Novelty@k = (1/|S_k|) Σ_{i ∈ S_k} −log2 p(i), p(i) = |U_i| / |U|: U the users with a
    label-1 interaction before the cut, U_i those of them with one with i. An item nobody
    bought before the cut (p(i) = 0) counts as bought by one user, p(i) = 1/|U| (as
    rectools' MeanInvUserFreq, which divides by k where S_k is shorter; recommenders'
    novelty uses interaction shares |U_i| / Σ_j |U_j| instead, a constant offset).
    Undefined when S_k is empty or |U| = 0."""
    catalog, cut = r.catalog, _row_cut(r)
    buyers = catalog.buyers[cut]
    users = np.where(r.item >= 0, catalog.popularity[cut, np.maximum(r.item, 0)], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        info = np.where(buyers > 0, -np.log2(np.maximum(users, 1.0) / buyers), np.nan)
    return _mean_over_top(r, m, info)


@measure("LongTail", bounds=UNIT, cutoff="required", params=(), options={"head": share(0.2)},
         available=has_catalog)
def long_tail(r: Ranking, m: Measure) -> np.ndarray:
    """LongTail(head)@k = |S_k \\ H_t| / |S_k|: the share of the top k outside the head H_t,
    the ⌊head · |C_t|⌉ (rounded; head defaults to 0.2) items of the catalogue C_t at the cut
    with the most buyers before it, ties by item_id ascending. Undefined when S_k is
    empty."""
    head = r.catalog.head(option(m, "head"))
    in_head = np.where(r.item >= 0, head[_row_cut(r), np.maximum(r.item, 0)], False)
    return _mean_over_top(r, m, (~in_head).astype(float))


_has_expected = Needs(lambda r, m: r.catalog is not None and r.catalog.expected is not None,
                      "the evaluation has no expected system's top k for it")


@measure("Serendipity", bounds=UNIT, cutoff="required", available=_has_expected)
def serendipity(r: Ranking, m: Measure) -> np.ndarray:
    """Serendipity@k = |{i ∈ S_k ∩ R : i ∉ E_k(u)}| / k: the relevant items of the top k
    that the expected system (``recommend.expected``, by default the popularity system) does
    not have in its top k E_k(u) for the user (relevant and unexpected, after Ge et al. 2010).
    rectools' Serendipity (rank against popularity rank) and recommenders' (dissimilarity to
    the user's history) define it otherwise. Not applicable without an expected system."""
    top = r.top(m.cutoff) & r.relevant(m.rel)
    expected = r.catalog.in_expected(r.query_code[r.q], r.item, m.cutoff)
    return defined_only(r, m, r.per_query(top & ~expected) / m.cutoff)


_ild_available = Needs(lambda r, m: r.catalog is not None and (
    option(m, "space") == "cooccurrence" or r.catalog.embeddings is not None),
    "the evaluation has no item catalogue (or item embeddings) for it")


@measure("ILD", cutoff="required", params=(),
         options={"space": one_of("embedding", "cooccurrence")}, available=_ild_available)
def ild(r: Ranking, m: Measure) -> np.ndarray:
    """ILD(space)@k = (2 / (|S_k| (|S_k| − 1))) Σ_{i < j ∈ S_k} (1 − cos(v_i, v_j)): the mean
    pairwise distance in the top k. ``space='embedding'`` (default): v_i the item's
    embedding (the first content or dense system's model); ``'cooccurrence'``: v_i the
    item's user-incidence profile before the cut (cos = |U_i ∩ U_j| / √(|U_i| |U_j|)). An
    item without a vector (never bought, unknown) has cos 0 with every item. Undefined when
    |S_k| < 2. Equals recommenders' diversity (item_feature_vector /
    item_cooccurrence_count) per user, and rectools' IntraListDiversity with a 1 − cos
    distance (which scores a list under 2 items 0, not undefined)."""
    import scipy.sparse as sp  # here, not at import: the CLI starts without it

    catalog = r.catalog
    rows = np.flatnonzero(r.top(m.cutoff) & (r.item >= 0))
    shown = sp.csr_matrix((np.ones(len(rows)), (r.q[rows], r.item[rows])),
                          shape=(r.nq, len(catalog.items)))
    size = r.per_query(r.top(m.cutoff))
    if option(m, "space") == "embedding":
        vectors = catalog.unit_embeddings
        total = np.asarray(shown @ vectors)
        summed, own = (total ** 2).sum(axis=1), shown @ (vectors ** 2).sum(axis=1)
    else:  # each query against its own cut's profiles
        cut = catalog.query_cut[r.query_code]
        summed, own = np.zeros(r.nq), np.zeros(r.nq)
        for c, profiles in enumerate(catalog.unit_profiles):
            at = sp.diags((cut == c).astype(float)) @ shown
            total = at @ profiles
            summed += np.asarray(total.multiply(total).sum(axis=1)).ravel()
            own += at @ np.asarray(profiles.multiply(profiles).sum(axis=1)).ravel()
    pairs = size * (size - 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(size >= 2, 1.0 - (summed - own) / 2 / pairs, np.nan)
    return defined_only(r, m, value)
