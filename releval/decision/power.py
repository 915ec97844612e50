"""Power and query-set planning for the paired comparison: could this set have seen the effect?

A pilot gives the paired differences of one measure, d_j = candidate_j − baseline_j over the
n queries defined in both systems (``releval.decision.stats``). With clusters (e.g. users),
the units are the G clusters with difference sums S_g over m_g queries; d̄ = Σ S_g / N and the
unit residuals r_g = (S_g − d̄·m_g) / m̄ (m̄ = N / G) carry the ratio estimator's variance, so
the plan counts clusters and converts to queries at m̄ per cluster. For query units r_j =
d_j − d̄. s² = Σ r_g² / (G − 1).

- Analytic (the paired t test; Sakai's topic-set-size design): the power of the two-sided
  level-α test with G units at a true effect δ is
  P(T > t_c) + P(T < −t_c), T ~ noncentral t(G − 1, λ = δ·√G / s), t_c = t_{1−α/2, G−1}.
  The needed G is the smallest G ≥ 2 whose power reaches the target; the minimum detectable
  effect (MDE) at G is the δ whose power equals the target (bisection, vectorised over G).
  The variance estimate's uncertainty: s·√((G − 1) / χ²_{G−1}) at the 1 − α/2 and α/2
  quantiles bounds σ, and each bound gives a needed G.
- Simulation: ``sets`` unit sets of size G drawn with replacement from the residuals; set k
  has mean m_k and sd s_k, and shifted by δ its (1 − α) t interval lies above zero iff
  δ > t_c·s_k/√G − m_k =: δ_k. The share of sets that detect δ is #{δ_k < δ} / sets, so the
  simulated MDE is the target-power quantile of δ_k (no grid over δ), and the simulated
  needed G the smallest G (bisection over G) whose simulated MDE is at most the effect, searched
  up to ``SIMULATED_MAX_UNITS`` (beyond it the plan says "more than"). The sets are drawn in
  blocks of at most ``DRAWS`` values, so memory does not grow with G.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

MAX_UNITS = 10_000_000  # needed units beyond this are reported as "more than"
SETS = 2_000  # simulated unit sets per size
SIMULATED_MAX_UNITS = 100_000  # the simulated size search stops here: "more than"
DRAWS = 1 << 21  # residuals drawn at once (about 50 MB with the indices), whatever G
BISECTION_STEPS = 60


@dataclass(frozen=True)
class Pilot:
    """A pilot's differences as units: residuals r (mean 0), the observed mean difference,
    queries per unit m̄ (1 for query units) and the unit's name."""

    residuals: np.ndarray
    mean_diff: float
    queries_per_unit: float
    unit: str

    @property
    def units(self) -> int:
        return int(self.residuals.size)

    @property
    def sd(self) -> float:
        """s: the units' standard deviation (ddof 1); NaN below 2 units."""
        return float(np.std(self.residuals, ddof=1)) if self.units >= 2 else math.nan


def pilot(d: np.ndarray, clusters: np.ndarray | None = None) -> Pilot:
    """The pilot of differences ``d`` (NaN dropped), by query or by the cluster labels given."""
    d = np.asarray(d, dtype=float)
    keep = ~np.isnan(d)
    d = d[keep]
    mean = float(d.mean()) if d.size else math.nan
    if clusters is None:
        return Pilot(d - mean, mean, 1.0, "query")
    _, codes = np.unique(np.asarray(clusters)[keep], return_inverse=True)
    sums = np.bincount(codes, weights=d)
    sizes = np.bincount(codes).astype(float)
    per_unit = sizes.mean() if sizes.size else math.nan
    return Pilot((sums - mean * sizes) / per_unit, mean, float(per_unit), "cluster")


def power(effect, sd, units, alpha: float):
    """Two-sided paired t power at ``effect`` (δ) with ``units`` (G) and sd s, broadcast."""
    g = np.asarray(units, dtype=float)
    t_c = stats.t.ppf(1 - alpha / 2, g - 1)
    nc = np.asarray(effect, dtype=float) * np.sqrt(g) / sd
    wrong_side = np.nan_to_num(stats.nct.cdf(-t_c, g - 1, nc))  # NaN where it underflows
    return stats.nct.sf(t_c, g - 1, nc) + wrong_side


