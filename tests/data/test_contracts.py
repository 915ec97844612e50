"""The rules of the data contracts: one message per broken rule, naming file, row and rule."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.errors import InputError
from releval.metrics.ranking import Ranking

NO_QRELS = pd.DataFrame(columns=list(S.QRELS_COLUMNS))


def run(rows, columns=(S.QUERY_ID, S.DOC_ID, S.RANK, S.SCORE)):
    frame = pd.DataFrame(rows, columns=list(columns))
    frame.attrs.update(source="run.tsv", unit="line")
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return frame


BAD_RUNS = [
    (run([("q1", "d1", 1, 2.0), ("q1", "d1", 2, 1.0)]), "line 2",
     "duplicate doc_id 'd1' in the ranked list of query 'q1' (first at line 1)"),
    (run([("q1", "d1", 1, 2.0), ("q1", "d2", 1, 1.0)]), "line 2",
     "rank 1 repeated in query 'q1' (first at line 1)"),
    (run([("q1", "d1", 0, 2.0)]), "line 1", "rank must be ≥ 1, got 0"),
    (run([("q1", "d1", 1.5, 2.0)]), "line 1", "rank must be an integer, got 1.5"),
    (run([("q1", "d1", np.nan)], (S.QUERY_ID, S.DOC_ID, S.SCORE)), "line 1",
     "score is NaN or missing"),
    (run([(None, "d1", 1, 2.0)]), "line 1", "query_id is missing"),
]


@pytest.mark.parametrize("frame, where, rule", BAD_RUNS)
def test_check_run_and_the_evaluator_hold_runs_to_the_same_rules(frame, where, rule):
    with pytest.raises(InputError) as alone:
        S.check_run(frame)
    with pytest.raises(InputError) as engine:
        Ranking(frame, NO_QRELS)
    assert (alone.value.source, alone.value.where, alone.value.rule) == ("run.tsv", where, rule)
    assert str(engine.value) == str(alone.value)


def test_a_valid_run_passes():
    S.check_run(run([("q1", "d1", 1, 2.0), ("q1", "d2", 2, 1.0), ("q2", "d1", 1, 0.5)]))


def test_required_columns_unique_values_and_integers():
    with pytest.raises(InputError, match=r"^run\.tsv: missing column\(s\) grade; found"):
        S.require_columns(run([]), (S.QUERY_ID, S.GRADE), "qrels")
    with pytest.raises(InputError, match="table is required"):
        S.require_columns(None, (S.QUERY_ID,), "labels")
    with pytest.raises(InputError, match=r"line 2: doc_id 'd1' is not unique"):
        S.require_unique(run([("q1", "d1", 1, 2.0), ("q2", "d1", 1, 2.0)]), S.DOC_ID, "docs")
    assert S.integer("depth", np.int64(3)) == 3
    for bad in (0, True, 2.0, "3"):
        with pytest.raises(InputError, match="depth must be an integer ≥ 1"):
            S.integer("depth", bad)
    assert S.integer("seed", -4, low=None) == -4


def test_window_rules_flag_gaps_repeats_and_rising_scores():
    window = pd.DataFrame({S.SYSTEM: "s", S.QUERY_ID: ["q1"] * 3 + ["q2"] * 2,
                           S.RANK: [1, 2, 4, 2, 1], S.SCORE: [3.0, 2.0, 1.0, 5.0, 4.0]})
    assert S.rank_contiguous(window).tolist() == [True, True, False, True, True]
    assert S.score_order_ok(window).tolist() == [True, True, True, False, True]
