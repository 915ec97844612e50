"""Prediction-powered inference (PPI) of a measure's mean over queries: a random sample of
queries judged by people corrects the bias of automatic labels (Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science 382, 2023; the power
tuning of PPI++: Angelopoulos, Duchi & Zrnic, arXiv:2311.01453).

Per query, Y is the measure under human labels and Ŷ under automatic labels. The labelled
set is the human-judged random sample of queries (Y_l, Ŷ_l, n of them), the unlabelled set
the other queries (Ŷ_u, N of them). With a power-tuning λ:

    θ̂_λ = λ · mean(Ŷ_u) + mean(Y_l − λ · Ŷ_l)
    CI   = θ̂_λ ± z_{1−α/2} · sqrt(σ̂²(λ Ŷ_u) / N + σ̂²(Y_l − λ Ŷ_l) / n)

with σ̂² the population variance (ddof 0) and z the standard normal quantile. λ = 1 is the
classic PPI estimate mean(Ŷ_u) − mean(Ŷ_l − Y_l); λ = 0 the human-only mean. ``lam=None``
tunes λ as ppi_py 0.2.3 does by default (``ppi_mean_pointestimate`` / ``ppi_mean_ci`` with
``lam=None``): λ̂ = cov(Y_l, Ŷ_l) / ((1 + n/N) · var(Ŷ_l ∪ Ŷ_u)), the covariance with
ddof 0 over the labelled set and the variance with ddof 1 over all n + N predictions,
clipped to [0, 1]. The interval is valid whatever the judge's bias, as long as the labelled
queries are a uniform random sample of all queries; it is narrow when Ŷ tracks Y.

Every function takes 1-D arrays (one estimate) or 2-D arrays whose rows are independent
problems (e.g. simulated draws), computing along the last axis; values must be finite.

Beside it, for the report: the automatic-only interval over all n + N queries' Ŷ
(mean ± z · sd / √(n + N), sd with ddof 1; it trusts the judge and ignores its bias), and
the human-only interval on the labelled queries (mean(Y_l) ± z · sd / √n). ``intervals``
gives all four from per-query series; ``difference`` gives them for the per-query
difference of two systems (candidate − baseline), the paired comparison a gate can read.
A bounded measure's intervals are clipped to its range (``clipped``: [lo, hi] for a mean,
[lo − hi, hi − lo] for a difference), and each clipped one says so (``clipped: true``).
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import NormalDist

import numpy as np
import pandas as pd

from releval.errors import InputError

Interval = tuple[float | np.ndarray, float | np.ndarray, float | np.ndarray]


def z_value(alpha: float) -> float:
    """The standard normal quantile z_{1−α/2} of a two-sided 1 − α interval."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")
    return NormalDist().inv_cdf(1 - alpha / 2)


def _finite(name: str, values) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim not in (1, 2) or array.shape[-1] < 2:
        raise InputError(f"{name} must hold at least 2 values per problem, got shape "
                         f"{array.shape}")
    if not np.isfinite(array).all():
        raise InputError(f"{name} has NaN or infinite values: leave undefined queries out first")
    return array


def _checked(y, yhat, yhat_u) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, yhat, yhat_u = (_finite(name, v) for name, v in
                       (("y_labelled", y), ("yhat_labelled", yhat),
                        ("yhat_unlabelled", yhat_u)))
    if y.shape != yhat.shape or y.shape[:-1] != yhat_u.shape[:-1]:
        raise InputError(f"labelled Y {y.shape}, Ŷ {yhat.shape} and unlabelled Ŷ "
                         f"{yhat_u.shape} do not align")
    return y, yhat, yhat_u


def tuned_lambda(y_labelled, yhat_labelled, yhat_unlabelled) -> float | np.ndarray:
    """ppi_py's default λ̂ (module docstring): cov₀(Y_l, Ŷ_l) / ((1 + n/N) var₁(Ŷ_l ∪ Ŷ_u)),
    clipped to [0, 1]; 0 when the predictions do not vary."""
    y, yhat, yhat_u = _checked(y_labelled, yhat_labelled, yhat_unlabelled)
    n, big_n = y.shape[-1], yhat_u.shape[-1]
    cov = ((y - y.mean(-1, keepdims=True))
           * (yhat - yhat.mean(-1, keepdims=True))).mean(-1)
    var = np.concatenate([yhat, yhat_u], axis=-1).var(-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var > 0, cov / ((1 + n / big_n) * var), 0.0)
    return _scalar(np.clip(lam, 0.0, 1.0))


def ppi_mean(y_labelled, yhat_labelled, yhat_unlabelled, *, alpha: float = 0.05,
             lam: float | None = 1.0) -> Interval:
    """(θ̂_λ, low, high) of the PPI mean (module docstring); ``lam=None`` tunes λ
    (``tuned_lambda``), a number fixes it (1: classic PPI)."""
    y, yhat, yhat_u = _checked(y_labelled, yhat_labelled, yhat_unlabelled)
    z = z_value(alpha)
    lam_ = tuned_lambda(y, yhat, yhat_u) if lam is None else float(lam)
    lam_ = np.asarray(lam_, dtype=float)[..., None]
    estimate = (lam_ * yhat_u).mean(-1) + (y - lam_ * yhat).mean(-1)
    se = np.sqrt((lam_ * yhat_u).var(-1) / yhat_u.shape[-1]
                 + (y - lam_ * yhat).var(-1) / y.shape[-1])
    return _scalar(estimate), _scalar(estimate - z * se), _scalar(estimate + z * se)


