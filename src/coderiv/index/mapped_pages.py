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
from collections.abc import Iterable
from typing import Any

import numpy as np


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
