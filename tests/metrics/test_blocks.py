"""A large run evaluated in blocks of whole queries (``releval.metrics.blocks``) gives exactly
the values, counts and errors of the same run evaluated whole, whatever the block size and
the number of threads, and the same values and counts with its blocks on a Dask cluster."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ranking import frames

from releval.errors import InputError
from releval.executor import Dask, Local, opened, using
from releval.metrics import blocks
from releval.metrics.engine import evaluate
from releval.metrics.judgments import Judgments
from releval.params.executor import DaskSettings

MEASURES = ["nDCG@3", "P@2", "R@5", "RR", "AP", "Judged@2", "NumRet", "Bpref", "IPrec@0.5"]


def _grouped(run: pd.DataFrame) -> pd.DataFrame:
    """The run with each query's rows consecutive (as a TREC file), in a shuffled order."""
    if run.empty:
        return run
    first = run.groupby("query_id", sort=False).ngroup()
    return run.assign(_g=first).sort_values("_g", kind="stable").drop(columns="_g")


def assert_same_evaluation(got, expected) -> None:
    """Two evaluations equal: the same refusal, or the same per-query table, summary and
    counts."""
    if isinstance(got, str) or isinstance(expected, str):
        assert got == expected
        return
    pd.testing.assert_frame_equal(got.per_query, expected.per_query)
    pd.testing.assert_frame_equal(got.summary, expected.summary)
    assert got.counts == expected.counts


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
    assert_same_evaluation(cut, whole)


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


@pytest.fixture(scope="module")
def dask():
    """A Dask executor of two workers, started once; Local stays the active one."""
    with opened("dask", DaskSettings(n_workers=2)) as executor, using(Local()):
        yield executor


def _generated(n_queries: int = 60) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A grouped run (0-12 docs a query, ties included) and graded qrels that judge some of
    its queries, some queries it does not rank, and some documents it does not retrieve."""
    rng = np.random.default_rng(3)
    run = pd.DataFrame([(f"q{q}", f"d{d}", float(rng.integers(0, 4)))
                        for q in rng.permutation(n_queries)
                        for d in rng.choice(40, rng.integers(0, 13), replace=False)],
                       columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(0, 4)))
                          for q in range(10, n_queries + 10) if rng.random() < 0.8
                          for d in rng.choice(40, rng.integers(1, 8), replace=False)],
                         columns=["query_id", "doc_id", "grade"])
    return run, qrels


@pytest.mark.parametrize("kw", [{}, {"common_only": True}, {"queries": ["q1", "q15", "zz"]}])
def test_blocks_on_a_dask_cluster_give_the_threads_and_the_whole_runs_values(dask, kw,
                                                                             monkeypatch):
    run, qrels = _generated()
    whole = evaluate(run, qrels, MEASURES, **kw)
    calls, original = [], Dask.map

    def spy(self, fn, todo, **k):
        calls.append(len(todo))
        return original(self, fn, todo, **k)

    monkeypatch.setattr(Dask, "map", spy)
    monkeypatch.setattr(blocks, "BLOCK_ROWS", 50)
    threads = evaluate(run, qrels, MEASURES, workers=2, **kw)
    with using(dask):
        cluster = evaluate(run, qrels, MEASURES, **kw)
    assert len(calls) == 1 and calls[0] >= 8  # the 8 blocks (+ the unranked) went there
    for cut in (threads, cluster):
        pd.testing.assert_frame_equal(cut.per_query, whole.per_query)
        pd.testing.assert_frame_equal(cut.summary, whole.summary)
        assert cut.counts == whole.counts


def test_blocks_on_a_dask_cluster_raise_the_whole_runs_error(dask):
    run, qrels = _generated()
    bad_qrels = qrels.assign(grade=qrels["grade"].where(qrels.index != 5, 9))
    bad_run = pd.concat([run.iloc[:300], run.iloc[299:]], ignore_index=True)  # a repeated doc
    for case in ((run, bad_qrels), (bad_run, qrels), (bad_run, bad_qrels)):
        whole = _evaluate(*case, 10**9, 1)
        assert isinstance(whole, str)
        with using(dask):
            assert _evaluate(*case, 50, None) == whole
