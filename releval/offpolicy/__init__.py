"""Off-policy (counterfactual) evaluation: a candidate policy's value estimated from a log of
another (the logging) policy, with bootstrap CIs and the diagnostics that say whether the
estimate can be trusted.

The pieces:

- ``log.read_log(path, slate_size=None)``: the logged feedback (Open Bandit layout or the
  documented table, ``S.LOG_COLUMNS``), checked;
- ``policy``: the candidate as ``action_dist`` (rows, actions, positions) over ``actions``
  (``policy.actions_of(log, ...)``): ``uniform``, ``from_table`` (``read_table``),
  ``from_ranking``, or ``build(kind, ...)`` over ``POLICIES``;
- ``reward_model.fit(log, actions, n_positions, train_share=0.5)``: q̂ for the evaluation
  window (``RewardModel.evaluation``, a mask over the log's rows) for DM and DR;
- ``evaluate(...)`` below: the estimates (``estimators.ESTIMATORS``), their CIs
  (``bootstrap``), the logged policy's own value and the diagnostics (``diagnostics``).

Every array ``evaluate`` takes is aligned with ``log``'s rows: to use DM or DR, pass the
evaluation window (``log[m.evaluation]``, ``action_dist[m.evaluation]``, ``q_hat=m.q_hat``).

    result = evaluate(log, action_dist, actions, n_positions=3,
                      estimators=("ips", "snips", "dm", "dr"), clip=None, q_hat=None,
                      cluster=None, resamples=1000, alpha=0.05, seed=0, min_ess=100.0,
                      support_tolerance=0.0)

``estimators`` needing q̂ (dm, dr) without ``q_hat`` are refused; ``clip`` applies to ips and
dr (``estimators``); ``cluster`` labels each row's bootstrap cluster (default: the log's
user_id where it has one, else each row); the diagnostics judge the rows given (the support
check: the (item, position) pairs those rows show).

``OffPolicyResult``:

- ``estimates``: one row per (estimator, position): ``estimator``, ``position`` ('all' or
  '1'..'n_positions'), ``value``, ``ci_low``, ``ci_high`` (percentile bootstrap at 1 − alpha),
  ``n`` (rows), ``clip`` (the clip applied; NaN where none);
- ``on_policy``: the logged policy's own value, the mean reward: ``value``, ``ci_low``,
  ``ci_high``, ``n``;
- ``diagnostics``: ``diagnostics.diagnose``'s dict (ess, ess_share, max_weight, mean_weight,
  unsupported_share, mass_off_support, thresholds, checks, ``passed``, ``reasons``);
- ``weights``: each row's importance weight π_e / π_b (unclipped), for a histogram;
- ``bootstrap``: resamples, alpha, seed, the clusters (``user_id``, ``row`` or ``given``) and
  their number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.offpolicy import bootstrap
from releval.offpolicy.diagnostics import SUPPORT_TOLERANCE, diagnose
from releval.offpolicy.estimators import ESTIMATORS, Logged
from releval.offpolicy.policy import SUM_TOLERANCE, action_index

ALL = "all"
ESTIMATE_COLUMNS = ("estimator", "position", "value", "ci_low", "ci_high", "n", "clip")


@dataclass(frozen=True)
class OffPolicyResult:
    """The estimates, the logged policy's own value, the diagnostics, the importance weights
    and the bootstrap's settings (module docstring)."""

    estimates: pd.DataFrame
    on_policy: dict
    diagnostics: dict
    weights: np.ndarray
    bootstrap: dict


def _shape(name: str, array: np.ndarray, expected: tuple[int, ...]) -> None:
    if np.shape(array) != expected:
        raise InputError(f"{name} has shape {np.shape(array)}, expected (rows, actions, "
                         f"positions) = {expected}", "offpolicy")


def _distribution(log: pd.DataFrame, action_dist: np.ndarray) -> None:
    """Probabilities in [0, 1], each (row, position) summing to 1 within SUM_TOLERANCE."""
    bad = ((action_dist < 0) | (action_dist > 1)).any(axis=(1, 2))
    bad |= (np.abs(action_dist.sum(axis=1) - 1.0) > SUM_TOLERANCE).any(axis=1)
    S.fail_first(log, "log", bad, "the candidate's probabilities for this row are not a "
                 "distribution over the actions at each position")


def _clusters(log: pd.DataFrame, cluster: np.ndarray | None) -> tuple[np.ndarray, str]:
    if cluster is not None:
        if len(cluster) != len(log):
            raise InputError(f"cluster has {len(cluster)} labels for {len(log)} rows",
                             "offpolicy")
        return pd.factorize(np.asarray(cluster))[0], "given"
    if S.USER_ID in log.columns:
        return pd.factorize(log[S.USER_ID].astype(str))[0], S.USER_ID
    return np.arange(len(log)), "row"


