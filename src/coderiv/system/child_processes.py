"""Worker processes that never outlive their parent and never keep its index locked.

Indexing forks analysis workers (and range-sorting workers in the writer). A forked child
inherits every file descriptor, the writer lock's among them, and is not stopped by its
parent's death: after a ``kill -9`` of ``coderiv index`` its workers used to live on as
orphans, blocked on a pipe, holding the lock (every later run said "another coderiv process
is writing the index") and the caller's stdout (``coderiv index … | cat`` never returned).

:func:`prepare_child` runs first in every worker: it closes the inherited lock descriptors,
asks the kernel to kill the worker when its parent dies (Linux ``PR_SET_PDEATHSIG``), exits at
once if the parent is already gone, and leaves Ctrl-C to the parent, which stops the pool.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext
from typing import Any

from coderiv.system.inherited_locks import release_inherited_locks
from coderiv.system.libc import c_function

#: prctl(2) option: the signal a process receives when its parent thread exits.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when ``parent`` exits; exit now if it already has."""
    prctl = c_function("prctl", (ctypes.c_int,) + (ctypes.c_ulong,) * 4)
    if prctl is not None:  # (without it, the liveness check below still runs)
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


#: mallopt(3) options of glibc: the size from which an allocation is its own mapping, and the
#: free memory at the heap's top past which it is given back to the kernel.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: A worker's allocations up to this size come from its heap, and freed memory up to twice it
#: stays there (a worker's batches take a few tens of MB at a time).
WORKER_HEAP_BYTES = 64 << 20


def keep_freed_memory(size: int = WORKER_HEAP_BYTES) -> bool:
    """Have glibc's malloc keep freed memory for the next allocations instead of handing it back
    to the kernel at once. A worker allocates and frees arrays of a few MB for every batch; by
    default each comes from a fresh mapping (or a trimmed heap), whose pages the kernel faults
    in and zeroes again (measured: docs/performance-history.md). False where malloc is not
    glibc's (nothing changes)."""
    mallopt = c_function("mallopt", (ctypes.c_int, ctypes.c_int))
    if mallopt is None:  # not glibc
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, size)) and bool(mallopt(M_TRIM_THRESHOLD, 2 * size))


def prepare_child(parent: int, initializer: Callable[..., Any] | None = None, *initargs: Any) -> None:
    """First thing in a worker: no inherited locks, death with the parent, Ctrl-C ignored (the
    parent handles it), freed memory kept for the next batches (:func:`keep_freed_memory`), then
    the pool's own initializer."""
    release_inherited_locks()
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    keep_freed_memory()
    if initializer is not None:
        initializer(*initargs)


def worker_pool(
    workers: int, initializer: Callable[..., Any] | None = None, initargs: tuple[Any, ...] = (),
    mp_context: BaseContext | None = None,
) -> ProcessPoolExecutor:
    """A process pool whose workers run :func:`prepare_child` before ``initializer``."""
    return ProcessPoolExecutor(
        workers, mp_context=mp_context, initializer=prepare_child, initargs=(os.getpid(), initializer, *initargs)
    )


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool on an error or an interrupt: queued work is cancelled and the parent does not
    wait for running batches (its workers die with it)."""
    pool.shutdown(wait=False, cancel_futures=True)
