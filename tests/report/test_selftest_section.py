"""The report's self-test section: the headline, one row per system × relation with its
precondition, a failure's example, and each oracle of the differential parity."""

import pandas as pd

from releval.report.selftest import selftest_lines
from tests.report import sample
from tests.report.sample import model


def test_the_section_counts_relations_trials_reached_and_passed_and_each_oracle():
    lines = selftest_lines(model("selftest", sample.SELFTEST), sample.SELFTEST_ROWS,
                           sample.DIFFERENTIAL)
    text = "\n".join(lines)
    assert ("3 relations × 100 trials: 98 reached their branch, 98 passed — **all passed** "
            "(1 not applicable).") in lines[0]
    assert "| bm25 | term_permutation | bag of words | 50 | 48 | 48 | ✓ passed |" in lines
    assert ("| team | doc_rename | a scorer | 0 | 0 | 0 | n/a: a team's run file has no scorer "
            "to re-run |") in lines
    assert "| pytrec_eval | 0.5 | 52 | 1 | 2 | 2 | 0 |" in lines
    assert "| ranx | not installed (the test extras) | — | — | — | — | — |" in lines
    assert "| score_ties | 12 |" in text  # cases per code path, for the oracles that ran


def test_a_failed_relation_shows_its_example_and_no_outputs_give_no_section():
    rows = sample.SELFTEST_ROWS.assign(status=["failed", "passed", "not_applicable"],
                                       passed=[40, 50, 0], failed=[8, 0, 0],
                                       example=["q7: order changed at rank 3", "", "n/a"])
    totals = model("selftest", {"ok": False, "not_passed": 1})
    lines = selftest_lines(totals, rows, pd.DataFrame())
    assert "**1 not passed**" in lines[0]
    assert ("| bm25 | term_permutation | bag of words | 50 | 48 | 40 | ✗ FAILED: q7: order "
            "changed at rank 3 |") in lines
    assert selftest_lines(None, None) == [] and selftest_lines({}, rows) == []