def _checked(estimators, q_hat, clip, alpha, resamples) -> None:
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if unknown:
        raise InputError(f"unknown estimator(s) {', '.join(unknown)}; known: "
                         f"{', '.join(ESTIMATORS)}", "params")
    needing = [e for e in estimators if ESTIMATORS[e].needs_q_hat]
    if needing and q_hat is None:
        raise InputError(f"{', '.join(needing)} need(s) the reward model's q_hat; none given",
                         "params")
    if clip is not None and not clip > 0:
        raise InputError(f"clip must be > 0, got {clip!r}", "params")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}", "params")
    S.integer("resamples", resamples)


def evaluate(log: pd.DataFrame, action_dist: np.ndarray, actions: np.ndarray, *,
             n_positions: int, estimators=("ips", "snips", "dm", "dr"),
             clip: float | None = None, q_hat: np.ndarray | None = None,
             cluster: np.ndarray | None = None, resamples: int = 1000, alpha: float = 0.05,
             seed: int = 0, min_ess: float = 100.0,
             support_tolerance: float = SUPPORT_TOLERANCE) -> OffPolicyResult:
    """The candidate ``action_dist``'s value by each of ``estimators`` over all rows and per
    position, with percentile bootstrap CIs at 1 − ``alpha`` over ``cluster`` (default: the
    log's user_id, else each row its own), the logged policy's mean reward with its CI, and
    the diagnostics against ``min_ess`` and ``support_tolerance`` (module docstring)."""
    estimators = tuple(estimators)
    _checked(estimators, q_hat, clip, alpha, resamples)
    S.require_columns(log, (S.ITEM_ID, S.POSITION, S.REWARD, S.PROPENSITY), "log")
    n, shape = len(log), (len(log), len(actions), n_positions)
    _shape("action_dist", action_dist, shape)
    if q_hat is not None:
        _shape("q_hat", q_hat, shape)
    action = action_index(log, actions)
    position = log[S.POSITION].to_numpy(dtype=np.int64) - 1
    S.fail_first(log, "log", (position < 0) | (position >= n_positions),
                 lambda i: f"position must be in 1..{n_positions}, got {position[i] + 1}")
    propensity = log[S.PROPENSITY].to_numpy(dtype=float)
    S.fail_first(log, "log", ~((propensity > 0) & (propensity <= 1)),
                 lambda i: f"propensity must be in (0, 1], got {float(propensity[i])!r}")
    _distribution(log, action_dist)
    rows = np.arange(n)
    reward = log[S.REWARD].to_numpy(dtype=float)
    weight = action_dist[rows, action, position] / propensity
    direct = factual = None
    if q_hat is not None:
        pi = action_dist[rows, :, position]
        direct = (pi * q_hat[rows, :, position]).sum(axis=1) / pi.sum(axis=1)
        factual = q_hat[rows, action, position]
    logged = Logged(reward, weight, clip, direct, factual)

    groups = [(ALL, np.ones(n, bool))] + [(str(k + 1), position == k)
                                          for k in range(n_positions)]
    columns = [np.ones(n), reward]  # the on-policy value: Σ r / Σ 1
    for name in estimators:
        num, den = ESTIMATORS[name].terms(logged)
        for _, mask in groups:
            columns += [den * mask, num * mask]
    values = np.column_stack(columns)
    cluster_index, cluster_kind = _clusters(log, cluster)
    drawn = bootstrap.totals(cluster_index, values, resamples, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = values[:, 1::2].sum(axis=0) / values[:, 0::2].sum(axis=0)
        draws = drawn[:, 1::2] / drawn[:, 0::2]
    low, high = bootstrap.percentile(draws, alpha)

    records = []
    for e, name in enumerate(estimators):
        applied = clip if clip is not None and ESTIMATORS[name].clips else np.nan
        for g, (label, mask) in enumerate(groups):
            j = 1 + e * len(groups) + g
            records.append((name, label, point[j], low[j], high[j], int(mask.sum()), applied))
    estimates = pd.DataFrame.from_records(records, columns=ESTIMATE_COLUMNS)
    on_policy = {"value": float(point[0]), "ci_low": float(low[0]),
                 "ci_high": float(high[0]), "n": n}
    return OffPolicyResult(
        estimates=estimates, on_policy=on_policy,
        diagnostics=diagnose(weight, action_dist, action, position, min_ess=min_ess,
                             support_tolerance=support_tolerance),
        weights=weight,
        bootstrap={"resamples": resamples, "alpha": alpha, "seed": seed,
                   "cluster": cluster_kind, "n_clusters": int(cluster_index.max()) + 1})
