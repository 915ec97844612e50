"""The ``offpolicy`` section: counterfactual evaluation of a candidate policy from logged
bandit feedback (stage ``offpolicy``, ``releval.offpolicy``).

A leaf: the model imports no estimator code, so reading params never makes a stage depend on
the estimators.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from releval.section import Section

ESTIMATORS = ("ips", "snips", "dm", "dr")
UNIFORM = "uniform"


class RankedPolicy(Section):
    """The candidate policy derived from a system's ranking by a stated rule: ``rank``, the
    system's item at rank k fills position k (``epsilon``: that share of each position's
    mass spread uniformly over the actions, so every logged action keeps support)."""

    system: str
    rule: Literal["rank"] = "rank"
    epsilon: float = Field(0.0, ge=0, le=1)


class RewardModel(Section):
    """The direct method's reward model (scikit-learn), fitted on the log's first
    ``train_share`` by time; the estimates are made on the rest."""

    train_share: float = Field(0.5, gt=0, lt=1)


class OffPolicy(Section):
    """The candidate policy's value estimated from ``log`` (logged bandit feedback: context,
    item, position, reward, propensity, time; None: no off-policy evaluation, and the gate's
    ``off_policy`` rule is n/a). ``policy``: ``uniform`` (every action equally likely at each
    position), a path to a table of action probabilities per logged context, or a system's
    ranking by a stated rule (``RankedPolicy``). ``clip``: importance weights above it are
    cut to it (None: unclipped), stated in every estimate. Each estimate has a bootstrap CI
    over contexts (``cluster``: the log's user column, resampled whole) with ``resamples``
    draws at ``alpha``; ``min_ess``: the effective sample size below which an estimate is
    not trusted. ``reference``: a log of the candidate policy itself deployed, whose
    on-policy value is the ground truth shown beside the estimates."""

    log: str | None = None
    slate_size: int | None = Field(None, ge=1)
    policy: RankedPolicy | str = UNIFORM
    estimators: list[Literal[ESTIMATORS]] = Field(list(ESTIMATORS), min_length=1)
    clip: float | None = Field(None, gt=0)
    reward_model: RewardModel = RewardModel()
    resamples: int = Field(1000, ge=100)
    alpha: float = Field(0.05, gt=0, lt=1)
    min_ess: float = Field(100.0, gt=0)
    cluster: str | None = None
    reference: str | None = None

    @property
    def table(self) -> str | None:
        """The path of the policy's table of action probabilities (None: not a table)."""
        return self.policy if isinstance(self.policy, str) and self.policy != UNIFORM else None

    @property
    def system(self) -> str | None:
        """The system whose ranking is the policy (None: not a ranking)."""
        return self.policy.system if isinstance(self.policy, RankedPolicy) else None

    def describe(self) -> str:
        """The policy in words."""
        if self.system is not None:
            return (f"{self.system}'s ranking, rule {self.policy.rule} "
                    f"(epsilon {self.policy.epsilon:g})")
        return "uniform over the actions at each position" if self.table is None else \
            f"the table {self.table}"
