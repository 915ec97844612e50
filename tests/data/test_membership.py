"""releval.data.membership.member: pandas' isin, answered by pyarrow."""

import numpy as np
import pandas as pd
import pytest

from releval.data.membership import member

RNG = np.random.default_rng(7)
IDS = [f"q{i}" for i in range(50)]


@pytest.mark.parametrize("trial", range(20))
def test_member_is_isin(trial):
    values = pd.Series(RNG.choice(IDS + [None], size=int(RNG.integers(0, 300))), dtype="str")
    among = pd.Series(RNG.choice(IDS + [None], size=int(RNG.integers(0, 40))), dtype="str")
    for right in (among, pd.Index(among), among.tolist()):
        assert member(values, right).tolist() == values.isin(among).tolist()
    assert member(pd.Index(values), among).tolist() == pd.Index(values).isin(among).tolist()


def test_other_types_are_left_to_pandas():
    assert member(pd.Series([1, 2, 3]), [2, 5]).tolist() == [False, True, False]
    assert member(pd.Series(["a", "b"]), []).tolist() == [False, False]
    assert member(pd.Series(["1", "2"]), [1, 2]).tolist() == [False, False]
