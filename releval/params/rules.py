"""The entries of ``gate.rules`` (one params model per rule, tagged ``rule: <name>``) and of
``gate.rollback``.

A leaf: the models import no check code, so a stage that reads params does not depend on
the rules' checks. ``releval.decision.gate.RULES`` pairs each model with its check (the two
registries hold the same names: tests/decision/test_gate.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Literal, Union

from pydantic import Field, model_validator

from releval.data.contracts import RUN_STATUSES
from releval.params.offpolicy import ESTIMATORS
from releval.section import Section

# The health figures a health rule or a rollback threshold may bound (health.json's systems).
HEALTH_METRICS = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
                  *(f"{status}_rate" for status in RUN_STATUSES[1:]),
                  "candidates_per_query", "empty_share", "near_duplicate_ratio",
                  "embedding_cache_hit_rate", "cost_per_query", "freshness_median_days",
                  "freshness_p95_days", "deletion_propagation_p95_days",
                  "deletion_propagation_max_days")
HealthMetric = Literal[HEALTH_METRICS]
LATENCY = re.compile(r"^latency (p50|p95|p99)$")  # a latency percentile a guard may name

Reference = tuple[str, str, str]  # (kind, the key under the entry, the name): Params.references


class RuleSection(Section):
    """A ``gate.rules`` entry; ``references``: the names it gives that params declare
    elsewhere or the measure registry knows (``releval.params.Params.references``)."""

    def references(self) -> Iterator[Reference]:
        return iter(())


def _measure(key: str, name: str) -> Iterator[Reference]:
    """A measure name, unless it is a latency percentile (``latency p95``)."""
    if not LATENCY.match(name):
        yield "measure", key, name


class NoRegression(RuleSection):
    """``measure`` of the candidate not below the baseline's by more than ``max_drop``, overall
    and on each of ``slices`` ("dimension=value"); evidence ``ci``: the CI's lower bound of
    candidate − baseline ≥ −max_drop (non-inferiority), ``mean``: the mean difference."""

    rule: Literal["no_regression"] = "no_regression"
    measure: str = "nDCG@10"
    max_drop: float = Field(0.0, ge=0)
    slices: list[str] = []
    evidence: Literal["ci", "mean"] = "ci"

    def references(self) -> Iterator[Reference]:
        yield "measure", "measure", self.measure
        yield from (("slice", f"slices.{i}", spec) for i, spec in enumerate(self.slices))


class SafetyRule(RuleSection):
    """At most ``max_violations`` (zero tolerance by default) safety violations anywhere in the
    candidate windows of the candidate and every route it is built from."""

    rule: Literal["safety"] = "safety"
    max_violations: int = Field(0, ge=0)


class NoAnswerRule(RuleSection):
    """The candidate's correct-refusal rate on no-answer queries not below the baseline's by
    more than ``max_drop``."""

    rule: Literal["no_answer"] = "no_answer"
    max_drop: float = Field(0.0, ge=0)


class JudgedRule(RuleSection):
    """The candidate's mean ``measure`` (a Judged@k) at least ``min``: else the judgments do
    not cover what it retrieves and the evaluation is not trustworthy."""

    rule: Literal["judged"] = "judged"
    measure: str = "Judged@10"
    min: float = Field(0.7, ge=0, le=1)

    def references(self) -> Iterator[Reference]:
        yield "measure", "measure", self.measure


class CoverageRule(RuleSection):
    """Every risk category with a minimum (``query_set.min_per_category``) has at least that
    many evaluated queries."""

    rule: Literal["coverage"] = "coverage"


class HoldoutRule(RuleSection):
    """The evaluated set has informed at most ``query_set.max_looks`` decisions (distinct
    candidates compared on it, this one included: ``releval.decision.looks``)."""

    rule: Literal["holdout"] = "holdout"


class LatencyRule(RuleSection):
    """The candidate's per-query latency ``percentile`` at most ``max_ms``."""

    rule: Literal["latency"] = "latency"
    percentile: Literal["p50", "p95", "p99"] = "p95"
    max_ms: float = Field(gt=0)


class NotWorse(RuleSection):
    """``measure`` of the candidate (its summary value: one value per system, or the mean over
    queries) not worse than the baseline's by more than ``tolerance``: candidate ≥ baseline −
    tolerance where higher is better, candidate ≤ baseline + tolerance where lower is better
    (LogLoss, Brier, ECE, Gini)."""

    rule: Literal["not_worse"] = "not_worse"
    measure: str
    tolerance: float = Field(0.0, ge=0)

    def references(self) -> Iterator[Reference]:
        yield "measure", "measure", self.measure


class Guard(Section):
    """A guard: ``measure`` (a measure name, or ``latency p50|p95|p99``) may worsen by at most
    ``tolerance`` (in its own unit: ms for latency) while the primary improves;
    ``if_applicable``: where the measure does not apply to the data (not applicable to both
    systems), the guard passes and says so instead of failing."""

    measure: str
    tolerance: float = Field(0.0, ge=0)
    if_applicable: bool = False


