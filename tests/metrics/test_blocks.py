"""A large run evaluated in blocks of whole queries (``releval.metrics.blocks``) gives exactly
the values, counts and errors of the same run evaluated whole, whatever the block size and
the number of threads."""

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ranking import frames

from releval.errors import InputError
from releval.metrics import blocks, evaluate
from releval.metrics.judgments import Judgments

MEASURES = ["nDCG@3", "P@2", "R@5", "RR", "AP", "Judged@2", "NumRet", "Bpref", "IPrec@0.5"]


def _grouped(run: pd.DataFrame) -> pd.DataFrame:
    """The run with each query's rows consecutive (as a TREC file), in a shuffled order."""
    if run.empty:
        return run
    first = run.groupby("query_id", sort=False).ngroup()
    return run.assign(_g=first).sort_values("_g", kind="stable").drop(columns="_g")


def _evaluate(run, qrels, block_rows, workers, **kw):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "BLOCK_ROWS", block_rows)
        try:
            return evaluate(run, qrels, MEASURES, workers=workers, **kw)
        except InputError as exc:
            return str(exc)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames(), st.integers(1, 7), st.integers(1, 3),
       st.sampled_from([{}, {"common_only": True}, {"queries": ["q1", "é", "zz"]}]))
def test_blocks_give_the_whole_runs_values(data, block_rows, workers, kw):
    run, qrels = data
    run = _grouped(run)
    whole = _evaluate(run, qrels, 10**9, 1, **kw)
    cut = _evaluate(run, qrels, block_rows, workers, **kw)
    if isinstance(whole, str):
        assert cut == whole
        return
    pd.testing.assert_frame_equal(cut.per_query, whole.per_query)
    pd.testing.assert_frame_equal(cut.summary, whole.summary)
    assert cut.counts == whole.counts


def test_a_run_whose_queries_are_apart_is_evaluated_whole():
    run = pd.DataFrame({"query_id": ["a", "b", "a"], "doc_id": ["x", "y", "z"],
                        "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["z", "y"], "grade": [1, 1]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks, "BLOCK_ROWS", 1)
        assert blocks.plan(run, None) is None
        grouped = blocks.plan(_grouped(run), None)
    assert [len(b.run) for b in grouped.blocks] == [2, 1]
    assert grouped.unranked(Judgments(qrels.assign(query_id=["a", "c"]), 3)).queries == ["c"]
