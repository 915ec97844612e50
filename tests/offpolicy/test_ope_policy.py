"""The candidate policies: uniform; a table's probabilities per context and its rules, each
refused in one line naming the file, the line and the rule; a ranking's rule (the item at
rank k at position k, mixed with uniform by ε) and its refusals; the registry."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.offpolicy import policy


def log_of(contexts=("c1", "c2")) -> pd.DataFrame:
    log = pd.DataFrame({S.CONTEXT_ID: list(contexts), S.ITEM_ID: ["a"] * len(contexts),
                        S.POSITION: [1] * len(contexts)}, index=range(2, 2 + len(contexts)))
    log.attrs.update(source="log.csv", unit="line")
    return log


ACTIONS = np.array(["a", "b", "c"])


def policy_table(**changes) -> pd.DataFrame:
    """c1: a 0.5 / b 0.5 at position 1, c at position 2; c2: a at 1, b 0.25 / c 0.75 at 2."""
    frame = pd.DataFrame({
        S.CONTEXT_ID: ["c1", "c1", "c1", "c2", "c2", "c2"],
        S.ITEM_ID: ["a", "b", "c", "a", "b", "c"],
        S.POSITION: ["1", "1", "2", "1", "2", "2"],
        S.PROBABILITY: ["0.5", "0.5", "1", "1", "0.25", "0.75"]})
    for column, (row, value) in changes.items():
        frame.loc[row, column] = value
    return frame


def test_uniform_and_the_table_policy(tmp_path):
    np.testing.assert_array_equal(policy.uniform(log_of(), ACTIONS, 2), np.full((2, 3, 2), 1 / 3))
    policy_table().to_csv(tmp_path / "policy.csv", index=False)
    frame = policy.read_table(tmp_path / "policy.csv")
    dist = policy.from_table(frame, log_of(("c2", "c1", "c2")), ACTIONS, 2)
    c1 = [[0.5, 0.0], [0.5, 0.0], [0.0, 1.0]]
    c2 = [[1.0, 0.0], [0.0, 0.25], [0.0, 0.75]]
    np.testing.assert_array_equal(dist, np.array([c2, c1, c2]))
    assert policy.build("table", frame, log_of(), ACTIONS, 2).shape == (2, 3, 2)
    assert set(policy.POLICIES) == {"uniform", "table", "ranking"}


TABLE_RULES = [  # (changes, line, rule)
    ({S.PROBABILITY: (1, "1.2")}, 3, "probability must be a number in [0, 1], got '1.2'"),
    ({S.PROBABILITY: (4, "-0.1")}, 6, "probability must be a number in [0, 1], got '-0.1'"),
    ({S.PROBABILITY: (1, "0.4")}, 2,
     "probabilities of context_id 'c1' at position 1 sum to 0.9, not 1"),
    ({S.POSITION: (4, "3")}, 6, "position must be an integer in 1..2, got '3'"),
    ({S.ITEM_ID: (2, "z")}, 4, "item_id 'z' is not among the actions"),
    ({S.ITEM_ID: (1, "a")}, 3, "(context_id, item_id, position) repeated (first at line 2)"),
]


@pytest.mark.parametrize("changes, line, rule", TABLE_RULES)
def test_each_table_rule_is_one_line_naming_file_line_and_rule(tmp_path, changes, line, rule):
    path = tmp_path / "policy.csv"
    policy_table(**changes).to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        policy.from_table(policy.read_table(path), log_of(), ACTIONS, 2)
    assert str(caught.value) == f"{path}:line {line}: {rule}"


def test_a_context_of_the_log_missing_from_the_table_is_refused(tmp_path):
    path = tmp_path / "policy.csv"
    policy_table().to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        policy.from_table(policy.read_table(path), log_of(("c1", "c2", "c9")), ACTIONS, 2)
    assert str(caught.value) == (f"{path}: context_id 'c9' of the log (at line 4 of log.csv) is "
                                 "not in the candidate policy")


def run_of(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[S.QUERY_ID, S.DOC_ID, S.SCORE])


def test_the_ranking_rule_and_its_mixing_with_uniform():
    run = run_of([("c1", "c", 0.2), ("c1", "a", 0.9), ("c1", "b", 0.5),
                  ("c2", "b", 1.0), ("c2", "a", 1.0), ("c2", "c", 0.1)])
    dist = policy.from_ranking(run, log_of(), ACTIONS, 2)
    # c1 by score: a, b; c2 tied scores ordered by item id: a, b
    np.testing.assert_array_equal(dist[0], [[1, 0], [0, 1], [0, 0]])
    np.testing.assert_array_equal(dist[1], [[1, 0], [0, 1], [0, 0]])
    mixed = policy.from_ranking(run, log_of(), ACTIONS, 2, epsilon=0.3)
    np.testing.assert_allclose(mixed, 0.7 * dist + 0.3 / 3)
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0)
    ranked = pd.DataFrame({S.CONTEXT_ID: ["c1", "c1", "c2", "c2"],
                           S.ITEM_ID: ["c", "a", "b", "c"], S.RANK: [2, 1, 1, 2]})
    by_rank = policy.from_ranking(ranked, log_of(), ACTIONS, 2)
    np.testing.assert_array_equal(by_rank[0], [[1, 0], [0, 0], [0, 1]])
    np.testing.assert_array_equal(by_rank[1], [[0, 0], [1, 0], [0, 1]])


def test_the_ranking_rules_refusals():
    run = run_of([("c1", "a", 0.9), ("c1", "b", 0.5), ("c2", "b", 1.0)])
    with pytest.raises(InputError, match="the ranking of context 'c2' has fewer items than the "
                                         "slate's 2 positions"):
        policy.from_ranking(run, log_of(), ACTIONS, 2)
    with pytest.raises(InputError, match="context_id 'c2' of the log .* is not in the candidate"):
        policy.from_ranking(run.iloc[:2], log_of(), ACTIONS, 1)
    with pytest.raises(InputError, match="item 'a' ranked twice for context 'c1'"):
        policy.from_ranking(run_of([("c1", "a", 0.9), ("c1", "a", 0.5)]), log_of(), ACTIONS, 1)
    ranked = pd.DataFrame({S.CONTEXT_ID: ["c1", "c1"], S.ITEM_ID: ["a", "b"], S.RANK: [1, 1]},
                          index=[2, 3])
    ranked.attrs.update(source="run.csv", unit="line")
    with pytest.raises(InputError, match=r"^run\.csv:line 3: rank 1 repeated for context 'c1'$"):
        policy.from_ranking(ranked, log_of(("c1",)), ACTIONS, 1)
    with pytest.raises(InputError, match=r"epsilon must be in \[0, 1\], got 1.5"):
        policy.from_ranking(run, log_of(), ACTIONS, 1, epsilon=1.5)
    with pytest.raises(InputError, match="unknown policy kind 'greedy'; known: uniform, table, "
                                         "ranking"):
        policy.build("greedy", None, log_of(), ACTIONS, 1)
