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

#: Bytes of large index files a process may hold resident before their pages are released
#: (:class:`Residency`): a report's containment search reads thousands of scattered keys of a
#: chunk store of gigabytes, and without releases every page it touched stays resident; a batch
#: of queries over a terms store smaller than this releases nothing.
RESIDENT_BUDGET = 128 << 20
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
    """:func:`release_arrays` over a :class:`~coderiv.index.format.postings.Postings`' arrays: its own
    and those of the objects holding some of them (document numbers, values, a split store's
    keys and offsets)."""
    holders = [value for value in vars(store).values() if hasattr(value, "_raw_low")]
    parts = {id(part): part for part in (store, *holders)}
    release_arrays(value for part in parts.values() for value in vars(part).values())


class Residency:
    """Keeps the resident set of a process that reads large memory-mapped files near what it
    reads now, not all it has read since it started.

    The readers of large files report each read (:meth:`reading`: the array read and an
    estimate of the bytes it touches). What may be resident is estimated per array as what was
    read of it since the last release, at most its size; once the sum reaches :attr:`budget`, the
    pages of every registered array (:meth:`add`) are released (:func:`release_arrays`). Reading
    the same files again and again (a batch of queries over a terms store smaller than the
    budget) releases nothing; scattered reads over a store larger than the budget (a report's
    containment search in a chunk store of gigabytes) are released as they go. The pages are
    clean copies of files that the kernel's page cache keeps, so a later read maps them again (a
    minor fault) and reads the same bytes: correctness never depends on when a release happens,
    only the peak resident memory does, about the budget plus what one read touches."""

    def __init__(self, budget: int = RESIDENT_BUDGET) -> None:
        self.budget = budget
        self.resident = 0
        self.releases = 0
        self._arrays: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()
        self._read: dict[int, list[int]] = {}  # key -> [bytes of the array, bytes read since the last release]
        self._lock = threading.Lock()

    def add(self, array: np.ndarray) -> int:
        """Release ``array``'s pages with the others' from now on (held weakly); the key its
        reads are reported under."""
        key = id(array)
        with self._lock:
            self._arrays[key] = array
            self._read[key] = [max(int(array.nbytes), 1), 0]
        return key

    def reading(self, key: int, nbytes: int) -> None:
        """A read of about ``nbytes`` of the array ``key`` is about to happen (or just did)."""
        with self._lock:
            entry = self._read.get(key)
            if entry is None:
                return
            size, read = entry
            entry[1] = min(size, read + nbytes)
            self.resident += entry[1] - read
            if self.resident < self.budget:
                return
            self.resident = 0
            self.releases += 1
            arrays = list(self._arrays.values())
            self._read = {k: [v[0], 0] for k, v in self._read.items() if k in self._arrays}
        release_arrays(arrays)


#: The process's one :class:`Residency`, which :class:`~coderiv.index.format.integrity.FileGuard` feeds.
RESIDENCY = Residency()
