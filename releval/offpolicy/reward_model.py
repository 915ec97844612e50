"""The direct method's reward model q̂(x, a, k): the expected reward of showing action (item)
a at position k in context x, fitted on the log's training window and predicted for its
evaluation rows (``fit``).

- Window: the rows before a cut in time; by default the cut is the timestamp of the row at
  ``train_share`` (0.5: the first half of the log by time), so the training window is the
  rows strictly before it and every later row, ties at the cut included, is evaluated.
- Features (``Features``): the log's feature columns (numeric ones as they are, a missing
  value as 0; text ones one-hot over the training window's values, a value unseen there all
  zeros), then the action one-hot, then the position one-hot.
- Model: scikit-learn's ``LogisticRegression`` (L2, C = 1, lbfgs) when every reward is 0 or
  1, q̂ = P(reward = 1); else ``Ridge`` (α = 1), q̂ = the prediction. Both are deterministic.
- Prediction: the model is linear in its features, so the score of (row x, action a,
  position k) is x·β_x + β_a + β_k + b, broadcast over (rows × actions × positions) without
  building that design (then the logistic link for ``LogisticRegression``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.errors import InputError
from releval.offpolicy.policy import action_index

if TYPE_CHECKING:  # scikit-learn is imported where a model is fitted (a slow import)
    from sklearn.linear_model import LogisticRegression, Ridge

TRAIN_SHARE = 0.5


@dataclass(frozen=True)
class Features:
    """The context part of the design: numeric columns, and text columns with the values
    (categories) their one-hot columns stand for."""

    numeric: tuple[str, ...]
    categories: dict[str, tuple[str, ...]]

    @classmethod
    def fit(cls, train: pd.DataFrame) -> Features:
        columns = S.feature_columns(train)
        numeric = tuple(c for c in columns if pd.api.types.is_numeric_dtype(train[c]))
        return cls(numeric, {c: tuple(sorted(train[c].astype(str).unique()))
                             for c in columns if c not in numeric})

    def matrix(self, frame: pd.DataFrame) -> np.ndarray:
        """(rows, features): the numeric columns, then each text column's one-hot."""
        parts = [frame[list(self.numeric)].to_numpy(dtype=float)]
        for column, values in self.categories.items():
            code = pd.Index(values).get_indexer(frame[column].astype(str))
            parts.append((code[:, None] == np.arange(len(values))[None, :]).astype(float))
        return np.nan_to_num(np.hstack(parts), nan=0.0)


def design(context: np.ndarray, action: np.ndarray, position: np.ndarray, n_actions: int,
           n_positions: int) -> np.ndarray:
    """The model's design for rows (context features, action index, 0-based position):
    [context | action one-hot | position one-hot]."""
    return np.hstack([context, np.eye(n_actions)[action], np.eye(n_positions)[position]])


@dataclass(frozen=True)
class RewardModel:
    """``q_hat`` (n_evaluation_rows, n_actions, n_positions) for the rows where
    ``evaluation`` (a mask over the log's rows) holds, the ``cut`` (training: before it), the
    model's ``kind`` and the fitted ``model`` with its context ``features``."""

    q_hat: np.ndarray
    evaluation: np.ndarray
    cut: pd.Timestamp
    kind: str
    model: LogisticRegression | Ridge
    features: Features


def window(log: pd.DataFrame, train_share: float = TRAIN_SHARE,
           cut: pd.Timestamp | None = None) -> tuple[pd.Timestamp, np.ndarray]:
    """The cut (``cut``, else the timestamp of the row at ``train_share`` of the log in time
    order) and the training mask (timestamp < cut); InputError when either side is empty."""
    time = log[S.TIMESTAMP]
    if cut is None:
        if not 0.0 < train_share < 1.0:
            raise InputError(f"train_share must be in (0, 1), got {train_share!r}", "params")
        cut = time.sort_values(kind="stable").iloc[int(np.floor(len(time) * train_share))]
    train = (time < cut).to_numpy()
    if not train.any() or train.all():
        side = "training" if not train.any() else "evaluation"
        raise InputError(f"the cut {cut} leaves no {side} rows", S.source_of(log, "log"))
    return cut, train


def fit(log: pd.DataFrame, actions: np.ndarray, n_positions: int, *,
        train_share: float = TRAIN_SHARE, cut: pd.Timestamp | None = None) -> RewardModel:
    """The reward model fitted on the training window, q̂ for every evaluation row, action
    and position (module docstring)."""
    cut, train = window(log, train_share, cut)
    reward = log[S.REWARD].to_numpy(dtype=float)
    binary = bool(np.isin(reward, (0.0, 1.0)).all())
    if binary and np.unique(reward[train]).size < 2:
        raise InputError(f"every reward of the training window (before {cut}) is "
                         f"{reward[train][0]:g}: no reward model can be fitted",
                         S.source_of(log, "log"))
    action = action_index(log, actions)
    position = log[S.POSITION].to_numpy() - 1
    features = Features.fit(log[train])
    context = features.matrix(log)
    x = design(context[train], action[train], position[train], len(actions), n_positions)
    from sklearn.linear_model import LogisticRegression, Ridge

    model = (LogisticRegression(C=1.0, max_iter=5000) if binary else Ridge(alpha=1.0))
    model.fit(x, reward[train])
    coef = np.ravel(model.coef_)
    intercept = float(np.ravel(model.intercept_)[0]) if binary else float(model.intercept_)
    n_context = context.shape[1]
    beta_x = coef[:n_context]
    beta_a = coef[n_context:n_context + len(actions)]
    beta_k = coef[n_context + len(actions):]
    score = ((context[~train] @ beta_x)[:, None, None] + beta_a[None, :, None]
             + beta_k[None, None, :] + intercept)
    q_hat = 1.0 / (1.0 + np.exp(-score)) if binary else score
    return RewardModel(q_hat, ~train, cut, "logistic" if binary else "ridge", model, features)
