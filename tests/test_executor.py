"""The executor: blocks in order, shared values, kept results named in later blocks, errors
from a worker as one line, a worker killed mid-block, and a scheduler that does not answer."""

import os
import signal
import threading
import time
from pathlib import Path

import dask
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


def marked(block, factor, started):
    """``block * factor`` after a second, its worker's pid left in ``started`` first."""
    (Path(started) / f"{block}-{os.getpid()}").touch()
    time.sleep(1)
    return block * factor


def fatal(block):
    os.kill(os.getpid(), signal.SIGKILL)


def within(seconds: float, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, failing the test when it has not returned in ``seconds``
    (SIGALRM: the client must stay on this thread)."""
    def late(*_):
        raise TimeoutError(f"no result in {seconds} s: the executor hangs")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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


def test_a_worker_killed_mid_block_costs_only_its_blocks(tmp_path):
    """SIGKILL to a worker process while it runs a block: the lost blocks run again on the
    workers left, and the results are those of an uninterrupted run."""
    blocks, shared = list(range(9)), {"factor": 3, "started": str(tmp_path)}
    with opened("dask", DaskSettings(n_workers=3)) as cluster:
        victim = min(cluster.client.run(os.getpid).values())

        def kill_mid_block():
            while not any(f.name.endswith(f"-{victim}") for f in tmp_path.iterdir()):
                time.sleep(0.05)
            os.kill(victim, signal.SIGKILL)

        killer = threading.Thread(target=kill_mid_block, daemon=True)
        killer.start()
        results = within(300, cluster.map, marked, blocks, shared=shared)
        killer.join(timeout=5)
        assert not killer.is_alive()  # the worker was killed while its block ran
    assert results == Local().map(marked, blocks, shared=shared) == [3 * b for b in blocks]


def test_a_block_that_kills_every_worker_it_runs_on_ends_in_one_line():
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            opened("dask", DaskSettings(n_workers=1)) as cluster:
        with pytest.raises(InputError) as caught:
            within(300, cluster.map, fatal, [1])
    assert str(caught.value) == ("dask: a block (blocks) killed each Dask worker it ran on "
                                 "(out of memory? see base.dask.memory_limit)")
