"""How far an automatic judge agrees with people, on the (query_id, doc_id) pairs both judged:
the confusion of grades (human × automatic), Cohen's weighted κ (linear, quadratic) and
Krippendorff's α (ordinal, interval), overall and per query, with bootstrap CIs over queries.
(``agreement.py`` holds the human judges' agreement with each other.)

Everything is computed from confusion tables C (grades 0..max_grade; C[h, a] = pairs the
human graded h and the judge a), so a table per query summed with bootstrap weights gives
every resample at once (``releval.resample``: queries redrawn with replacement).

- Cohen's weighted κ: with n = Σ C, row sums r, column sums c and weights w_ha = |h − a|
  (linear) or (h − a)² (quadratic), κ = 1 − Σ w C / (Σ w r cᵀ / n) (scikit-learn's
  ``cohen_kappa_score(weights=...)``).
- Krippendorff's α with two coders per pair: the coincidence matrix is o = C + Cᵀ, n_g its
  row sums, n = Σ n_g; α = 1 − (n − 1) Σ o δ² / Σ n_c n_k δ²_ck, with the interval
  δ²_ck = (c − k)² and the ordinal δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² (the
  ``krippendorff`` package's levels).
- Undefined is not zero: a figure whose denominator is 0 (one grade only on both sides) is
  None overall and NaN per query; a bootstrap resample where it is undefined is left out
  and counted. CIs: percentile intervals over ``resamples`` query resamples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.resample import percentile, query_counts

PAIR = [S.QUERY_ID, S.DOC_ID]
KAPPA_WEIGHTS = {"linear": lambda d: np.abs(d), "quadratic": lambda d: d ** 2.0}
ALPHA_LEVELS = ("ordinal", "interval")


def kappa(confusion: np.ndarray, weights: str) -> np.ndarray:
    """Cohen's weighted κ of (…, G, G) confusion tables (module docstring); NaN where the
    expected disagreement is 0."""
    grades = np.arange(confusion.shape[-1])
    w = KAPPA_WEIGHTS[weights](grades[:, None] - grades[None, :])
    n = confusion.sum((-1, -2))
    expected = (w * confusion.sum(-1)[..., :, None] * confusion.sum(-2)[..., None, :]).sum(
        (-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 - (w * confusion).sum((-1, -2)) * n / expected


def krippendorff_alpha(confusion: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's α of two coders from (…, G, G) confusion tables (module docstring);
    NaN where the expected disagreement is 0."""
    o = confusion + np.swapaxes(confusion, -1, -2)
    n_g = o.sum(-1)
    n = n_g.sum(-1)
    if level == "interval":
        grades = np.arange(o.shape[-1])
        delta = ((grades[:, None] - grades[None, :]) ** 2.0) * np.ones_like(o, dtype=float)
    elif level == "ordinal":
        cum = np.cumsum(n_g, -1)
        delta = (cum[..., None, :] - cum[..., :, None]
                 + (n_g[..., :, None] - n_g[..., None, :]) / 2) ** 2
    else:
        raise InputError(f"level must be one of {', '.join(ALPHA_LEVELS)}, got {level!r}")
    expected = (n_g[..., :, None] * n_g[..., None, :] * delta).sum((-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 - (n - 1) * (o * delta).sum((-1, -2)) / expected


def _labels(frame: pd.DataFrame, name: str, max_grade: int) -> pd.DataFrame:
    """(query_id, doc_id, grade) with ids as str and integer grades in 0..max_grade, one per
    pair; InputError naming the first row that breaks a rule."""
    S.require_columns(frame, (*PAIR, S.GRADE), name)
    for column in PAIR:
        S.ids(frame, column, name)
    grade = pd.to_numeric(frame[S.GRADE], errors="coerce").to_numpy(float)
    S.fail_first(frame, name, ~((grade >= 0) & (grade <= max_grade) & (grade == np.floor(grade))),
                 lambda i: f"grade must be an integer in 0..{max_grade}, got "
                           f"{frame[S.GRADE].tolist()[i]!r}")
    out = pd.DataFrame({S.QUERY_ID: frame[S.QUERY_ID].astype(str).to_numpy(),
                        S.DOC_ID: frame[S.DOC_ID].astype(str).to_numpy(),
                        S.GRADE: grade.astype(np.int64)})
    S.fail_first(frame, name, out.duplicated(PAIR).to_numpy(),
                 lambda i: f"pair ({out[S.QUERY_ID].iloc[i]!r}, {out[S.DOC_ID].iloc[i]!r}) "
                           "is graded twice")
    return out


def _figure(value: float, resampled: np.ndarray, alpha: float) -> dict:
    low, high, undefined = percentile(resampled, alpha)
    return {"value": None if np.isnan(value) else float(value), "ci_low": low,
            "ci_high": high, "undefined_resamples": undefined}


def _statistics(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """Every agreement figure of (…, G, G) tables, by its per-query column name."""
    return {**{f"kappa_{w}": kappa(confusion, w) for w in KAPPA_WEIGHTS},
            **{f"alpha_{level}": krippendorff_alpha(confusion, level)
               for level in ALPHA_LEVELS}}


def agreement(human: pd.DataFrame, auto: pd.DataFrame, *, max_grade: int,
              resamples: int = 1000, alpha: float = 0.05, seed: int = 0) -> dict:
    """Agreement of ``auto`` with ``human`` (each: query_id, doc_id, grade; one grade per
    pair) on the pairs both judged (module docstring).

    Returns ``max_grade``, ``pairs`` (both judged), ``queries`` (with such a pair),
    ``human_only_pairs`` / ``automatic_only_pairs`` (judged by one side only, not compared),
    ``confusion`` ({grades, rows: "human", columns: "automatic", counts}), ``exact`` (share
    of pairs with the same grade), ``mean_difference`` (mean automatic − human grade: the
    judge's bias in grades), ``kappa`` {linear, quadratic} and ``alpha`` {ordinal, interval},
    each {value, ci_low, ci_high, undefined_resamples}; ``per_query``: a frame (query_id,
    pairs, exact, mean_difference, kappa_linear, kappa_quadratic, alpha_ordinal,
    alpha_interval); resamples, ci_alpha (the CIs' level is 1 − ci_alpha) and seed.
    """
    h, a = _labels(human, "human", max_grade), _labels(auto, "automatic", max_grade)
    both = h.merge(a, on=PAIR, suffixes=("_human", "_automatic"))
    if both.empty:
        raise InputError("no (query_id, doc_id) pair is judged by both people and the judge",
                         "automatic")
    g = max_grade + 1
    query, queries = pd.factorize(both[S.QUERY_ID], sort=True)
    gh, ga = both[f"{S.GRADE}_human"].to_numpy(), both[f"{S.GRADE}_automatic"].to_numpy()
    per_query = np.bincount(query * g * g + gh * g + ga,
                            minlength=len(queries) * g * g).reshape(len(queries), g, g)
    total = per_query.sum(0)
    resampled = np.tensordot(query_counts(len(queries), resamples, seed), per_query, axes=1)
    overall, boot = _statistics(total), _statistics(resampled)
    same = np.bincount(query, weights=gh == ga, minlength=len(queries))
    sizes = np.bincount(query, minlength=len(queries))
    table = pd.DataFrame({S.QUERY_ID: np.asarray(queries, dtype=object), "pairs": sizes,
                          "exact": same / sizes,
                          "mean_difference": np.bincount(query, weights=ga - gh) / sizes,
                          **_statistics(per_query.astype(float))})
    return {
        "max_grade": max_grade, "pairs": len(both), "queries": len(queries),
        "human_only_pairs": len(h) - len(both), "automatic_only_pairs": len(a) - len(both),
        "confusion": {"grades": list(range(g)), "rows": "human", "columns": "automatic",
                      "counts": total.astype(int).tolist()},
        "exact": float((gh == ga).mean()), "mean_difference": float((ga - gh).mean()),
        "kappa": {w: _figure(overall[f"kappa_{w}"], boot[f"kappa_{w}"], alpha)
                  for w in KAPPA_WEIGHTS},
        "alpha": {level: _figure(overall[f"alpha_{level}"], boot[f"alpha_{level}"], alpha)
                  for level in ALPHA_LEVELS},
        "per_query": table,
        "resamples": int(resamples), "ci_alpha": float(alpha), "seed": int(seed),
    }
