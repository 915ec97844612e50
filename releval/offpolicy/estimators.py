"""The off-policy estimators of a candidate policy π_e's value from a log of a logging policy
π_b (``ESTIMATORS``), each exactly Open Bandit Pipeline's estimator of the same name with its
``position`` argument: every logged row i is one impression (context x_i, action a_i shown at
position k_i, reward r_i, propensity π_b(a_i | x_i, k_i)), and the value is the expected
reward per impression slot. The estimate restricted to the rows of one position is that
position's value (the independent-position view of a slate).

Every estimator is a ratio of per-row terms, V = Σ_i num_i / Σ_i den_i over the rows it is
computed on (all rows, one position's, a bootstrap resample's), written with the importance
weight w_i = π_e(a_i | x_i, k_i) / π_b(a_i | x_i, k_i).

Clipping (``clip`` = c, obp's ``lambda_``): IPS and DR use min(w_i, c) in place of w_i.
SNIPS is never clipped (as obp's: its self-normalisation already keeps the estimate within
the rewards' range) and DM has no weights; their rows record no clip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class Logged:
    """What the estimators read per logged row: ``reward`` r_i, ``weight`` w_i (unclipped),
    ``clip`` (None: no clipping), and from the reward model ``direct`` = Σ_a π_e(a | x_i,
    k_i)·q̂(x_i, a, k_i) / Σ_a π_e(a | x_i, k_i) and ``factual`` = q̂(x_i, a_i, k_i)."""

    reward: np.ndarray
    weight: np.ndarray
    clip: float | None = None
    direct: np.ndarray | None = None
    factual: np.ndarray | None = None

    @property
    def clipped(self) -> np.ndarray:
        """min(w_i, c), or w_i without a clip."""
        return self.weight if self.clip is None else np.minimum(self.weight, self.clip)


def ips(d: Logged) -> tuple[np.ndarray, np.ndarray]:
    """Inverse probability weighting: V = (1/n) Σ_i min(w_i, c)·r_i."""
    return d.clipped * d.reward, np.ones_like(d.reward)


def snips(d: Logged) -> tuple[np.ndarray, np.ndarray]:
    """Self-normalised IPS: V = Σ_i w_i·r_i / Σ_i w_i (never clipped)."""
    return d.weight * d.reward, d.weight


def dm(d: Logged) -> tuple[np.ndarray, np.ndarray]:
    """Direct method: V = (1/n) Σ_i Σ_a π_e(a | x_i, k_i)·q̂(x_i, a, k_i) (no weights)."""
    return d.direct, np.ones_like(d.reward)


def dr(d: Logged) -> tuple[np.ndarray, np.ndarray]:
    """Doubly robust: V = (1/n) Σ_i [Σ_a π_e(a | x_i, k_i)·q̂(x_i, a, k_i)
    + min(w_i, c)·(r_i − q̂(x_i, a_i, k_i))]."""
    return d.direct + d.clipped * (d.reward - d.factual), np.ones_like(d.reward)


class Estimator(NamedTuple):
    """An estimator: its per-row (numerator, denominator) terms, whether it needs the reward
    model's q̂, and whether ``clip`` applies to it."""

    terms: Callable[[Logged], tuple[np.ndarray, np.ndarray]]
    needs_q_hat: bool
    clips: bool


ESTIMATORS: dict[str, Estimator] = {
    "ips": Estimator(ips, needs_q_hat=False, clips=True),
    "snips": Estimator(snips, needs_q_hat=False, clips=False),
    "dm": Estimator(dm, needs_q_hat=True, clips=False),
    "dr": Estimator(dr, needs_q_hat=True, clips=True),
}
