"""The real Open Bandit sample and generated logs of bandit feedback for the off-policy tests.

A generated log (``generated``): contexts of a few segments (a text feature) and a numeric
feature, a logging policy π_b(a | segment, k) and a candidate π_e(a | segment, k) drawn from
Dirichlet distributions (π_b may leave actions out: never logged), rewards Bernoulli with mean
μ(segment, a, k); each row is one impression, its own context, at a uniform position.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from releval.data import contracts as S

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "open-bandit"
BTS, RANDOM = DATA / "bts" / "all", DATA / "random" / "all"


@dataclass(frozen=True)
class World:
    """A generated bandit problem: per (segment, action, position) the logging and candidate
    probabilities and the mean reward."""

    logging: np.ndarray  # (segments, actions, positions), sums to 1 over actions
    candidate: np.ndarray
    mean_reward: np.ndarray

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.logging.shape

    @property
    def value(self) -> float:
        """The candidate's true value per impression slot: segments and positions uniform."""
        return float((self.candidate * self.mean_reward).sum(axis=1).mean())

    @property
    def actions(self) -> np.ndarray:
        return np.array([f"item{a}" for a in range(self.shape[1])])


def world(segments: int = 4, actions: int = 6, positions: int = 2, *, seed: int = 0,
          never_logged: tuple[int, ...] = ()) -> World:
    rng = np.random.default_rng(seed)
    logging = rng.dirichlet(np.ones(actions), size=(segments, positions)).transpose(0, 2, 1)
    logging[:, list(never_logged), :] = 0.0
    logging /= logging.sum(axis=1, keepdims=True)
    candidate = rng.dirichlet(np.full(actions, 0.5), size=(segments, positions))
    mean_reward = rng.uniform(0.05, 0.6, size=(segments, actions, positions))
    return World(logging, candidate.transpose(0, 2, 1), mean_reward)


def draw(w: World, shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Impressions of ``shape`` (e.g. (logs, rows)): segment, position (0-based), the logged
    action, its propensity and the reward, drawn vectorised."""
    n_segments, _, n_positions = w.shape
    segment = rng.integers(0, n_segments, size=shape)
    position = rng.integers(0, n_positions, size=shape)
    cdf = np.cumsum(w.logging[segment, :, position], axis=-1)
    action = (rng.random(shape)[..., None] < cdf).argmax(axis=-1)
    reward = (rng.random(shape) < w.mean_reward[segment, action, position]).astype(float)
    return {"segment": segment, "position": position, "action": action,
            "propensity": w.logging[segment, action, position], "reward": reward}


def frame(w: World, d: dict[str, np.ndarray], users: np.ndarray | None = None) -> pd.DataFrame:
    """One log (1-d draws) as the log contract's frame, rows indexed 1.. (row numbers)."""
    n = len(d["reward"])
    log = pd.DataFrame({
        S.CONTEXT_ID: np.arange(n).astype(str), S.ITEM_ID: w.actions[d["action"]],
        S.POSITION: d["position"] + 1, S.REWARD: d["reward"], S.PROPENSITY: d["propensity"],
        S.TIMESTAMP: pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(np.arange(n), "s"),
        **({S.USER_ID: users.astype(str)} if users is not None else {}),
        "segment": np.array([f"s{s}" for s in range(w.shape[0])])[d["segment"]],
        "noise": np.random.default_rng(n).normal(size=n)},
        index=pd.RangeIndex(1, n + 1))
    log.attrs.update(source="generated", unit="row")
    return log


def generated(n: int, w: World, seed: int = 1) -> pd.DataFrame:
    return frame(w, draw(w, (n,), np.random.default_rng(seed)))


def candidate_table(w: World, log: pd.DataFrame) -> pd.DataFrame:
    """The candidate as a policy table: every (context, item, position) of the log's
    contexts, with π_e of the context's segment."""
    segment = log["segment"].str[1:].astype(int).to_numpy()
    n_segments, n_actions, n_positions = w.shape
    c, a, k = np.meshgrid(np.arange(len(log)), np.arange(n_actions), np.arange(n_positions),
                          indexing="ij")
    return pd.DataFrame({S.CONTEXT_ID: log[S.CONTEXT_ID].to_numpy()[c.ravel()],
                         S.ITEM_ID: w.actions[a.ravel()], S.POSITION: k.ravel() + 1,
                         S.PROBABILITY: w.candidate[segment[c.ravel()], a.ravel(), k.ravel()]})
