import pandas as pd
import pytest

from releval.data import contracts as S
from releval.demo.judges import INJECTED, corrupt, simulate, simulate_round
from releval.judging.ingest import CONFLICT
from tests.judging.pools import hidden_grades, pool_table


@pytest.fixture
def pool():
    return pool_table()


@pytest.fixture
def truth(pool):
    return hidden_grades(pool)


def test_simulation_is_seeded_and_judges_differ_by_bias(pool, truth):
    big = pd.concat([pool.assign(blind_id=pool["blind_id"] + f"-{k}", doc_id=pool[S.DOC_ID]
                                 + f"-{k}") for k in range(25)], ignore_index=True)
    truth = big[[S.QUERY_ID, S.DOC_ID]].assign(**{S.GRADE: 1})  # no clipping at 1 ± 0.3
    rows = simulate(big, truth, seed=5, noise=0.3, bias=(0.0, 0.8, -0.8))
    pd.testing.assert_frame_equal(rows, simulate(big, truth, seed=5, noise=0.3,
                                                 bias=(0.0, 0.8, -0.8)))
    assert not rows.equals(simulate(big, truth, seed=6, noise=0.3, bias=(0.0, 0.8, -0.8)))
    means = rows.groupby(S.ANNOTATOR)[S.GRADE].mean()
    assert means["sim-judge-2"] > means["sim-judge-1"] > means["sim-judge-3"]
    assert rows[S.GRADE].between(0, 3).all()


def test_partial_coverage_leaves_no_pair_unjudged(pool, truth):
    rows = simulate(pool, truth, judges=4, coverage=0.3, seed=0)
    assert set(rows["blind_id"]) == set(pool["blind_id"])
    shares = rows.groupby(S.ANNOTATOR).size() / len(pool)
    assert len(shares) == 4 and (shares < 0.6).all()
    assert len(rows) < 0.6 * 4 * len(pool)


def test_a_pairs_simulated_grades_do_not_depend_on_the_rest_of_the_pool():
    from releval.demo.judges import simulate

    pool = pd.DataFrame({"pool_id": "P", "query_id": [f"q{i}" for i in range(40)],
                         "doc_id": "d", "blind_id": [f"B{i}" for i in range(40)]})
    truth = pd.DataFrame({"query_id": pool.query_id, "doc_id": "d", "grade": 2})
    whole = simulate(pool, truth, seed=4)
    part = simulate(pool.iloc[::-1].iloc[:15], truth, seed=4)
    key = ["blind_id", "annotator"]
    merged = part.merge(whole, on=key, suffixes=("_part", "_whole"))
    assert len(merged) == len(part) and (merged.grade_part == merged.grade_whole).all()


def test_a_round_grades_only_the_pairs_not_judged_yet(pool, truth):
    first = simulate_round(pool, truth, None, judges=2, seed=3, noise=0.6, max_grade=3,
                           corrupt_share=0)
    pd.testing.assert_frame_equal(first, simulate(pool, truth, judges=2, seed=4))  # 3 + round 1
    accepted = first[first[S.BLIND_ID].isin(pool[S.BLIND_ID].iloc[:30])]
    later = pool.assign(round=2)
    second = simulate_round(later, truth, accepted, judges=2, seed=3, noise=0.6, max_grade=3,
                            corrupt_share=0)
    left = later[~later[S.BLIND_ID].isin(accepted[S.BLIND_ID])]
    assert set(second[S.BLIND_ID]) == set(pool[S.BLIND_ID].iloc[30:])
    pd.testing.assert_frame_equal(second, simulate(left, truth, judges=2, seed=5))


def test_a_round_can_be_corrupted_to_exercise_the_quarantine(pool, truth):
    rows = simulate_round(pool, truth, None, judges=3, seed=0, noise=0.6, max_grade=3,
                          corrupt_share=0.1)
    pd.testing.assert_frame_equal(rows, corrupt(simulate(pool, truth, seed=1), share=0.1,
                                                seed=0))  # simulated with seed 0 + round 1
    damaged = rows[INJECTED].value_counts()  # 12 rows, 2 per kind, and 2 conflicting twins
    assert len(rows) == 3 * len(pool) + 2 and damaged.drop(CONFLICT).eq(2).all()
    assert damaged[CONFLICT] == 4 and len(damaged) == 6
    clean = simulate_round(pool, truth, None, judges=3, seed=0, noise=0.6, max_grade=3,
                           corrupt_share=0)
    assert INJECTED not in clean and len(clean) == 3 * len(pool)
