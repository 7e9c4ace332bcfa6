"""Where checks run: a fixed pool of worker threads, so the event loop never blocks, and an
admission limit, so a burst queues a bounded number of checks and refuses the rest at once
(503 with ``Retry-After``) instead of piling up work nobody will wait for.

Threads, not processes: every worker shares the one memory-mapped index, and the heavy parts
(numpy over postings, suffix arrays in C) release the GIL.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from coderiv.errors import CoderivError

T = TypeVar("T")

#: Seconds a refused client is told to wait before retrying.
RETRY_AFTER = 5


class Busy(CoderivError):
    """Every worker is busy and the queue is full."""


class WorkPool:
    """``workers`` threads running checks; at most ``workers + queue`` admitted at once."""

    def __init__(self, workers: int | None = None, queue: int | None = None) -> None:
        self.workers = workers or max(1, os.cpu_count() or 1)
        self.capacity = self.workers + (queue if queue is not None else 4 * self.workers)
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="coderiv-check")
        self._lock = threading.Lock()
        self._admitted = 0

    @property
    def admitted(self) -> int:
        """Checks running or queued now."""
        return self._admitted

    def _admit(self) -> None:
        with self._lock:
            if self._admitted >= self.capacity:
                raise Busy(f"the server is busy ({self._admitted} checks running or queued); retry in {RETRY_AFTER} seconds")
            self._admitted += 1

    def _release(self, _: object = None) -> None:
        with self._lock:
            self._admitted -= 1

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn``; raises :class:`Busy` when the pool is full."""
        self._admit()
        try:
            future = self._executor.submit(fn)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(self._release)
        return future

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in the pool and await its result (raises :class:`Busy` when full)."""
        return await asyncio.wrap_future(self.submit(fn))

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
