"""The value formats shared by the reports and the command line."""

import math

import numpy as np
import pytest

from releval.documents.decision import Decision
from releval.documents.ingest import HardNegatives
from releval.documents.summary import Entry
from releval.report.formats import (
    beside_precision,
    family_and_cutoff,
    hard_negatives,
    interval,
    mark,
    markdown_table,
    measure_value,
    number,
    rule_value,
    significant,
    verdict,
    wins_ties_losses,
)
from tests import documents


@pytest.mark.parametrize("value, spec, shown", [
    (0.123456, ".4f", "0.1235"), (0.05, "+.4f", "+0.0500"), (-0.2, "+.3f", "-0.200"),
    (1 / 3, ".1%", "33.3%"), (np.float64(0.5), ".4f", "0.5000"), (7, ".4f", "7.0000"),
    (None, ".4f", "—"), (math.nan, ".4f", "—"), (np.nan, "+.4f", "—"),
])
def test_number_writes_undefined_as_a_dash(value, spec, shown):
    assert number(value, spec) == shown


def test_measure_value_rounds_counts_and_keeps_four_decimals_otherwise():
    assert measure_value(12.6, integer=True) == "13"
    assert measure_value(0.32714, integer=False) == "0.3271"


def test_interval_tally_mark_and_verdict():
    assert interval(-0.01, 0.2) == "[-0.0100, +0.2000]"
    assert interval(0.01, None, "+.3f") == "[+0.010, —]"
    assert wins_ties_losses({"wins": 3, "ties": 2, "losses": 1}) == "3/2/1"
    assert (mark(True), mark(False), verdict(True), verdict(False)) == ("✓", "✗", "PASS", "FAIL")


@pytest.mark.parametrize("value, terminal, report", [
    (None, "—", "—"), (0, "0", "0"), (0.0234567, "0.0235", "0.02346"),
    (250.0, "250.0", "250"), (-123.456, "-123.5", "-123.5"), (math.nan, "nan", "—"),
    ("text", "text", "text"),
])
def test_gate_values_on_the_terminal_and_in_the_report(value, terminal, report):
    assert rule_value(value) == terminal
    assert significant(value) == report


def test_markdown_table_has_a_header_a_rule_and_one_line_per_row():
    assert markdown_table(["", "a"], [["x", 1], ["y", None]]) == [
        "|  | a |", "|---|---|", "| x | 1 |", "| y | None |"]
    assert markdown_table(["a", "b"], []) == ["| a | b |", "|---|---|"]


def test_tie_note_shows_the_count_where_non_zero_and_the_range_where_it_moves():
    from releval.report.formats import tie_note

    def entry(**ties):
        return Entry.model_validate(documents.entry(0.5, **ties))

    assert tie_note(entry(ties=3, tie_range=[0.41, 0.45])) == (
        "score ties 3 queries · range [0.4100, 0.4500]")
    assert tie_note(entry(ties=1, tie_range=[0.5, 0.5])) == "score ties 1 query"
    assert tie_note(entry(ties=0, tie_range=[0.25, 0.5])) == "score ties range [0.2500, 0.5000]"
    for quiet in (entry(ties=0, tie_range=[0.5, 0.5]), entry(ties=None, tie_range=None),
                  entry(), None):
        assert tie_note(quiet) == ""


@pytest.mark.parametrize("measures, ordered", [
    (["nDCG@10", "P@10", "AP", "Judged@10", "HardNeg@10"],
     ["nDCG@10", "P@10", "HardNeg@10", "AP", "Judged@10"]),
    (["HardNeg@10", "HardNeg@5", "P@5", "P(rel=2)@10", "P@10"],  # after the last P@k of its k
     ["P@5", "HardNeg@5", "P(rel=2)@10", "P@10", "HardNeg@10"]),
    (["HardNeg@20", "P@10", "nDCG@10"], ["HardNeg@20", "P@10", "nDCG@10"]),  # no P@20: stays
    (["nDCG@10", "AP"], ["nDCG@10", "AP"]),
])
def test_hardneg_at_k_goes_right_after_p_at_k(measures, ordered):
    assert beside_precision(measures) == ordered


def test_family_and_cutoff_as_written():
    assert family_and_cutoff("P(rel=2)@10") == ("P", "10")
    assert family_and_cutoff("ECE(bins=10)") == ("ECE", None)
    assert family_and_cutoff("IPrec@0.5") == ("IPrec", "0.5")
    assert family_and_cutoff("not a measure") == (None, None)


def test_hard_negatives_in_words_from_the_ingest_counts():
    assert hard_negatives(HardNegatives(marked=9, kept=5, added=3, overruled=1)) == (
        "Hard negatives: the qrels mark 8 judgments as hard negatives (judged not relevant, "
        "yet deliberately close to a relevant document); of 9 marked pairs, 5 kept the mark as "
        "judged, 3 were added as the dataset judged them (not pooled) and 1 lost it to a "
        "relevant grade.")
    assert "mark 1 judgment as" in hard_negatives(
        HardNegatives(marked=1, kept=1, added=0, overruled=0))


def test_not_applicable_rules_are_listed_apart_in_the_decision_markdown():
    from releval.report.decision import _gate_section
    from releval.report.formats import rule_mark

    gate = {"passed": True, "baseline": "bm25", "candidate": "hybrid", "controlled": True,
            "rules": [
        {"name": "judged Judged@10", "passed": True, "value": 0.9, "threshold": 0.8,
         "reason": "covered", "applicable": True},
        {"name": "coverage", "passed": True, "value": None, "threshold": None,
         "reason": "not applicable: no minimum", "applicable": False}]}
    lines = _gate_section(Decision.model_validate(documents.whole("decision", gate)))
    table = [line for line in lines if line.startswith("|")]
    assert any("judged Judged@10" in line for line in table)
    assert not any("coverage" in line for line in table)  # never a pass in the table
    assert "- n/a coverage: not applicable: no minimum" in lines
    assert [rule_mark(r) for r in gate["rules"]] == ["✓", "n/a"]
