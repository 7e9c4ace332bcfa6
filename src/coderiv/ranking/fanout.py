"""Running one step of a sharded query on every shard at once: on threads of this process
(:class:`ThreadFanout`), or as tasks on the workers of a Dask cluster (:class:`DaskFanout`)
that keep the sharded index open between queries.

A step is a module-level function ``step(index, shard, *args)`` of an opened
:class:`~coderiv.index.shards.ShardedIndex`; it returns what the client merges (a shard's top k,
or its documents' scores). A Dask worker opens the index once per set and keeps it (every file
memory-mapped) in :func:`open_on_worker`'s cache, keyed by the index folder and invalidated when
the live set changes; each shard is sent to the same worker query after query, so its pages stay
in that worker's memory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from coderiv.errors import CoderivError
from coderiv.index.shards import ShardedIndex

Step = Callable[..., Any]


class Fanout(Protocol):
    """Runs ``step(index, shard, *args)`` for each shard; results in the order of ``shards``."""

    def map(self, step: Step, shards: Sequence[int], *args: Any) -> list[Any]: ...


class ThreadFanout:
    """The shards' steps on threads of this process (numpy's kernels release the GIL while they
    sum postings). ``threads``: at most this many at once (default: one per core, at most one
    per shard; 1 runs them one after the other)."""

    def __init__(self, index: ShardedIndex, threads: int | None = None) -> None:
        self.index = index
        self.threads = max(1, min(threads or os.cpu_count() or 1, len(index.shards) or 1))
        self._pool: ThreadPoolExecutor | None = None

    def map(self, step: Step, shards: Sequence[int], *args: Any) -> list[Any]:
        if self.threads == 1 or len(shards) < 2:
            return [step(self.index, s, *args) for s in shards]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="coderiv-shard")
        return list(self._pool.map(lambda s: step(self.index, s, *args), shards))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


_OPEN: dict[str, ShardedIndex] = {}
_OPEN_LOCK = threading.Lock()


def open_on_worker(root: str, set_name: str) -> ShardedIndex:
    """The sharded index at ``root`` as this process keeps it open (memory-mapped), reopened
    when its live set is no longer ``set_name``; a one-line error if the live set is another
    one than the client's (a build committed during the query)."""
    with _OPEN_LOCK:
        index = _OPEN.get(root)
        if index is None or index.set_dir.name != set_name:
            index = ShardedIndex.open(root)
            _OPEN[root] = index
        if index.set_dir.name != set_name:
            raise CoderivError(f"the sharded index {root} changed during the query (now {index.set_dir.name}): run it again")
        return index


def held_indexes() -> dict[str, str]:
    """The sharded indexes this process keeps open: folder -> set (``client.run`` shows each
    worker's)."""
    with _OPEN_LOCK:
        return {root: index.set_dir.name for root, index in _OPEN.items()}


def run_on_worker(root: str, set_name: str, step: Step, shard: int, *args: Any) -> Any:
    """A step as a Dask task: on the worker's open copy of the index."""
    return step(open_on_worker(root, set_name), shard, *args)


class DaskFanout:
    """The shards' steps as tasks on the workers of ``client`` (a ``distributed.Client``); each
    shard has a home worker (round robin over the workers present at the start) that keeps it
    open, and another worker takes it if that one is gone. Workers must see the index folder
    at the same path as this process."""

    def __init__(self, index: ShardedIndex, client: Any) -> None:
        self.client = client
        self.root = str(index.root.resolve())
        self.set_name = index.set_dir.name
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise CoderivError("the Dask cluster has no workers")
        self.home = {s: workers[i % len(workers)] for i, s in enumerate(sorted(index.shards))}

    def map(self, step: Step, shards: Sequence[int], *args: Any) -> list[Any]:
        futures = [
            self.client.submit(
                run_on_worker, self.root, self.set_name, step, s, *args,
                workers=[self.home[s]], allow_other_workers=True, pure=False,
            )
            for s in shards
        ]
        try:
            return list(self.client.gather(futures))
        except CoderivError:
            raise
        except Exception as exc:  # KilledWorker, CommClosedError, a worker's own failure
            raise CoderivError(f"a shard's query failed on the Dask cluster ({type(exc).__name__}: {' '.join(str(exc).split())})") from None

    def close(self) -> None:
        """Nothing to release here (the client is the caller's)."""
