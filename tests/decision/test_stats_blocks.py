"""The bootstrap in seeded draw blocks: the layout is the documented one and depends on B
alone, so the CI is identical here and on a Dask cluster of one or two workers, whatever the
chunk size."""

import numpy as np
import pytest

from releval.decision import stats
from releval.decision.stats import bootstrap_ci, paired
from releval.executor import Dask, Local, opened, using
from releval.params.executor import DaskSettings

RESAMPLES = 3_500  # DRAW_BLOCK 1000: four blocks, the last one short


@pytest.fixture(scope="module")
def clusters():
    """Dask executors of one and two workers, started once; Local stays the active one."""
    with (opened("dask", DaskSettings(n_workers=1)) as one,
          opened("dask", DaskSettings(n_workers=2)) as two, using(Local())):
        yield {1: one, 2: two}


@pytest.fixture
def shipped(monkeypatch):
    """The number of blocks of each ``Dask.map`` call."""
    calls, original = [], Dask.map

    def spy(self, fn, blocks, **kw):
        calls.append(len(blocks))
        return original(self, fn, blocks, **kw)

    monkeypatch.setattr(Dask, "map", spy)
    return calls


def _data():
    rng = np.random.default_rng(11)
    base, cand = rng.random(400), rng.random(400) + 0.01
    base[[3, 50]] = np.nan
    return base, cand, np.repeat(np.arange(80), 5)


def _results():
    base, cand, users = _data()
    d = (cand - base)[~np.isnan(base)]
    return [bootstrap_ci(d, resamples=RESAMPLES, seed=4),
            paired(base, cand, resamples=RESAMPLES, seed=4),
            paired(base, cand, clusters=users, resamples=RESAMPLES, seed=4)]


def test_the_ci_is_identical_here_and_on_one_or_two_workers(clusters, shipped, monkeypatch):
    here = _results()
    assert shipped == []
    monkeypatch.setattr(stats, "DASK_MIN_VALUES", 0)
    for n, dask in clusters.items():
        with using(dask):
            assert dask.workers == n
            assert _results() == here
    assert shipped == [4] * 6  # every bootstrap went to the cluster, in four blocks


def test_small_work_is_not_shipped(clusters, shipped):
    with using(clusters[2]):
        here = _results()
    assert shipped == [] and here == _results()


@pytest.mark.parametrize("rows", [7, 1_000, 10**6])  # per chunk: across, at, within blocks
def test_the_layout_is_the_documented_one_whatever_the_chunk_size(monkeypatch, rows):
    base, cand, users = _data()
    d = (cand - base)[~np.isnan(base)]
    monkeypatch.setattr(stats, "CHUNK_BYTES", d.size * 16 * rows)
    boot = np.random.SeedSequence(4).spawn(2)[0]
    means = np.concatenate([  # block k: its draws from boot.spawn(4)[k], in order
        d[np.random.default_rng(stream).integers(0, d.size, (count, d.size))].mean(axis=1)
        for stream, count in zip(boot.spawn(4), [1_000, 1_000, 1_000, 500], strict=True)])
    expected = tuple(float(q) for q in np.quantile(means, [0.025, 0.975]))
    assert bootstrap_ci(d, resamples=RESAMPLES, seed=4) == expected


def test_paired_comparisons_in_threads_are_the_ones_run_in_turn_under_the_callers_executor(
        monkeypatch):
    rng = np.random.default_rng(3)
    calls = [((rng.random(n), rng.random(n)), {"resamples": 2_000, "seed": s})
             for n, s in ((40, 0), (55, 1), (40, 0), (70, 2))]
    seen = []
    real = stats.executor.active

    def active():
        seen.append(real())
        return seen[-1]

    monkeypatch.setattr(stats.executor, "active", active)
    marker = Local()
    with using(marker):
        threaded = stats.paired_all(calls)
    assert [c.to_dict() for c in threaded] == [paired(*a, **k).to_dict() for a, k in calls]
    assert seen[:len(calls)] and all(e is marker for e in seen[:len(calls)])
