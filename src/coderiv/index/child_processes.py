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
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext
from typing import Any

from coderiv.index.storage import release_inherited_locks

#: prctl(2) option: the signal a process receives when its parent thread exits.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when ``parent`` exits; exit now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the liveness check below still runs
            pass
    if os.getppid() != parent:
        os._exit(1)


def prepare_child(parent: int, initializer: Callable[..., Any] | None = None, *initargs: Any) -> None:
    """First thing in a worker: no inherited locks, death with the parent, Ctrl-C ignored (the
    parent handles it), then the pool's own initializer."""
    release_inherited_locks()
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
