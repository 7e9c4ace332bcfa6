"""The writer locks this process holds, closed by every forked child first thing
(:func:`~coderiv.system.child_processes.prepare_child`): an analysis worker must never keep an
index locked after its parent is gone. Kept apart from the worker pools so that taking a lock
imports nothing of multiprocessing."""

from __future__ import annotations

import contextlib
import os

#: File descriptors of the writer locks this process holds (:func:`hold_lock_fd`). A forked child
#: (an analysis worker) closes them first thing, so that it never keeps an index locked after
#: its parent is gone.
HELD_LOCK_FDS: set[int] = set()


def hold_lock_fd(fd: int) -> None:
    """Record ``fd`` as a held writer lock: forked children close it (:func:`prepare_child`)."""
    HELD_LOCK_FDS.add(fd)


def drop_lock_fd(fd: int) -> None:
    """``fd`` no longer holds a lock (it is about to be closed)."""
    HELD_LOCK_FDS.discard(fd)


def release_inherited_locks() -> None:
    """In a forked child: close the writer-lock descriptors inherited from the parent, so that
    the lock dies with the parent and never with the last of its children."""
    for fd in list(HELD_LOCK_FDS):
        with contextlib.suppress(OSError):
            os.close(fd)
    HELD_LOCK_FDS.clear()
