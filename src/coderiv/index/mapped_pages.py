"""Dropping a memory-mapped store's pages from this process's resident set.

A store's arrays are read-only memory maps of its ``.npy`` files. Every page a read touches
stays counted in the process's resident set until the kernel needs the memory back, and the
kernel maps pages around each one touched (read-around, fault-around): the open's sampled
checks, 65,536 reads spread over each array, bring in most of every file (4.3 GB for the 1M
4-shingle store), and a pass over a whole store brings in all of it. The pages are clean copies
of the files, so ``MADV_DONTNEED`` only unmaps them: the kernel's page cache keeps them, and a
later read maps them again (a minor fault). Arrays that are not memory-mapped are left alone.
"""

from __future__ import annotations

import mmap
import threading
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

#: Bytes of large index files a process reads between two releases of their pages
#: (:class:`Residency`): a report's containment search reads thousands of scattered keys of a
#: chunk store of gigabytes, and without releases every page it touched stays resident.
RESIDENT_BUDGET = 64 << 20
#: Files at least this large are released by :data:`RESIDENCY` (smaller ones, the terms store
#: of a modest index and the document tables, stay mapped: a query reads them again soon).
LARGE_FILE = 16 << 20


def release_arrays(arrays: Iterable[object]) -> None:
    """Unmap the resident pages of every array here that is a view of a read-only memory map."""
    if not hasattr(mmap, "MADV_DONTNEED"):  # not Linux/BSD: nothing to do
        return
    for array in arrays:
        base = array
        while isinstance(base, np.ndarray):
            base = base.base
        if isinstance(base, memoryview):  # an array made by np.frombuffer of a map (.integrity.npy_array)
            base = base.obj
        if isinstance(base, mmap.mmap):
            base.madvise(mmap.MADV_DONTNEED)


def release_store(store: Any) -> None:
    """:func:`release_arrays` over a :class:`~coderiv.index.postings.Postings`' arrays (its own,
    its document numbers' and its values')."""
    parts = (store, getattr(store, "docs", None), getattr(store, "vals", None))
    release_arrays(value for part in parts if part is not None for value in vars(part).values())


class Residency:
    """Keeps the resident set of a process that reads large memory-mapped files near what it
    reads now, not what it has read since it started.

    The readers of large files report each read (:meth:`reading`, an estimate of the bytes it
    touches); once :attr:`budget` bytes were read since the last release, the pages of every
    registered array (:meth:`add`) are released (:func:`release_arrays`). The pages are clean
    copies of files that the kernel's page cache keeps, so a later read maps them again (a minor
    fault) and reads the same bytes; correctness never depends on when a release happens, only
    the peak resident memory does: it is at most what one read touches plus the budget."""

    def __init__(self, budget: int = RESIDENT_BUDGET) -> None:
        self.budget = budget
        self.read = 0
        self.releases = 0
        self._arrays: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def add(self, array: np.ndarray) -> None:
        """Release ``array``'s pages with the others' from now on (held weakly)."""
        with self._lock:
            self._arrays[id(array)] = array

    def reading(self, nbytes: int) -> None:
        """A read of about ``nbytes`` of the registered arrays is about to happen (or just did)."""
        with self._lock:
            self.read += nbytes
            if self.read < self.budget:
                return
            self.read = 0
            self.releases += 1
            arrays = list(self._arrays.values())
        release_arrays(arrays)


#: The process's one :class:`Residency`, which :class:`~coderiv.index.integrity.FileGuard` feeds.
RESIDENCY = Residency()
