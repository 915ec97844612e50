"""Where the heavy work runs: in this process, or on a Dask cluster (``base.executor``).

A stage maps one function over coarse blocks (document shards, query blocks, bootstrap draw
blocks), never over single items: ``executor.map(fn, blocks, shared={...})`` returns
``[fn(block, **shared) for block in blocks]`` in block order, and ``executor.keep(fn,
blocks, shared={...})`` the same results left where they were computed (Dask futures on the
workers; the values themselves locally), to be named inside the blocks of a later ``map``
(e.g. an index shard built once and searched block by block on the worker holding it).
``Local`` runs the blocks one
after the other in this process. ``Dask`` runs them as ``dask.distributed`` futures on a
cluster: the team's scheduler at ``base.dask.address``, else the cluster whose address the
pipeline flow passes its stages in ``RELEVAL_DASK_ADDRESS``, else a ``LocalCluster`` of
``base.dask.n_workers`` worker processes started for the stage. ``shared`` values are
scattered to every worker once. A worker that dies mid-block (killed, out of memory) costs
only its blocks: they are submitted again on the workers left (``RETRIES``), so the results
are those of an uninterrupted run, or the stage ends in one line. A block's result never
depends on where it ran, so a run's outputs are the same on either executor (the tests hold
sharded against single-process results); a result is checked only through the block
functions, which are plain functions of their inputs.

``active()`` is the executor the current stage opened (``using``); library code that can
split its work asks for it instead of taking an argument through every layer.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import resource
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from releval.errors import InputError
from releval.params.executor import DaskSettings, scheduler_address
from releval.progress import track

if TYPE_CHECKING:  # imported only when a run asks for Dask
    from distributed import Client

ADDRESS_ENV = "RELEVAL_DASK_ADDRESS"  # the cluster the pipeline flow started for its stages
# A LocalCluster's workers: one BLAS/OpenMP thread each (Dask's default), but not Dask's
# MALLOC_TRIM_THRESHOLD_=65536, with which glibc returns every freed block to the system and
# each large numpy buffer (a visibility mask, a score block) costs fresh page faults: about
# 4x slower on the shards' work here.
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}

RETRIES = 3  # a block lost with its worker is submitted again at most this often

log = logging.getLogger(__name__)


def peak_rss_mib() -> float:
    """This process's peak resident memory in MiB (``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Local:
    """Every block in this process, in order."""

    name: Literal["local"] = "local"

    @property
    def workers(self) -> int:
        return 1

    def map(self, fn: Callable, blocks: Sequence, *, shared: dict | None = None,
            description: str = "blocks") -> list:
        shared = shared or {}
        return [fn(block, **shared) for block in track(
            blocks, description=description, disable=len(blocks) < 2)]

    def keep(self, fn: Callable, blocks: Sequence, *, shared: dict | None = None,
             description: str = "blocks") -> list:
        return self.map(fn, blocks, shared=shared, description=description)

    def peak_memory_mib(self) -> list[float]:
        return [peak_rss_mib()]

    def describe(self) -> dict:
        return {"executor": "local", "workers": 1}


def _address(s: DaskSettings) -> tuple[str | None, tuple[str, ...]]:
    """The scheduler to reach and where it was given (an InputError's source and key):
    ``base.dask.address`` (checked at load), else ``RELEVAL_DASK_ADDRESS``, checked here by
    the same rule (``scheduler_address``); (None, ()) for a new LocalCluster."""
    if s.address:
        return s.address, ("params", "base.dask.address")
    given = os.environ.get(ADDRESS_ENV)
    if not given:
        return None, ()
    try:
        return scheduler_address(given), (ADDRESS_ENV,)
    except ValueError as exc:
        raise InputError(str(exc), ADDRESS_ENV) from None


