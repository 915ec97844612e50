import pytest

from tests.judging.pools import hidden_grades, pool_table


@pytest.fixture
def pool():
    return pool_table()


@pytest.fixture
def truth(pool):
    return hidden_grades(pool)
