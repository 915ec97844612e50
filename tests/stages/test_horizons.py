"""Several horizons in one run (``recommend.horizons_days``): each horizon's user-queries,
positives, measures and paired comparison equal a run with that ``horizon_days`` on the
same candidates; the novelty flag."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.interactions import cuts_of, user_queries
from releval.decision.compare import compare
from releval.decision.horizons import by_horizon, novelty
from releval.demo.recsys import generate_recsys
from releval.params import Params
from stages import evaluate

MEASURES = ["nDCG@10", "HR@10", "R@10", "AUC", "ECE", "Novelty@10", "Coverage@10", "PSP@10",
            "Serendipity@10"]
SEED = 5


def params(horizon: int, horizons: list[int]) -> Params:
    return Params.model_validate({
        "base": {"seed": SEED}, "prepare": {"source": "recsys_demo", "max_grade": 1},
        "recommend": {"horizon_days": horizon, "horizons_days": horizons, "holdout_users": 0.1,
                      "expected": "base"},
        "evaluate": {"measures": MEASURES, "splits": ["test"]},
        "candidates": {"systems": {"base": {"route": "popularity"},
                                   "cand": {"route": "cooccurrence"}}},
        "fusion": {"systems": {}}, "compare": {"baseline": "base", "candidate": "cand",
                                               "measures": ["nDCG@10", "HR@10"],
                                               "resamples": 500, "cluster": "user_id"}})


@pytest.fixture(scope="module")
def log():
    demo = generate_recsys(SEED, n_users=400, n_items=150, months=6)
    t1, t2 = cuts_of(demo.log, "quantiles", None, (0.75, 0.875))
    return demo, t1, t2


def made(log, horizon: int, horizons: tuple[int, ...] = ()):
    demo, t1, t2 = log
    return user_queries(demo.log, demo.items, t1, t2, horizon, True, 0.1, [], SEED, horizons)


def windows(queries: pd.DataFrame, items: pd.Series) -> dict[str, pd.DataFrame]:
    """Two systems' windows that depend on the user alone (as a route's do: the history
    before the cut), so a user gets the same window whichever horizon made the queries."""
    users = queries[S.USER_ID].to_numpy(dtype=object)
    code = (pd.util.hash_array(users, categorize=False) % 9973).astype(np.int64)
    out = {}
    for name, step in (("base", 7), ("cand", 11)):  # steps coprime with the 150 items
        item = (code[:, None] * 3 + np.arange(20)[None, :] * step) % len(items)
        out[name] = pd.DataFrame({
            S.QUERY_ID: np.repeat(queries[S.QUERY_ID].to_numpy(), 20),
            S.DOC_ID: items.to_numpy()[item.ravel()],
            S.RANK: np.tile(np.arange(1, 21), len(users)),
            S.SCORE: np.tile(1.0 / np.arange(1, 21), len(users)),
            S.PROBABILITY: np.tile(np.linspace(0.9, 0.05, 20), len(users))})
    return out


def scored(log, data, p: Params, runs):
    demo = log[0]
    return evaluate.run(p, evaluate.Inputs(runs, data.qrels, data.given_split, data.queries,
                                           data.documents,
                        {"qrels": "log"}, demo.log, None, data.horizons))


def test_each_horizon_equals_a_run_with_that_horizon(log):
    many = made(log, 30, (7, 14))
    runs = windows(many.queries, many.documents[S.DOC_ID])
    out = scored(log, many, params(30, [7, 14]), runs)
    main = scored(log, made(log, 30), params(30, []), runs)
    # the main figures stay those of horizon_days
    pd.testing.assert_frame_equal(out.per_query, main.per_query)
    assert out.summary["systems"] == main.summary["systems"]
    for days in (7, 14):
        single = made(log, days)
        rows = many.horizons[many.horizons[S.HORIZON_DAYS] == days]
        assert sorted(rows[S.QUERY_ID]) == sorted(single.queries[S.QUERY_ID])
        assert many.report["horizons"][str(days)] == single.report["splits"]
        alone = scored(log, single, params(days, []), {
            s: r[r[S.QUERY_ID].isin(single.queries[S.QUERY_ID])] for s, r in runs.items()})
        at = out.horizons[out.horizons[S.HORIZON_DAYS] == days].drop(columns=S.HORIZON_DAYS)
        pd.testing.assert_frame_equal(at.reset_index(drop=True), alone.per_query)
        block = out.summary["horizons"][str(days)]
        for system, by_measure in alone.summary["systems"].items():
            for measure, entry in by_measure.items():
                assert block["systems"][system][measure] == {
                    k: v for k, v in entry.items() if k not in ("ties", "tie_range")}
        assert block["users_scored"] == alone.summary["recommendation"]["users_scored"]
        # the paired comparison at the horizon is the single run's
        c = params(days, []).compare
        side = {s: alone.per_query.loc[alone.per_query[S.SYSTEM] == s,
                                       [S.QUERY_ID, S.MEASURE, S.VALUE]] for s in runs}
        clusters = single.queries.set_index(S.QUERY_ID)[S.USER_ID]
        expected = compare(side["base"], side["cand"], c.measures, clusters=clusters,
                           resamples=c.resamples, seed=SEED)["paired"]
        got = by_horizon(out.horizons, "base", "cand", c.measures,
                         clusters=many.queries.set_index(S.QUERY_ID)[S.USER_ID], min_effect=0.0,
                         resamples=c.resamples, alpha=0.05, seed=SEED)
        rows = [r for r in got["rows"] if r["horizon_days"] == days]
        assert [(r["n"], r["delta"], r["ci_low"], r["ci_high"], r["verdict"]) for r in rows] == [
            (e["n"], e["mean_diff"], e["ci_low"], e["ci_high"], e["verdict"]) for e in expected]
    assert got["days"] == [7, 14] and [f["measure"] for f in got["novelty"]] == c.measures


def row(days, measure, delta):
    ci = [None, None] if delta is None else [delta - 0.01, delta + 0.01]
    return {"horizon_days": days, "measure": measure, "delta": delta, "ci_low": ci[0],
            "ci_high": ci[1]}


def test_novelty_is_flagged_when_the_gain_shrinks_beyond_min_effect():
    rows = [row(7, "nDCG@10", 0.05), row(28, "nDCG@10", 0.01),  # shrinks by 0.04
            row(7, "HR@10", 0.05), row(28, "HR@10", 0.045),  # by 0.005
            row(7, "ECE", -0.02), row(28, "ECE", 0.01),  # lower is better: 0.02 → −0.01
            row(7, "R@10", 0.01), row(28, "R@10", 0.05),  # grows
            row(7, "RR", None), row(28, "RR", 0.01)]  # undefined at 7 days
    flags = {f["measure"]: f for f in novelty(rows, ["nDCG@10", "HR@10", "ECE", "R@10", "RR"],
                                              0.01)}
    assert flags["nDCG@10"]["novelty"] and flags["nDCG@10"]["shrink"] == pytest.approx(0.04)
    assert flags["nDCG@10"]["ci_short"] == pytest.approx([0.04, 0.06])
    assert flags["nDCG@10"]["ci_long"] == pytest.approx([0.0, 0.02])
    assert flags["HR@10"]["novelty"] is False
    assert flags["ECE"]["novelty"] and flags["ECE"]["shrink"] == pytest.approx(0.03)
    assert flags["R@10"]["novelty"] is False
    assert flags["RR"]["novelty"] is None
    assert novelty(rows, ["nDCG@10"], {"nDCG@10": 0.05})[0]["novelty"] is False
    assert novelty([row(7, "nDCG@10", 0.05)], ["nDCG@10"], 0.01) == []  # one horizon