def mde(sd, units, alpha: float, target: float) -> np.ndarray:
    """The analytic MDE: s·e(G), e(G) the standardised δ/s whose power at G units equals
    ``target`` (bisection, vectorised over G ≥ 2; s broadcast)."""
    g = np.atleast_1d(np.asarray(units, dtype=float))
    low, high = np.zeros_like(g), np.ones_like(g)
    while np.any(short := power(high, 1.0, g, alpha) < target):
        high = np.where(short, high * 2, high)
    for _ in range(BISECTION_STEPS):
        mid = (low + high) / 2
        reached = power(mid, 1.0, g, alpha) >= target
        high, low = np.where(reached, mid, high), np.where(reached, low, mid)
    return np.asarray(sd, dtype=float) * high


def needed(effect, sd, alpha: float, target: float) -> np.ndarray:
    """The smallest G ≥ 2 whose analytic power at ``effect`` reaches ``target``, broadcast over
    effects and s; NaN where the effect or s is not positive or G would exceed ``MAX_UNITS``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.atleast_1d(np.asarray(effect, dtype=float) / np.asarray(sd, dtype=float))
    e = np.where(np.isfinite(e) & (e > 0), e, np.nan)
    low, high = np.ones_like(e), np.full_like(e, 2.0)  # power(low) < target <= power(high)
    while np.any(short := (power(e, 1.0, high, alpha) < target) & (high <= MAX_UNITS)):
        low, high = np.where(short, high, low), np.where(short, high * 2, high)
    while np.any(wide := high - low > 1):
        mid = np.floor((low + high) / 2)
        reached = power(e, 1.0, np.where(wide, mid, high), alpha) >= target
        high = np.where(wide & reached, mid, high)
        low = np.where(wide & ~reached, mid, low)
    return np.where(np.isnan(e) | (high > MAX_UNITS), np.nan, high)


def simulated_thresholds(residuals: np.ndarray, units: int, alpha: float, *, sets: int = SETS,
                         seed: int = 0) -> np.ndarray:
    """δ_k for ``sets`` unit sets of size G drawn from ``residuals``: the smallest shift whose
    (1 − α) t interval lies above zero."""
    rng = np.random.default_rng(seed)
    t_c = stats.t.ppf(1 - alpha / 2, units - 1)
    rows = max(1, DRAWS // units)  # sets per block; the blocks continue one random stream
    out = np.empty(sets)
    for start in range(0, sets, rows):
        drawn = residuals[rng.integers(0, residuals.size, size=(min(rows, sets - start), units))]
        out[start:start + len(drawn)] = (t_c * drawn.std(axis=1, ddof=1) / math.sqrt(units)
                                         - drawn.mean(axis=1))
    return out


def simulated_mde(residuals: np.ndarray, units: int, alpha: float, target: float, *,
                  sets: int = SETS, seed: int = 0) -> float:
    """The simulated MDE at G units: the ``target`` quantile of the sets' δ_k."""
    thresholds = simulated_thresholds(residuals, units, alpha, sets=sets, seed=seed)
    return float(np.quantile(thresholds, target))


def simulated_needed(residuals: np.ndarray, effect: float, alpha: float, target: float, *,
                     sets: int = SETS, seed: int = 0, start: int | None = None) -> int | None:
    """The smallest G whose simulated MDE is at most ``effect`` (bisection from ``start``,
    the analytic G); None above ``SIMULATED_MAX_UNITS`` (or for an effect ≤ 0)."""
    def detects(g: int) -> bool:
        return simulated_mde(residuals, g, alpha, target, sets=sets, seed=seed) <= effect

    if not effect > 0 or (start or 0) > SIMULATED_MAX_UNITS:
        return None
    high = max(start or 2, 2)
    while not detects(high):
        if high >= SIMULATED_MAX_UNITS:
            return None
        high = min(high * 2, SIMULATED_MAX_UNITS)
    low = 1
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if mid >= 2 and detects(mid) else (mid, high)
    return high


