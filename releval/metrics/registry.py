"""The measure registry: one ``Family`` per measure family, registered with ``@measure``.

A family says how its measures are parameterised (cutoff, options with defaults and rules),
computed, aggregated, named by trec_eval, at which level they live (``query``: one value per
query, averaged; ``system``: one value per system, pooled over the queries that contribute),
which way is better, and when they apply to a run at all (``available``: e.g. a probability
measure needs the run's probabilities, a beyond-accuracy measure the catalogue, the
hard-negative rate qrels that mark hard negatives).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from releval.errors import InputError
from releval.metrics.ranking import Ranking
from releval.metrics.spec import Measure


@dataclass(frozen=True)
class Pooled:
    """A system-level value and, per evaluated query, whether it contributed to it."""

    value: float
    contributing: np.ndarray


Compute = Callable[[Ranking, Measure], "np.ndarray | Pooled"]


@dataclass(frozen=True)
class Option:
    """A parameter a family takes: its default and the rule a value must meet."""

    default: object
    rule: str  # completes "<name> must be ..."
    valid: Callable[[object], bool] = lambda v: True


def _integer(low: int) -> Callable[[object], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low


def integer(default: int, low: int) -> Option:
    """An integer option ≥ ``low``."""
    return Option(default, f"an integer ≥ {low}", _integer(low))


def share(default: float) -> Option:
    """A number option strictly between 0 and 1."""
    return Option(default, "a number in (0, 1)", lambda v: isinstance(v, int | float)
                  and not isinstance(v, bool) and 0 < v < 1)


def positive(default: float) -> Option:
    """A number option > 0."""
    return Option(default, "a number > 0", lambda v: isinstance(v, int | float)
                  and not isinstance(v, bool) and v > 0)


def flag(default: bool = False) -> Option:
    """A boolean option."""
    return Option(default, "True or False", lambda v: isinstance(v, bool))


def proportion(default: float | None = None) -> Option:
    """A number option in [0, 1] (e.g. a recall level)."""
    return Option(default, "a number in [0, 1]", lambda v: isinstance(v, int | float)
                  and not isinstance(v, bool) and 0 <= v <= 1)


def one_of(*values: str) -> Option:
    """A string option: the first value is the default."""
    return Option(values[0], "one of " + ", ".join(values), lambda v: v in values)


GAIN_FORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "log2": lambda g: g,
    "exp-log2": lambda g: np.exp2(g) - 1.0,
}
# the parameters every family may share; they are fields of ``Measure``, not ``options``
# (rel 0: every judged document is relevant, as trec_eval's -l0)
SHARED = {"rel": Option(1, "an integer ≥ 0", _integer(0)),
          "dcg": one_of(*GAIN_FORMS),
          "gains": Option(None, "a dict {grade: gain ≥ 0}")}


@dataclass(frozen=True)
class Needs:
    """When a family applies to a run at all: ``check(ranking, measure)``, and ``missing``,
    what the data lacks when it does not (said wherever the measure shows "not
    applicable")."""

    check: Callable[[Ranking, Measure], bool]
    missing: str = ""

    def __call__(self, r: Ranking, m: Measure) -> bool:
        return self.check(r, m)


always = Needs(lambda r, m: True)
has_catalog = Needs(lambda r, m: r.catalog is not None,
                    "the evaluation has no item catalogue for it")
# the qrels mark at least one judgment as a hard negative, of any query (evaluated or not):
# every block of a run, and every run scored on the same qrels, agree
has_hard_negatives = Needs(lambda r, m: r.hard is not None, "the qrels mark no hard negatives")


# trec_eval's floor under each value of a geometric mean (its MIN_GEO_MEAN): a query with AP 0
# contributes log(1e-5) instead of −∞
GEO_FLOOR = 1e-5


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else np.nan


def _geometric(values: np.ndarray) -> float:
    return float(np.exp(np.log(np.maximum(values, GEO_FLOOR)).mean())) if len(values) else np.nan


# how a per-query measure's values over the counted queries become its summary value
AGGREGATES: dict[str, Callable[[np.ndarray], float]] = {
    "mean": _mean,  # arithmetic mean
    "sum": lambda values: float(values.sum()),  # trec_eval sums the counting measures
    "geometric": _geometric,  # exp(mean(log(max(v, GEO_FLOOR)))), trec_eval's gm_map
}


# the availabilities that depend on the judgments alone, so every block of a large run
# (``releval.metrics.blocks``) shares them
BY_JUDGMENTS = (always, has_hard_negatives)


@dataclass(frozen=True)
class Family:
    """How one measure family is parameterised, computed, averaged and named by trec_eval."""

    compute: Compute
    cutoff: str  # "required" | "optional" | "none"
    params: dict[str, Option] = field(default_factory=dict)
    aggregate: str = "mean"  # a key of ``AGGREGATES``
    trec: Callable[[Measure], str | None] = lambda m: None
    level: str = "query"  # "query" | "system"
    better: str = "higher"  # "higher" | "lower": the way the measure improves
    available: Needs = always
    bounds: tuple[float, float] | None = None  # the range every value lies in (None: open)

    @property
    def definition(self) -> str:
        return " ".join((self.compute.__doc__ or "").split())

    def make(self, family: str, cutoff: int | None, params: dict, rel: int, text: str) -> Measure:
        unknown = set(params) - set(self.params)
        if unknown:
            allowed = ", ".join(sorted(self.params)) or "none"
            raise InputError(f"{family} takes no parameter {', '.join(sorted(unknown))} "
                             f"(allowed: {allowed})", text)
        if self.cutoff == "required" and cutoff is None:
            raise InputError(f"{family} needs a cutoff, e.g. {family}@10", text)
        if self.cutoff == "none" and cutoff is not None:
            raise InputError(f"{family} takes no cutoff", text)
        if cutoff is not None and cutoff < 1:
            raise InputError("cutoff must be ≥ 1", text)
        for name, value in params.items():
            if name != "gains" and not self.params[name].valid(value):
                raise InputError(f"{name} must be {self.params[name].rule}, got {value!r}", text)
        rel = params.get("rel", rel if "rel" in self.params else 1)
        if not SHARED["rel"].valid(rel):
            raise InputError(f"rel must be {SHARED['rel'].rule}, got {rel!r}", text)
        dcg = params.get("dcg", "log2")
        gains = params.get("gains")
        if gains is not None:
            if dcg != "log2" or not isinstance(gains, dict) or not all(
                    isinstance(g, int) and isinstance(v, int | float) and v >= 0
                    for g, v in gains.items()):
                raise InputError("gains must be a dict {grade: gain ≥ 0} and cannot be combined "
                                 "with dcg", text)
            gains = tuple(sorted((g, float(v)) for g, v in gains.items()))
        options = tuple((name, params[name]) for name, option in self.params.items()
                        if name not in SHARED and name in params
                        and params[name] != option.default)
        return Measure(family, cutoff, rel, dcg, gains, options)


MEASURES: dict[str, Family] = {}
UNIT = (0.0, 1.0)  # the bounds of a share, a rate or a normalised gain


def measure(name: str, *, cutoff: str, params: tuple[str, ...] = ("rel",),
            options: dict[str, Option] | None = None, aggregate: str = "mean",
            trec: Callable[[Measure], str | None] = lambda m: None, level: str = "query",
            better: str = "higher", available: Needs = always,
            bounds: tuple[float, float] | None = None):
    """Register a compute function under ``name``: ``params`` names the shared parameters it
    takes (``SHARED``), ``options`` its own, with their defaults and rules; ``bounds``: the
    range its values lie in, where it has one (an interval is clipped to it)."""

    def register(fn: Compute) -> Compute:
        MEASURES[name] = Family(fn, cutoff, {**{p: SHARED[p] for p in params}, **(options or {})},
                                aggregate, trec, level, better, available, bounds)
        return fn

    return register


def option(m: Measure, name: str):
    """The value of option ``name`` of ``m``: its own, else its family's default."""
    return dict(m.options).get(name, MEASURES[m.family].params[name].default)


def defined_only(r: Ranking, m: Measure, values: np.ndarray) -> np.ndarray:
    """``values`` where the query has a relevant document (|R| > 0), else NaN: the engine's
    undefined rule, for every per-query measure."""
    return np.where(r.n_rel(m.rel) > 0, values, np.nan)
