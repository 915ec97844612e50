"""Exposure over the catalogue: how a system spreads its top k across the items.

Over the users with at least one positive (the engine's undefined rule; n counts them, an
empty ranking included): c_i = the number of those users whose S_k holds item i, for every
item i of the catalogue C = the items visible at those users' cuts (count 0 included; items
outside C are not counted). One value per system; they need the catalogue
(``releval.metrics.catalog``) and are not applicable without it.
"""

from __future__ import annotations

import numpy as np

from releval.metrics.ranking import Ranking
from releval.metrics.registry import UNIT, Pooled, has_catalog, measure
from releval.metrics.spec import Measure


def counts(r: Ranking, m: Measure) -> tuple[np.ndarray, np.ndarray]:
    """(c_i for each catalogue item i ∈ C, the users counted)."""
    users = r.n_rel(m.rel) > 0
    catalog = r.catalog
    cuts = np.unique(catalog.query_cut[r.query_code[users]])
    in_catalogue = catalog.visible[cuts].any(axis=0)
    rows = r.top(m.cutoff) & users[r.q] & (r.item >= 0)
    c = np.bincount(r.item[rows], minlength=len(catalog.items))
    return c[in_catalogue].astype(float), users


@measure("Coverage", cutoff="required", params=(), level="system", available=has_catalog,
         bounds=UNIT)
def coverage(r: Ranking, m: Measure) -> Pooled:
    """Coverage@k = |{i ∈ C : c_i > 0}| / |C|: the share of the catalogue some user is
    shown in the top k. rectools' CatalogCoverage(normalize=True) and recommenders'
    catalog_coverage divide by their catalogue (given / the training items) and count every
    recommended item; they agree when that catalogue is C. Undefined when C is empty."""
    c, users = counts(r, m)
    return Pooled(float((c > 0).sum() / len(c)) if len(c) and users.any() else np.nan, users)


@measure("Gini", bounds=UNIT, cutoff="required", params=(), level="system", better="lower",
         available=has_catalog)
def gini(r: Ranking, m: Measure) -> Pooled:
    """Gini@k = Σ_{j=1..n} (2j − n − 1) c_(j) / (n Σ_i c_i), c_(1) ≤ … ≤ c_(n) the counts
    sorted ascending, n = |C| (the sorted-index form; equal to Σ_i Σ_j |c_i − c_j| /
    (2 n Σ c)): 0 when every item is shown equally often, (n − 1)/n when one item takes all.
    Undefined when Σ c = 0."""
    c, users = counts(r, m)
    n, total = len(c), c.sum()
    if total == 0:
        return Pooled(np.nan, users)
    j = np.arange(1, n + 1)
    return Pooled(float(((2 * j - n - 1) * np.sort(c)).sum() / (n * total)), users)


@measure("Entropy", cutoff="required", params=(), level="system", available=has_catalog)
def entropy(r: Ranking, m: Measure) -> Pooled:
    """Entropy@k = −Σ_{i ∈ C} p_i log2 p_i, p_i = c_i / Σ c (0 log 0 = 0), in bits: log2 |C|
    when every item is shown equally often. Equals recommenders' distributional_coverage
    when C holds every recommended item. Undefined when Σ c = 0."""
    c, users = counts(r, m)
    if c.sum() == 0:
        return Pooled(np.nan, users)
    p = c[c > 0] / c.sum()
    return Pooled(float(-(p * np.log2(p)).sum()), users)