class Guarded(RuleSection):
    """``primary`` (a measure name, or ``latency p50|p95|p99``) may not improve by more than
    ``min_gain`` while a guard worsens beyond its tolerance
    (``releval.decision.gate.guarded``)."""

    rule: Literal["guarded"] = "guarded"
    primary: str
    min_gain: float = Field(0.0, ge=0)
    guards: list[Guard] = Field(min_length=1)

    def references(self) -> Iterator[Reference]:
        yield from _measure("primary", self.primary)
        for i, guard in enumerate(self.guards):
            yield from _measure(f"guards.{i}.measure", guard.measure)


class HealthRule(RuleSection):
    """``system``'s (None: ``compare.candidate``) health figures: each ``max`` entry at most
    its bound, each ``min`` entry at least its bound (e.g. ``max: {error_rate: 0.01,
    latency_p99_ms: 100, deletion_propagation_max_days: 1}``)."""

    rule: Literal["health"] = "health"
    system: str | None = None
    max: dict[HealthMetric, float] = {}
    min: dict[HealthMetric, float] = {}

    def references(self) -> Iterator[Reference]:
        if self.system is not None:
            yield "system", "system", self.system

    @model_validator(mode="after")
    def _some_bound(self) -> HealthRule:
        if not self.max and not self.min:
            raise ValueError("a health rule needs at least one bound (max or min)")
        return self


class SeedsRule(RuleSection):
    """The ``candidate`` (default ``compare.candidate``; or the candidate of a
    ``compare.also`` comparison), trained with several seeds, improves ``measure`` over its
    baseline by more than ``min_diff`` — ``every``: every seed's paired bootstrap CI lies
    above it; ``mean``: the seeds' mean's CI and its training interval both do. In the
    measure's direction: where lower is better, the CI must lie below −``min_diff``."""

    rule: Literal["seeds"] = "seeds"
    measure: str = "nDCG@10"
    require: Literal["every", "mean"] = "every"
    min_diff: float = 0.0
    candidate: str | None = None

    def references(self) -> Iterator[Reference]:
        yield "measure", "measure", self.measure
        if self.candidate is not None:
            yield "system", "candidate", self.candidate


class OffPolicyRule(RuleSection):
    """The candidate policy (``offpolicy.policy``) not worse than the logging policy by more
    than ``margin``: ``estimator``'s estimate over every position has its CI's lower bound ≥
    the log's on-policy value − ``margin``, and the diagnostics pass (ESS ≥
    ``offpolicy.min_ess``, no probability mass off the logger's support). n/a without
    ``offpolicy.log``."""

    rule: Literal["off_policy"] = "off_policy"
    estimator: Literal[ESTIMATORS] = "dr"
    margin: float = Field(0.0, ge=0)

    def references(self) -> Iterator[Reference]:
        yield "estimator", "estimator", self.estimator


class Rollback(Section):
    """Roll back when ``metric`` (a health figure of ``HEALTH_METRICS``, or an evaluated
    relevance measure, e.g. nDCG@10) rises above ``max`` or falls below ``min``: exactly one
    of the two, a number or ``baseline`` (the baseline's offline value)."""

    metric: str
    max: float | Literal["baseline"] | None = None
    min: float | Literal["baseline"] | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> Rollback:
        if (self.max is None) == (self.min is None):
            raise ValueError(f"rollback {self.metric}: give exactly one of max and min")
        return self

    def references(self) -> Iterator[Reference]:
        if self.metric not in HEALTH_METRICS:
            yield "measure", "metric", self.metric

    @property
    def bound(self) -> str:
        """"max" or "min": the one given."""
        return "max" if self.max is not None else "min"


# rule name -> (its model, in the default gate.rules); the rules without a default need a
# value only the team can give (a measure, a bound, a seeded candidate)
RULE_MODELS: dict[str, tuple[type[RuleSection], bool]] = {
    "no_regression": (NoRegression, True),
    "safety": (SafetyRule, True),
    "no_answer": (NoAnswerRule, True),
    "judged": (JudgedRule, True),
    "coverage": (CoverageRule, True),
    "holdout": (HoldoutRule, True),
    "latency": (LatencyRule, False),  # needs max_ms
    "not_worse": (NotWorse, False),  # needs a measure
    "guarded": (Guarded, False),  # needs a primary and its guards
    "health": (HealthRule, False),  # needs bounds
    "seeds": (SeedsRule, False),  # needs a seeded candidate
    "off_policy": (OffPolicyRule, False),  # needs logged feedback (offpolicy.log)
}

Rule = Annotated[Union[tuple(model for model, _ in RULE_MODELS.values())],  # noqa: UP007
                 Field(discriminator="rule")]
