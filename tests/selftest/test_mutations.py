"""Every relation goes red on the defect it exists to catch: each broken subject of
``tests.selftest.mutants`` fails its relation (reached, failed, with an example), while the
subjects it leaves alone still pass."""

import pytest

from releval.selftest import RELATIONS, selftest, totals
from tests.selftest.conftest import NO_LOG
from tests.selftest.mutants import MUTANTS


def test_every_relation_has_a_mutant():
    assert set(MUTANTS) == set(RELATIONS)


@pytest.mark.parametrize("relation", sorted(MUTANTS))
def test_a_broken_subject_turns_its_relation_red(relation, demo, demo_params):
    subjects, route = MUTANTS[relation]
    rows = selftest(demo_params, demo.documents, demo.queries, demo.ground_truth, NO_LOG,
                    subjects, relations=[relation])
    rows = rows[rows["status"] != "not_applicable"]
    broken = rows if route is None else rows[rows["route"] == route]
    assert len(broken) and (broken["status"] == "failed").all(), broken
    assert (broken["failed"] > 0).all() and (broken["example"] != "").all()
    assert (~broken["ok"]).all() and not totals(rows)["ok"]
    assert (rows.drop(broken.index)["status"] == "passed").all()
