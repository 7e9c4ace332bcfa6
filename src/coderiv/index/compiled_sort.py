"""A spilled run's postings grouped by key in two compiled passes (numba, ``coderiv[fast]``):
the order a stable sort by key gives, without sorting the postings.

A run holds its documents one after the other, each document's keys once. Sorting its postings
by (key, document) is then a stable sort by key, which numpy does as a timsort of 64-bit keys
(about 0.9 s of CPU for 8 M postings, plus the gathers and their fresh memory). Here only the
distinct keys are sorted (numpy's vectorised sort of the keys, then the unique ones); a hash
table gives each posting its key's rank, and a counting pass places every posting's document
and value at its key's next free place: the same arrays, in about a third of the time. Without
numba, or before :func:`load`, :func:`group_run` takes the numpy path (same arrays, tested in
``tests/test_writer.py``). The compiled code is cached on disk by numba like
:mod:`coderiv.keys.compiled_terms`, whose :func:`~coderiv.keys.compiled_terms.load` must have
imported numba first (the indexing parent does so for large jobs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from coderiv.keys import compiled_terms

#: Fibonacci hashing's multiplier (2^64 / golden ratio): spreads any key set over the table.
_SPREAD = np.uint64(0x9E3779B97F4A7C15)

_KERNEL: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None = None
_FAILED = False
_LOCK = threading.Lock()


def _group(
    keys: np.ndarray, unique: np.ndarray, doc_counts: np.ndarray, first: int, vals: np.ndarray, spread: np.uint64
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The loop :func:`load` compiles: (postings per distinct key, documents and values in
    (key, document) order, largest value per key); ``unique`` is the sorted distinct keys."""
    n_unique = unique.shape[0]
    bits = 1
    while (1 << bits) < 2 * n_unique:
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    table = np.full(1 << bits, -1, np.int64)
    for rank in range(n_unique):
        slot = np.int64((unique[rank] * spread) >> shift)
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = rank
    n = keys.shape[0]
    ranks = np.empty(n, np.int32)
    place = np.zeros(n_unique + 1, np.int64)
    maxima = np.zeros(n_unique, np.uint32)
    for i in range(n):
        key = keys[i]
        slot = np.int64((key * spread) >> shift)
        while unique[table[slot]] != key:
            slot = (slot + 1) & mask
        rank = table[slot]
        ranks[i] = rank
        place[rank + 1] += 1
        if vals[i] > maxima[rank]:
            maxima[rank] = vals[i]
    counts = place[1:].astype(np.uint32)
    for rank in range(n_unique):
        place[rank + 1] += place[rank]
    docs = np.empty(n, np.uint32)
    out_vals = np.empty(n, np.uint32)
    i = 0
    for doc in range(doc_counts.shape[0]):
        number = np.uint32(first + doc)
        for _ in range(doc_counts[doc]):
            rank = ranks[i]
            at = place[rank]
            docs[at] = number
            out_vals[at] = vals[i]
            place[rank] = at + 1
            i += 1
    return counts, docs, out_vals, maxima


def load() -> bool:
    """Compile (or load from numba's cache) the loop when numba is already loaded by
    :func:`coderiv.keys.compiled_terms.load`; False otherwise (the numpy path then runs)."""
    global _KERNEL, _FAILED
    with _LOCK:
        if _KERNEL is not None or _FAILED or not compiled_terms.loaded():
            return _KERNEL is not None
        try:
            import numba

            kernel = numba.njit(cache=True, nogil=True)(_group)
            one = np.ones(1, np.uint64)
            kernel(one, one, np.ones(1, np.int64), 0, np.ones(1, np.uint32), _SPREAD)
        except Exception:  # noqa: BLE001 - an accelerator that cannot load is simply not used
            _FAILED = True
            return False
        _KERNEL = kernel
        return True


def group_run(
    keys: np.ndarray, doc_counts: np.ndarray, first: int, vals: np.ndarray, compiled: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The postings of documents ``first, first + 1, …`` (document i has the next
    ``doc_counts[i]`` entries of ``keys``/``vals``, its keys distinct) sorted by (key, document):
    (distinct keys uint64, postings per key uint32, documents uint32, values uint32, largest
    value per key uint32). The compiled loop when ``compiled`` and :func:`load` succeeds."""
    keys = np.ascontiguousarray(keys, np.uint64)
    vals = np.ascontiguousarray(vals, np.uint32)
    if not len(keys):
        empty = np.empty(0, np.uint32)
        return np.empty(0, np.uint64), empty, empty, empty, empty
    if compiled and load():
        assert _KERNEL is not None
        ordered = np.sort(keys)
        distinct = np.empty(len(ordered), bool)
        distinct[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=distinct[1:])
        unique = ordered[distinct]
        del ordered, distinct
        counts, docs, out_vals, maxima = _KERNEL(keys, unique, np.ascontiguousarray(doc_counts, np.int64), first, vals, _SPREAD)
        return unique, counts, docs, out_vals, maxima
    order = np.argsort(keys, kind="stable")  # documents ascend: stable by key is by (key, document)
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    docs = np.repeat(np.arange(first, first + len(doc_counts), dtype=np.uint32), doc_counts)[order]
    out_vals = vals[order]
    counts = np.diff(np.append(starts, len(keys))).astype(np.uint32)
    return sorted_keys[starts], counts, docs, out_vals, np.maximum.reduceat(out_vals, starts)