def classical_mean(values, *, alpha: float = 0.05) -> Interval:
    """(mean, low, high): the CLT interval mean ± z · sd / √m (sd with ddof 1) of one sample
    (the automatic-only interval over every query's Ŷ, the human-only one over Y_l)."""
    x = _finite("values", values)
    mean = x.mean(-1)
    half = z_value(alpha) * x.std(-1, ddof=1) / np.sqrt(x.shape[-1])
    return _scalar(mean), _scalar(mean - half), _scalar(mean + half)


def _scalar(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _figure(estimate: float, low: float, high: float, **more) -> dict:
    return {"estimate": float(estimate), "ci_low": float(low), "ci_high": float(high), **more}


def intervals(human: pd.Series, auto: pd.Series, labelled: Iterable, *,
              alpha: float = 0.05) -> dict:
    """One measure's mean four ways, JSON-ready, from per-query values indexed by query_id.

    ``human``: Y per query (values outside ``labelled`` are not read), ``auto``: Ŷ per
    query, ``labelled``: the query ids of the human-judged random sample. A query whose
    value is undefined (NaN) is left out of the set it belongs to and counted (labelled: Y or
    Ŷ undefined; unlabelled: Ŷ undefined). Keys: ``ppi`` (λ = 1), ``ppi_tuned`` (λ̂, with its
    ``lambda``), ``automatic_only`` (Ŷ over all kept queries), ``human_only`` (Y_l), each
    {estimate, ci_low, ci_high}; n_labelled, n_unlabelled, excluded_labelled,
    excluded_unlabelled, alpha.
    """
    labelled = pd.Index(pd.unique(np.asarray(list(labelled), dtype=object)))
    missing = labelled.difference(auto.index)
    if len(missing):
        raise InputError(f"{len(missing)} labelled queries have no automatic value, e.g. "
                         f"{missing[0]!r}")
    is_labelled = auto.index.isin(labelled)
    y_l = human.reindex(labelled).to_numpy(float)
    yhat_l = auto.reindex(labelled).to_numpy(float)
    yhat_u = auto[~is_labelled].to_numpy(float)
    keep_l = ~(np.isnan(y_l) | np.isnan(yhat_l))
    keep_u = ~np.isnan(yhat_u)
    y_l, yhat_l, yhat_u = y_l[keep_l], yhat_l[keep_l], yhat_u[keep_u]
    lam = tuned_lambda(y_l, yhat_l, yhat_u)
    return {
        "ppi": _figure(*ppi_mean(y_l, yhat_l, yhat_u, alpha=alpha, lam=1.0), **{"lambda": 1.0}),
        "ppi_tuned": _figure(*ppi_mean(y_l, yhat_l, yhat_u, alpha=alpha, lam=lam),
                             **{"lambda": float(lam)}),
        "automatic_only": _figure(*classical_mean(np.concatenate([yhat_l, yhat_u]),
                                                  alpha=alpha)),
        "human_only": _figure(*classical_mean(y_l, alpha=alpha)),
        "n_labelled": int(keep_l.sum()), "n_unlabelled": int(keep_u.sum()),
        "excluded_labelled": int((~keep_l).sum()), "excluded_unlabelled": int((~keep_u).sum()),
        "alpha": float(alpha),
    }


INTERVALS = ("ppi", "ppi_tuned", "automatic_only", "human_only")


def clipped(figures: dict, bounds: tuple[float, float] | None) -> dict:
    """``figures`` (``intervals``' keys) with each interval clipped to ``bounds`` (None: as
    they are); a clipped interval carries ``clipped: True`` and the ``bounds``."""
    if bounds is None:
        return figures
    lo, hi = bounds
    out = dict(figures)
    for key in INTERVALS:
        f = dict(out[key])
        low, high = max(f["ci_low"], lo), min(f["ci_high"], hi)
        if (low, high) != (f["ci_low"], f["ci_high"]):
            f |= {"ci_low": low, "ci_high": high, "clipped": True, "bounds": [lo, hi]}
        out[key] = f
    return out


def difference(human_baseline: pd.Series, human_candidate: pd.Series,
               auto_baseline: pd.Series, auto_candidate: pd.Series, labelled: Iterable, *,
               alpha: float = 0.05) -> dict:
    """``intervals`` of the per-query difference candidate − baseline (paired: each query's
    difference under human labels is Y, under automatic labels Ŷ); a query undefined in
    either system is undefined."""
    return intervals(human_candidate - human_baseline, auto_candidate - auto_baseline,
                     labelled, alpha=alpha)