class Dask:
    """Blocks as ``dask.distributed`` futures. The cluster is reached (or a LocalCluster
    started) on first use, so a stage that maps nothing never starts one; ``close`` stops
    what was started."""

    name: Literal["dask"] = "dask"

    def __init__(self, settings: DaskSettings):
        self.settings = settings
        self.cluster = "remote" if settings.address else "local"
        self._client: Client | None = None
        self._stack = contextlib.ExitStack()

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _connect(self) -> Client:
        """A client of ``settings.address``, else of the flow's cluster
        (``RELEVAL_DASK_ADDRESS``), else of a new LocalCluster. A scheduler that does not
        answer is an InputError naming its address and where it was given."""
        import dask
        from distributed import Client, LocalCluster

        _quiet_dask()
        s = self.settings
        address, named = _address(s)
        if address:
            try:
                return self._stack.enter_context(Client(address, timeout="10s"))
            except (OSError, TimeoutError) as exc:
                raise InputError(f"no Dask scheduler answers at {address}: {exc}",
                                 *named) from None
        with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}):
            cluster = self._stack.enter_context(LocalCluster(
                n_workers=s.n_workers, threads_per_worker=s.threads_per_worker,
                memory_limit=s.memory_limit, processes=True, dashboard_address=None))
        client = self._stack.enter_context(Client(cluster))
        client.wait_for_workers(s.n_workers, timeout=120)  # a loaded machine starts slowly
        return client

    def close(self) -> None:
        self._stack.close()
        self._client = None

    @property
    def workers(self) -> int:
        return max(1, len(self.client.scheduler_info(n_workers=-1)["workers"]))

    def _submit(self, fn: Callable, blocks: Sequence, shared: dict | None,
                description: str) -> list:
        """One future per block (futures named inside a block are resolved on the worker),
        waited for with progress; an error in a block is raised here. A block lost with its
        worker (killed, or its scattered data gone with it) is submitted again on the
        workers left, up to ``RETRIES`` times; then, or when the scheduler gives up on a
        block that killed every worker it ran on (``KilledWorker``), an InputError in one
        line."""
        from distributed import KilledWorker, as_completed

        scattered = {k: self.client.scatter(v, broadcast=True, hash=False)
                     for k, v in (shared or {}).items()}
        futures: list = [None] * len(blocks)
        pending = list(range(len(blocks)))
        for attempt in range(RETRIES + 1):
            workers = sorted(self.client.scheduler_info(n_workers=-1)["workers"]) or [None]
            for n, i in enumerate(pending):
                futures[i] = self.client.submit(
                    fn, self._placed(blocks[i], workers[n % len(workers)]), pure=False,
                    **scattered)
            for future in track(as_completed([futures[i] for i in pending]),
                                description=description, total=len(pending),
                                disable=len(pending) < 2 or attempt > 0):
                if future.status == "error" and isinstance(future.exception(), KilledWorker):
                    raise InputError(f"a block ({description}) killed each Dask worker it "
                                     "ran on (out of memory? see base.dask.memory_limit)",
                                     "dask")
                if future.status == "error":
                    future.result()  # the block's own exception, not a gather of all
            pending = [i for i in pending if futures[i].status != "finished"]
            if not pending:
                return futures
            log.warning("%d block(s) lost with a Dask worker; submitted again", len(pending))
        raise InputError(f"{len(pending)} of {len(blocks)} blocks ({description}) were lost "
                         f"with their Dask workers {RETRIES + 1} times (workers killed, or out "
                         "of memory: see base.dask.memory_limit)", "dask")

    def _placed(self, block, worker: str | None):
        """``block``, scattered first to ``worker`` unless it names a future (data passed
        inside a task goes through the scheduler's task graph, several times slower for a
        250,000-document shard). Blocks are sent one by one, round robin over the workers,
        as they are submitted, so the workers start on the first while the next is
        serialised; one whose worker has died goes to any other."""
        from distributed import Future

        if isinstance(block, Future) or (isinstance(block, tuple | list) and any(
                isinstance(item, Future) for item in block)):
            return block
        try:
            return self.client.scatter([block], workers=worker and [worker], hash=False)[0]
        except (OSError, KeyError):  # the worker died meanwhile: to any worker left
            return self.client.scatter([block], hash=False)[0]

    def map(self, fn: Callable, blocks: Sequence, *, shared: dict | None = None,
            description: str = "blocks") -> list:
        futures = self._submit(fn, blocks, shared, description)
        results = self.client.gather(futures)
        for future in futures:
            future.release()
        return results

    def keep(self, fn: Callable, blocks: Sequence, *, shared: dict | None = None,
             description: str = "blocks") -> list:
        """The blocks' results as futures on the workers that computed them (released when
        the returned list is dropped)."""
        return self._submit(fn, blocks, shared, description)

    def peak_memory_mib(self) -> list[float]:
        """Each worker process's peak resident memory in MiB, in worker-address order."""
        peaks = self.client.run(peak_rss_mib)
        return [peaks[w] for w in sorted(peaks)]

    def describe(self) -> dict:
        info = self.client.scheduler_info(n_workers=-1)["workers"].values()
        return {"executor": "dask", "cluster": self.cluster,
                "address": self.client.scheduler.address, "workers": len(info),
                "threads": int(sum(w.get("nthreads", 0) for w in info))}


Executor = Local | Dask

_ACTIVE: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("executor",
                                                                         default=None)


def active() -> Executor:
    """The executor of the work under way (``using``); ``Local`` outside one."""
    return _ACTIVE.get() or Local()


@contextlib.contextmanager
def using(executor: Executor) -> Iterator[Executor]:
    """Make ``executor`` the ``active()`` one inside the block."""
    token = _ACTIVE.set(executor)
    try:
        yield executor
    finally:
        _ACTIVE.reset(token)


def _quiet_dask() -> None:
    for name in ("distributed", "distributed.scheduler", "distributed.nanny",
                 "distributed.worker", "distributed.core", "distributed.http.proxy"):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextlib.contextmanager
def opened(kind: str, dask: DaskSettings | None = None) -> Iterator[Executor]:
    """The executor ``kind`` ("local" | "dask") for the block, made ``active()``; a cluster
    it started is closed after it."""
    if kind not in ("local", "dask"):
        raise InputError(f"executor must be local or dask, got {kind!r}", "params",
                         "base.executor")
    executor = Local() if kind == "local" else Dask(dask or DaskSettings())
    try:
        with using(executor):
            yield executor
    finally:
        if isinstance(executor, Dask):
            executor.close()


def of(params: Any) -> contextlib.AbstractContextManager[Executor]:
    """``opened`` for a ``Params``' ``base.executor`` and ``base.dask``."""
    return opened(params.base.executor, params.base.dask)
