"""How far judges agree: quadratic-weighted Cohen's kappa per judge pair, Krippendorff's alpha
(interval) and the grade confusion table, over the items judges share."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.judging.agreement_auto import kappa as weighted_kappa
from releval.judging.ingest import checked_grades

PAIR = [S.QUERY_ID, S.DOC_ID]


def agreement(judgments: pd.DataFrame, max_grade: int = 3, low: float = 0.4) -> dict:
    """How far judges agree on the (query_id, doc_id) items they share; JSON-ready.

    - ``pairs``: per annotator pair, n shared items and quadratic-weighted Cohen's kappa
      (labels 0..max_grade, as scikit-learn's ``cohen_kappa_score``), κ = 1 − Σ w·O / Σ w·E
      with w = (i − j)². κ is None when n < 2 or when every shared grade is the same (E = 0);
      it is never defaulted to 0. A constant judge against a varying one has a defined κ of 0.
    - ``mean_pairwise_kappa_weighted``: Σ n_ab κ_ab / Σ n_ab over the pairs with a κ.
    - ``krippendorff_alpha_interval``: see ``krippendorff_alpha_interval``.
    - ``confusion``: counts[a][b] = ordered pairs of different judges on one item with grades
      (a, b); each judge pair is counted in both orders, so the table is symmetric and sums to
      2 × Σ_items m(m − 1)/2 for m judges per item.
    - ``low_agreement``: the pairs with κ < ``low``.
    """
    judged = checked_grades(judgments, max_grade)
    wide = judged.pivot(index=PAIR, columns=S.ANNOTATOR, values=S.GRADE)
    labels = list(range(max_grade + 1))
    pairs = [_kappa(wide[a], wide[b], labels) for a, b in itertools.combinations(wide.columns, 2)]
    defined = [p for p in pairs if p["kappa"] is not None]
    weight = sum(p["n"] for p in defined)
    counts = _unit_counts(judged, max_grade)
    confusion = counts.T @ counts - np.diag(counts.sum(axis=0))
    return {
        "max_grade": max_grade, "judges": len(wide.columns), "items": len(wide),
        "items_with_2_or_more_judges": int((counts.sum(axis=1) >= 2).sum()),
        "pairs": pairs,
        "mean_pairwise_kappa_weighted":
            sum(p["n"] * p["kappa"] for p in defined) / weight if weight else None,
        "krippendorff_alpha_interval": krippendorff_alpha_interval(counts),
        "confusion": {"grades": labels, "counts": confusion.astype(int).tolist()},
        "low": low, "low_agreement": [p for p in defined if p["kappa"] < low],
    }


def _kappa(a: pd.Series, b: pd.Series, labels: list[int]) -> dict:
    shared = a.notna() & b.notna()
    x, y = a[shared].astype(int), b[shared].astype(int)
    defined = len(x) >= 2 and pd.concat([x, y]).nunique() > 1
    confusion = np.zeros((len(labels), len(labels)))
    np.add.at(confusion, (x.to_numpy(), y.to_numpy()), 1)
    kappa = float(weighted_kappa(confusion, "quadratic")) if defined else None
    return {"annotator_a": str(a.name), "annotator_b": str(b.name), "n": int(shared.sum()),
            "kappa": kappa}


def _unit_counts(judged: pd.DataFrame, max_grade: int) -> np.ndarray:
    """items × grades: counts[u, g] = judges who gave item u grade g."""
    unit = judged.groupby(PAIR).ngroup().to_numpy()
    counts = np.zeros((unit.max() + 1 if len(unit) else 0, max_grade + 1), dtype=np.int64)
    np.add.at(counts, (unit, judged[S.GRADE].to_numpy()), 1)
    return counts


def krippendorff_alpha_interval(counts: np.ndarray) -> float | None:
    """Krippendorff's alpha, interval metric, from counts[u, c] = judges giving item u value c.

    Coincidence matrix over the items with m_u ≥ 2 values (the others are not pairable):
    o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1);  n_c = Σ_k o_ck;  n = Σ_c n_c.
    D_o = Σ o_ck δ²_ck / n,  D_e = Σ n_c n_k δ²_ck / (n (n − 1)),  δ²_ck = (c − k)²,
    α = 1 − D_o / D_e; None when n < 2 or D_e = 0 (no variation at all).
    """
    m = counts.sum(axis=1)
    pairable, m = counts[m >= 2], m[m >= 2]
    scaled = pairable / (m - 1)[:, None]
    coincidence = scaled.T @ pairable - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    values = np.arange(counts.shape[1])
    delta = (values[:, None] - values[None, :]) ** 2.0
    expected = (np.outer(n_c, n_c) * delta).sum() / (n * (n - 1)) if n >= 2 else 0.0
    if expected == 0:
        return None
    return float(1 - (coincidence * delta).sum() / n / expected)
