"""The executor: blocks in order, shared values, kept results named in later blocks, errors
from a worker as one line, and a scheduler that does not answer."""

import pytest

from releval.errors import InputError
from releval.executor import Local, active, opened, using
from releval.params.executor import DaskSettings


def scaled(block, factor):
    return block * factor


def added(block):
    kept, extra = block
    return kept + extra


def refused(block):
    raise InputError(f"rule broken by block {block}", "documents.parquet", "7")


@pytest.fixture(scope="module")
def cluster():
    with opened("dask", DaskSettings(n_workers=2)) as dask:
        yield dask


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_map_keeps_block_order_and_keep_hands_results_to_later_blocks(kind, cluster):
    executor = Local() if kind == "local" else cluster
    before = active()
    with using(executor):
        assert active() is executor
        assert executor.map(scaled, list(range(7)), shared={"factor": 3}) == [
            0, 3, 6, 9, 12, 15, 18]
        kept = executor.keep(scaled, [1, 2, 3], shared={"factor": 10})
        assert executor.map(added, [(k, i) for i, k in enumerate(kept)]) == [10, 21, 32]
    assert active() is before


def test_the_cluster_is_described_for_the_receipt(cluster):
    described = cluster.describe()
    assert (described["executor"], described["cluster"], described["workers"]) == (
        "dask", "local", 2)
    assert len(cluster.peak_memory_mib()) == 2


def test_a_bad_row_found_on_a_worker_keeps_its_one_line(cluster):
    with pytest.raises(InputError) as caught:
        cluster.map(refused, [4])
    assert str(caught.value) == "documents.parquet:7: rule broken by block 4"


def test_a_scheduler_that_does_not_answer_is_named_in_one_line():
    with opened("dask", DaskSettings(address="tcp://127.0.0.1:9")) as dask:
        with pytest.raises(InputError, match=r"^params:base\.dask\.address: no Dask "
                                             r"scheduler answers at tcp://127\.0\.0\.1:9"):
            dask.map(abs, [1])


def test_an_unknown_executor_is_refused():
    with pytest.raises(InputError, match="executor must be local or dask"):
        with opened("threads"):
            pass
