"""The off-policy evaluation of a run (stage ``offpolicy``): the candidate policy of
``offpolicy.policy`` estimated from ``offpolicy.log`` by ``releval.offpolicy``, beside the
log's own on-policy value and the reference log's, written as offpolicy.json
(``releval.documents.offpolicy``), the estimates table and the importance weights'
histogram.

- Rows: IPS and SNIPS, the log's on-policy value, the diagnostics and the weights are made
  on the whole log; DM and DR on the rows after the reward model's training window (its
  first ``reward_model.train_share`` by time), never on the rows it was fitted on. Each
  estimate states its ``n``.
- Bootstrap unit: ``offpolicy.cluster`` (a column of the log, resampled whole), else the
  log's user_id, else each row.
- Reference: the reference log's mean reward, its CI by the same bootstrap; each
  estimate's ``covers``: ci_low ≤ reference ≤ ci_high.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.documents.offpolicy import ESTIMATE_TABLE, KINDS
from releval.errors import InputError
from releval.offpolicy import ALL, OffPolicyResult, bootstrap, evaluate, reward_model
from releval.offpolicy import policy as policies
from releval.offpolicy.estimators import ESTIMATORS
from releval.offpolicy.log import slate_size
from releval.params.offpolicy import OffPolicy

KIND, COVERS = "kind", "covers"
ESTIMATE, ON_POLICY, REFERENCE = KINDS
COLUMNS = ESTIMATE_TABLE  # estimates.parquet: the kind, ESTIMATE_COLUMNS, covers
WEIGHT_COLUMNS = ("low", "high", "rows", "share")  # weights.parquet: one row per bin
BINS = 30  # log-spaced bins over the positive weights; zero weights have their own row
NO_LOG = "offpolicy.log is not set: no off-policy evaluation"


def no_log() -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """The document, estimates and weights when no log is configured."""
    return ({"applicable": False, "reason": NO_LOG}, _frame([]),
            pd.DataFrame({c: pd.Series([], dtype=float) for c in WEIGHT_COLUMNS}))


def _frame(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    types = {KIND: str, "estimator": str, "position": str, "value": float, "ci_low": float,
             "ci_high": float, "n": "int64", "clip": float, COVERS: "boolean"}
    return frame.astype(types)


def _time(ts) -> str:
    return pd.Timestamp(ts).isoformat()


def _window(log: pd.DataFrame) -> list[str]:
    return [_time(log[S.TIMESTAMP].min()), _time(log[S.TIMESTAMP].max())]


def _cluster(log: pd.DataFrame, column: str | None) -> np.ndarray | None:
    if column is None:
        return None
    if column not in log.columns:
        raise InputError(f"offpolicy.cluster {column!r} is not a column of the log (columns: "
                         f"{', '.join(map(str, log.columns[:12]))}, …)",
                         S.source_of(log, "log"))
    return log[column].astype(str).to_numpy()


def mean_reward(log: pd.DataFrame, cluster: np.ndarray | None, resamples: int, alpha: float,
                seed: int) -> dict:
    """The log's on-policy value, its mean reward, with the percentile bootstrap CI over
    ``cluster`` (else user_id, else rows) as ``releval.offpolicy.evaluate`` draws it."""
    if cluster is None:
        cluster = log[S.USER_ID].astype(str).to_numpy() if S.USER_ID in log.columns else \
            np.arange(len(log))
    index = pd.factorize(np.asarray(cluster))[0]
    reward = log[S.REWARD].to_numpy(dtype=float)
    values = np.column_stack([np.ones(len(log)), reward])
    drawn = bootstrap.totals(index, values, resamples, seed)
    low, high = bootstrap.percentile(drawn[:, 1:] / drawn[:, :1], alpha)
    return {"value": float(reward.mean()), "ci_low": float(low[0]), "ci_high": float(high[0]),
            "n": len(log)}


def candidate(c: OffPolicy, log: pd.DataFrame, actions: np.ndarray, n_positions: int,
              table: pd.DataFrame | None, run: pd.DataFrame | None) -> tuple[np.ndarray, dict]:
    """The candidate's action_dist over the log's rows, and its description."""
    if c.system is not None:
        dist = policies.build("ranking", run, log, actions, n_positions,
                              epsilon=c.policy.epsilon, rule=c.policy.rule)
        return dist, {"kind": "ranking", "description": c.describe(), "system": c.system,
                      "rule": c.policy.rule, "epsilon": c.policy.epsilon}
    if c.table is not None:
        return policies.build("table", table, log, actions, n_positions), {
            "kind": "table", "description": c.describe(), "path": c.table}
    return policies.build("uniform", None, log, actions, n_positions), {
        "kind": "uniform", "description": f"{c.describe()}: 1/{len(actions)} per item"}


def _histogram(weights: np.ndarray) -> pd.DataFrame:
    """The importance weights' histogram: a row for the zero weights (low = high = 0), then
    ``BINS`` log-spaced bins over the positive ones."""
    positive = weights[weights > 0]
    rows = [(0.0, 0.0, int((weights == 0).sum()))]
    if positive.size:
        lo, hi = positive.min(), positive.max()
        edges = np.geomspace(lo, hi, BINS + 1) if hi > lo else np.array([lo, hi])
        counts, _ = np.histogram(positive, bins=edges)
        rows += list(zip(edges[:-1], edges[1:], counts.astype(int), strict=True))
    frame = pd.DataFrame(rows, columns=list(WEIGHT_COLUMNS[:3]))
    frame["share"] = frame["rows"] / max(len(weights), 1)
    return frame.astype({"low": float, "high": float, "rows": "int64", "share": float})


def _covers(row, reference: dict | None) -> bool | None:
    if reference is None or pd.isna(row["ci_low"]) or pd.isna(row["ci_high"]):
        return None
    return bool(row["ci_low"] <= reference["value"] <= row["ci_high"])


def _same_items(reference: pd.DataFrame, actions: np.ndarray) -> None:
    """A reference log must show the log's items: one that shows others logs another item
    set (another campaign, another catalogue), whose value is no ground truth for the
    candidate's estimate on this log. Refused, the rows and items counted, the first named."""
    items = reference[S.ITEM_ID].astype(str)
    other = ~items.isin(pd.Index(np.asarray(actions, dtype=str)))
    if not other.any():
        return
    unknown = items[other].unique()
    what = (f"none of its {len(unknown):,} items is" if other.all() else
            f"{int(other.sum()):,} of its {len(items):,} rows ({len(unknown):,} items) show "
            "items not")
    raise InputError(f"{what} among the log's {len(actions):,} items (the first here: item "
                     f"{unknown[0]!r}): a log over another item set is no ground truth for the "
                     "candidate on this log", S.source_of(reference, "reference"),
                     S.where(reference, reference.index[int(np.argmax(other.to_numpy()))]))


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def estimate(c: OffPolicy, log: pd.DataFrame, *, seed: int, table: pd.DataFrame | None = None,
             run: pd.DataFrame | None = None, reference: pd.DataFrame | None = None
             ) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """offpolicy.json, the estimates table (``COLUMNS``: the estimates, then the log's
    on-policy value and the reference's, each a row of its ``kind``) and the weights'
    histogram (``WEIGHT_COLUMNS``) of the candidate ``c.policy`` on ``log`` (module
    docstring); ``table``: the policy's table, ``run``: the ranking system's run,
    ``reference``: the reference log, all as read."""
    n_positions = c.slate_size or slate_size(log)
    actions = policies.actions_of(log)
    dist, policy = candidate(c, log, actions, n_positions, table, run)
    cluster = _cluster(log, c.cluster)
    settings = {"n_positions": n_positions, "clip": c.clip, "resamples": c.resamples,
                "alpha": c.alpha, "seed": seed, "min_ess": c.min_ess}
    direct = [e for e in c.estimators if ESTIMATORS[e].needs_q_hat]
    result: OffPolicyResult = evaluate(
        log, dist, actions, estimators=[e for e in c.estimators if e not in direct],
        cluster=cluster, **settings)
    parts, model, evaluated = [result.estimates], None, log
    if direct:
        fitted = reward_model.fit(log, actions, n_positions,
                                  train_share=c.reward_model.train_share)
        rows = fitted.evaluation
        evaluated, train = log[rows], log[~rows]
        parts.append(evaluate(evaluated, dist[rows], actions, estimators=direct,
                              q_hat=fitted.q_hat,
                              cluster=None if cluster is None else cluster[rows],
                              **settings).estimates)
        model = {"model": fitted.kind, "train_share": c.reward_model.train_share,
                 "train_rows": len(train), "window": _window(train)}
    order = {e: i for i, e in enumerate(c.estimators)}
    estimates = pd.concat([x for x in parts if len(x)], ignore_index=True).sort_values(
        "estimator", key=lambda e: e.map(order), kind="stable", ignore_index=True)
    ref = None
    if reference is not None:
        _same_items(reference, actions)
        ref = mean_reward(reference, _cluster(reference, c.cluster), c.resamples, c.alpha,
                          seed) | {"path": c.reference}
    estimates = estimates.assign(**{KIND: ESTIMATE})
    estimates[COVERS] = [_covers(r, ref) for _, r in estimates.iterrows()]
    lines = [{KIND: ON_POLICY, "estimator": ON_POLICY, "position": ALL, "clip": np.nan,
              COVERS: None, **result.on_policy}]
    if ref is not None:
        lines.append({KIND: REFERENCE, "estimator": REFERENCE, "position": ALL,
                      "clip": np.nan, COVERS: None,
                      **{k: ref[k] for k in ("value", "ci_low", "ci_high", "n")}})
    table_out = _frame([*estimates.to_dict("records"), *lines])
    d = result.diagnostics
    doc = {
        "applicable": True, "reason": None,
        "log": {"path": c.log, "rows": len(log), "contexts": int(log[S.CONTEXT_ID].nunique()),
                "actions": len(actions), "positions": n_positions,
                "window": _window(log), "evaluated_rows": len(evaluated),
                "evaluated_window": _window(evaluated)},
        "policy": policy, "estimators": list(c.estimators), "clip": c.clip,
        "reward_model": model, "resamples": c.resamples, "alpha": c.alpha,
        "cluster": result.bootstrap["cluster"] if c.cluster is None else c.cluster,
        "on_policy": result.on_policy, "reference": ref,
        "estimates": [{"estimator": r["estimator"], "position": r["position"],
                       "value": _number(r["value"]), "ci_low": _number(r["ci_low"]),
                       "ci_high": _number(r["ci_high"]), "n": int(r["n"]),
                       "clip": _number(r["clip"]),
                       "covers": None if pd.isna(r[COVERS]) else bool(r[COVERS])}
                      for _, r in estimates.iterrows()],
        "diagnostics": {k: _number(d[k]) for k in ("ess", "ess_share", "max_weight",
                                                    "mean_weight", "unsupported_share",
                                                    "mass_off_support")}
        | {"min_ess": float(c.min_ess), "passed": bool(d["passed"]),
           "reasons": list(d["reasons"])},
    }
    return doc, table_out, _histogram(result.weights)
