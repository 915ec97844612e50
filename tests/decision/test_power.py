"""Power and query-set planning against statsmodels, a simulation of the decision's own CI,
and the MDE's 1/√n law."""

import math

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from releval.decision import power as P
from releval.decision.stats import bootstrap_ci

ALPHA, TARGET = 0.05, 0.8


def _pilot_differences(seed: int, sd: float, n: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, sd, n) + rng.choice([-0.2, 0.0, 0.3], n, p=[0.1, 0.8, 0.1])


@pytest.mark.parametrize("seed,sd,effect", [(1, 0.2, 0.02), (2, 0.3, 0.05), (3, 0.1, 0.03),
                                            (4, 0.25, 0.1), (5, 0.15, 0.2)])
def test_the_needed_queries_equal_statsmodels_paired_t_solution_within_one(seed, sd, effect):
    p = P.pilot(_pilot_differences(seed, sd))
    expected = TTestPower().solve_power(effect_size=effect / p.sd, alpha=ALPHA, power=TARGET,
                                        alternative="two-sided")
    assert abs(P.needed(effect, p.sd, ALPHA, TARGET)[0] - math.ceil(expected)) <= 1


@pytest.mark.parametrize("units", [5, 17, 48, 132, 1000])
def test_the_mde_equals_statsmodels_detectable_effect(units):
    sd = 0.21
    expected = TTestPower().solve_power(nobs=units, alpha=ALPHA, power=TARGET,
                                        alternative="two-sided") * sd
    assert P.mde(sd, units, ALPHA, TARGET)[0] == pytest.approx(expected, rel=1e-4)


def test_the_mde_shrinks_as_one_over_root_n():
    n = np.array([100, 400, 1600, 6400])
    mde = P.mde(0.3, n, ALPHA, TARGET)
    scaled = mde * np.sqrt(n)
    assert np.ptp(scaled) / scaled.mean() < 0.01
    assert mde[1] / mde[0] == pytest.approx(0.5, rel=0.01)


def test_planned_sets_reach_the_stated_power_and_size_under_the_decisions_bootstrap_ci():
    """1,000 query sets of the planned size drawn from a pilot's differences: with a true
    effect of min_effect, the share whose percentile-bootstrap CI excludes zero is the
    stated power (±3 points); with no effect it is α (±3 points)."""
    pilot = P.pilot(_pilot_differences(7, 0.2, 400))
    min_effect = 0.05
    n = int(P.needed(min_effect, pilot.sd, ALPHA, TARGET)[0])
    rng = np.random.default_rng(11)
    detected = {0.0: 0, min_effect: 0}
    for k in range(1000):
        drawn = pilot.residuals[rng.integers(0, pilot.units, n)]
        for effect in detected:
            low, high = bootstrap_ci(drawn + effect, resamples=400, alpha=ALPHA, seed=k)
            detected[effect] += low > 0 or high < 0
    assert abs(detected[min_effect] / 1000 - TARGET) <= 0.03
    assert abs(detected[0.0] / 1000 - ALPHA) <= 0.03


def test_the_simulated_plan_agrees_with_the_analytic_one_on_normal_differences():
    pilot = P.pilot(np.random.default_rng(3).normal(0.0, 0.2, 2000))
    plan = P.plan(pilot, 0.03, ALPHA, TARGET)
    assert plan.mde_simulated == pytest.approx(plan.mde, rel=0.05)
    assert plan.needed_simulated == pytest.approx(plan.needed, rel=0.08)
    assert plan.needed_low <= plan.needed <= plan.needed_high


def test_clusters_count_units_and_convert_to_queries():
    d = _pilot_differences(9, 0.2, 240)
    by_query = P.plan(P.pilot(d), 0.05, ALPHA, TARGET, simulate_needed=False)
    singletons = P.plan(P.pilot(d, np.arange(d.size)), 0.05, ALPHA, TARGET, simulate_needed=False)
    assert singletons.needed == by_query.needed and singletons.unit == "cluster"
    users = np.repeat(np.arange(60), 4)  # four queries per user, users differ
    shifted = d + np.repeat(np.random.default_rng(2).normal(0, 0.2, 60), 4)
    clustered = P.plan(P.pilot(shifted, users), 0.05, ALPHA, TARGET, simulate_needed=False)
    naive = P.plan(P.pilot(shifted), 0.05, ALPHA, TARGET, simulate_needed=False)
    assert clustered.units == 60 and clustered.queries_per_unit == 4
    assert clustered.to_dict()["needed_queries"] > naive.needed  # correlated queries count less


def test_a_pilot_without_variation_or_units_plans_nothing():
    for d in ([0.1], [0.2, 0.2, 0.2]):
        plan = P.plan(P.pilot(np.array(d)), 0.05, ALPHA, TARGET)
        assert plan.needed is None and math.isnan(plan.mde) and plan.needed_simulated is None
    assert np.isnan(P.needed([0.0, 0.1], [0.2, 0.0], ALPHA, TARGET)).all()


def test_the_simulation_stops_at_its_bound_and_says_so():
    """An effect far below what the pilot can see: the analytic plan counts its queries, the
    simulated search stops at its bound and the plan says "more than" it."""
    p = P.pilot(_pilot_differences(1, 0.3))
    plan = P.plan(p, 0.0005, ALPHA, TARGET)
    assert plan.needed > P.SIMULATED_MAX_UNITS
    assert plan.needed_simulated is None
    assert plan.to_dict()["needed_queries_simulated_beyond"] == P.SIMULATED_MAX_UNITS


def test_the_simulations_memory_does_not_grow_with_the_size():
    """The sets are drawn in blocks: the peak at 100,000 units is that of a block (about
    50 MB), not of 2,000 × 100,000 draws (3.2 GB)."""
    import tracemalloc

    residuals = P.pilot(_pilot_differences(2, 0.2)).residuals
    tracemalloc.start()
    P.simulated_thresholds(residuals, P.SIMULATED_MAX_UNITS, ALPHA, sets=200)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * P.DRAWS * 8, peak
