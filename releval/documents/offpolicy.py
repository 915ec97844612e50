"""offpolicy.json (stage ``offpolicy``): the candidate policy's value estimated from the
logged feedback, every choice stated.

``applicable`` False (no ``offpolicy.log``): ``reason`` says so and the rest is empty.
Otherwise: the log and the evaluation window, the policy and its rule, the estimators with
the clip, the reward model and its training window, the bootstrap (resamples, alpha, the
resampled unit), the logging policy's ``on_policy`` value, the ``reference`` (the candidate
policy's own deployed log, its on-policy value: ground truth), the ``estimates`` (each with
its CI and whether the CI covers the reference) and the ``diagnostics`` that decide whether
the estimates can be trusted (passed, with the reasons when not).
"""

from __future__ import annotations

from releval.documents import Document, Fixed

# estimates.parquet beside the document: one row per estimate (kind ``estimate``: an
# estimator at a position), then the log's on-policy value and the reference's
KINDS = ("estimate", "on_policy", "reference")
ESTIMATE_TABLE = ("kind", "estimator", "position", "value", "ci_low", "ci_high", "n", "clip",
                  "covers")


class Value(Fixed):
    """A mean reward with its bootstrap CI over ``n`` rows."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


class Reference(Value):
    """The reference log's on-policy value; ``path`` as params give it."""

    path: str


class Estimate(Fixed):
    """One estimator at one position (``all``: every position) with its CI; ``covers``:
    whether the CI holds the reference's value (None: no reference)."""

    estimator: str
    position: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    clip: float | None
    covers: bool | None


class Diagnostics(Fixed):
    """Whether the importance weights can be trusted: the effective sample size (Kish: (Σw)²
    / Σw²) and its share of the rows, the largest and mean weight, the share of logged rows
    whose action the candidate never takes, the candidate's probability mass on actions the
    logger never took; ``passed``: ess ≥ min_ess and no mass off support; ``reasons``: why
    not."""

    ess: float | None
    ess_share: float | None
    max_weight: float | None
    mean_weight: float | None
    unsupported_share: float | None
    mass_off_support: float | None
    min_ess: float
    passed: bool
    reasons: list[str]


class Policy(Fixed):
    """The candidate policy: ``kind`` uniform | table | ranking, in words, with its rule."""

    kind: str
    description: str
    path: str | None = None
    system: str | None = None
    rule: str | None = None
    epsilon: float | None = None


class RewardModel(Fixed):
    """The direct method's model, fitted on the log's first ``train_share`` by time
    (``window``: its first and last timestamp)."""

    model: str
    train_share: float
    train_rows: int
    window: list[str]


class Log(Fixed):
    """The log as params give it: rows, contexts, actions, positions, its time window, and
    the rows DM and DR are made on (after the reward model's training window)."""

    path: str
    rows: int
    contexts: int
    actions: int
    positions: int
    window: list[str]
    evaluated_rows: int
    evaluated_window: list[str]


class OffPolicyDoc(Document):
    applicable: bool
    reason: str | None = None
    log: Log | None = None
    policy: Policy | None = None
    estimators: list[str] = []
    clip: float | None = None
    reward_model: RewardModel | None = None
    resamples: int | None = None
    alpha: float | None = None
    cluster: str | None = None
    on_policy: Value | None = None
    reference: Reference | None = None
    estimates: list[Estimate] = []
    diagnostics: Diagnostics | None = None