@dataclass(frozen=True)
class Plan:
    """One measure's (or slice's) plan. Units are queries, or clusters with ``queries_per_unit``
    queries each; ``*_queries`` are the units converted to queries (rounded up).

    mde / mde_simulated: the analytic and simulated MDE at the current units; needed: analytic
    units for ``min_effect`` (None: more than ``MAX_UNITS`` or undefined), with
    [needed_low, needed_high] from σ's (1 − α) interval; needed_simulated: the simulation's
    (None: not simulated, or more than ``needed_simulated_beyond`` units, the bound the
    search stopped at).
    """

    unit: str
    units: int
    queries_per_unit: float
    mean_diff: float
    sd: float
    sd_low: float
    sd_high: float
    alpha: float
    power: float
    min_effect: float
    mde: float
    mde_simulated: float
    needed: int | None
    needed_low: int | None
    needed_high: int | None
    needed_simulated: int | None
    undefined: str | None = None  # why the plan is undefined (None: it is defined)
    needed_simulated_beyond: int | None = None  # the simulation found none up to this many

    def queries(self, units: int | None) -> int | None:
        return None if units is None else math.ceil(units * self.queries_per_unit)

    def to_dict(self) -> dict:
        doc = asdict(self)
        for name in ("needed", "needed_low", "needed_high", "needed_simulated",
                     "needed_simulated_beyond"):
            doc[name.replace("needed", "needed_queries")] = self.queries(doc[name])
        return doc


def _count(value: float) -> int | None:
    return None if math.isnan(value) else int(value)


def undefined(p: Pilot) -> str | None:
    """Why no plan can be made from pilot ``p`` (None: one can): σ needs two units whose
    differences vary."""
    units = p.unit if p.units == 1 else "queries" if p.unit == "query" else f"{p.unit}s"
    if p.units < 2:
        return (f"{p.units} {units} with a value in both systems: σ of the differences needs "
                "at least 2; evaluate more queries")
    if not p.sd > 0:
        return (f"the {p.units} {units}' differences are all {p.mean_diff:.4g} (σ 0): "
                "nothing varies to plan from; evaluate more queries")
    return None


def plans(pilots: list[Pilot], effects, alpha: float, target: float, *, sets: int = SETS,
          seed: int = 0, simulate_needed: bool = True) -> list[Plan]:
    """The plan of every pilot for its minimum effect at level α and power ``target`` (the
    analytic parts vectorised over pilots); NaN and None where a pilot has fewer than 2 units
    or no variation (``undefined`` says which). ``simulate_needed`` False leaves
    ``needed_simulated`` None (its bisection over sizes is the slow part)."""
    g = np.array([p.units for p in pilots], dtype=float)
    sd = np.array([p.sd for p in pilots], dtype=float)
    defined = (g >= 2) & (sd > 0)
    g_ok = np.where(defined, g, 2.0)
    sd = np.where(defined, sd, np.nan)
    chi_low, chi_high = (stats.chi2.ppf(q, g_ok - 1) for q in (1 - alpha / 2, alpha / 2))
    sd_low, sd_high = sd * np.sqrt((g_ok - 1) / chi_low), sd * np.sqrt((g_ok - 1) / chi_high)
    effects = np.broadcast_to(np.asarray(effects, dtype=float), g.shape)
    detectable = np.where(defined, mde(sd, g_ok, alpha, target), np.nan)
    units = [needed(effects, s, alpha, target) for s in (sd, sd_low, sd_high)]
    out = []
    for i, p in enumerate(pilots):
        simulate = bool(defined[i])
        analytic = _count(units[0][i])
        found = (simulated_needed(p.residuals, float(effects[i]), alpha, target, sets=sets,
                                  seed=seed, start=analytic)
                 if simulate and simulate_needed else None)
        out.append(Plan(
            unit=p.unit, units=p.units, queries_per_unit=p.queries_per_unit,
            mean_diff=p.mean_diff, sd=p.sd, sd_low=float(sd_low[i]), sd_high=float(sd_high[i]),
            alpha=alpha, power=target, min_effect=float(effects[i]), mde=float(detectable[i]),
            mde_simulated=(simulated_mde(p.residuals, p.units, alpha, target, sets=sets,
                                         seed=seed) if simulate else math.nan),
            needed=analytic, needed_low=_count(units[1][i]), needed_high=_count(units[2][i]),
            needed_simulated=found, undefined=undefined(p),
            needed_simulated_beyond=(SIMULATED_MAX_UNITS if simulate and simulate_needed
                                     and found is None else None)))
    return out


def plan(p: Pilot, min_effect: float, alpha: float, target: float, **options) -> Plan:
    """One pilot's plan (``plans``)."""
    return plans([p], min_effect, alpha, target, **options)[0]
