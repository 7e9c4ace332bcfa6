"""The index writer's compiled loops (numba, ``coderiv[fast]``), each giving exactly what its
numpy path gives, with less CPU and without fresh arrays per posting.

**Grouping a run by key** (:func:`group_run`): the order a stable sort by key gives, without
sorting the postings.

A run holds its documents one after the other, each document's keys once. Sorting its postings
by (key, document) is then a stable sort by key, which numpy does as a timsort of 64-bit keys
(about 0.9 s of CPU for 8 M postings, plus the gathers and their fresh memory). Here only the
distinct keys are sorted (numpy's vectorised sort of the keys, then the unique ones); a hash
table gives each posting its key's rank, and a counting pass places every posting's document
and value at its key's next free place: the same arrays, in about a third of the time. Without
numba, or before :func:`load`, :func:`group_run` takes the numpy path (same arrays, tested in
``tests/test_compiled_writer.py``).

**The cosine statistics of a written terms store** (:func:`cosine_passes`): W_d and each term's
largest x_dt / W_d, as :mod:`~coderiv.index.builder.cosine_statistics` computes them, in two
sequential passes over the stored arrays (document numbers decoded from their low bits and
runs, values from their byte and side table) instead of numpy passes over decoded, weighted
copies of every key range (several arrays of 8 bytes a posting, each a fresh allocation). Every
floating-point operation is the numpy path's, in the same order: x_dt = tf(f_dt)·w_t, its
square added to a per-chunk sum in posting order as ``np.bincount`` adds it, each chunk's sum
then added to the total, so W_d is the same to the last bit (tested).

The compiled code is cached on disk by numba like :mod:`coderiv.keys.compiled_terms`, whose
:func:`~coderiv.keys.compiled_terms.load` must have imported numba first (the indexing parent
does so for large jobs); without it the numpy paths run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from coderiv.index.format.counts import CountValues
from coderiv.index.format.packed_runs import run_after
from coderiv.index.format.split_numbers import SplitNumbers
from coderiv.jit import LazyKernels
from coderiv.keys import compiled_terms

#: Fibonacci hashing's multiplier (2^64 / golden ratio): spreads any key set over the table.
_SPREAD = np.uint64(0x9E3779B97F4A7C15)


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
    table_keys = np.zeros(1 << bits, np.uint64)  # the key in each used slot: one memory access a probe
    for rank in range(n_unique):
        slot = np.int64((unique[rank] * spread) >> shift)
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = rank
        table_keys[slot] = unique[rank]
    n = keys.shape[0]
    ranks = np.empty(n, np.int32)
    place = np.zeros(n_unique + 1, np.int64)
    maxima = np.zeros(n_unique, np.uint32)
    for i in range(n):
        key = keys[i]
        slot = np.int64((key * spread) >> shift)
        while table_keys[slot] != key or table[slot] < 0:
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


def _decode_key(
    low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray, vals: np.ndarray, over_at: np.ndarray,
    over_val: np.ndarray, start: int, end: int, cursor: np.ndarray, docs_out: np.ndarray, vals_out: np.ndarray,
) -> None:
    """Postings [start, end) of a walk over ascending positions decoded into ``docs_out`` and
    ``vals_out`` (their first ``end - start`` entries); ``cursor`` holds the walk's run and next
    escape (both 0 to start) and is advanced in place: called once a key, where a helper called
    once a posting and returning its cursors would not be inlined (:func:`~coderiv.index.format.packed_runs.run_after`)."""
    run, escape = cursor[0], cursor[1]
    for p in range(start, end):
        run = run_after(run_at, p, run)
        v = np.int64(vals[p])
        if escape < over_at.shape[0] and over_at[escape] == p:
            v = np.int64(over_val[escape])
            escape += 1
        docs_out[p - start] = (np.int64(run_high[run]) << 16) | np.int64(low[p])
        vals_out[p - start] = v
    cursor[0], cursor[1] = run, escape


def _squares(
    low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray, vals: np.ndarray, over_at: np.ndarray,
    over_val: np.ndarray, ptr: np.ndarray, weights: np.ndarray, tf_table: np.ndarray, chunk_ends: np.ndarray,
    key_rows: np.ndarray, n_rows: int, n_docs: int,
) -> np.ndarray:
    """Σ_t x_dt² per (row of the key, document), at ``row · n_docs + document``, summed chunk by
    chunk as the numpy path does: within a chunk (keys up to ``chunk_ends[c]``) in posting order
    from zero, as ``np.bincount`` adds, then added to the total."""
    squares = np.zeros(n_rows * n_docs)
    part = np.zeros(n_rows * n_docs)
    longest = np.max(ptr[1:] - ptr[:-1]) if ptr.shape[0] > 1 else 0
    docs, values, cursor = np.empty(longest, np.int64), np.empty(longest, np.int64), np.zeros(2, np.int64)
    key = 0
    for end in chunk_ends:
        part[:] = 0.0
        while key < end:
            w = weights[key]
            base = np.int64(key_rows[key]) * n_docs
            _decode_key(low, run_at, run_high, vals, over_at, over_val, ptr[key], ptr[key + 1], cursor, docs, values)
            for i in range(ptr[key + 1] - ptr[key]):
                x = tf_table[values[i] - 1] * w
                part[base + docs[i]] += x * x
            key += 1
        for d in range(n_rows * n_docs):
            squares[d] += part[d]
    return squares


def _max_units(
    low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray, vals: np.ndarray, over_at: np.ndarray,
    over_val: np.ndarray, ptr: np.ndarray, weights: np.ndarray, tf_table: np.ndarray, norms: np.ndarray,
) -> np.ndarray:
    """max_d x_dt / W_d for every key (NaN as ``np.maximum`` propagates it)."""
    n_keys = ptr.shape[0] - 1
    out = np.zeros(n_keys)
    longest = np.max(ptr[1:] - ptr[:-1]) if n_keys > 0 else 0
    docs, values, cursor = np.empty(longest, np.int64), np.empty(longest, np.int64), np.zeros(2, np.int64)
    for key in range(n_keys):
        w = weights[key]
        top = 0.0
        _decode_key(low, run_at, run_high, vals, over_at, over_val, ptr[key], ptr[key + 1], cursor, docs, values)
        for i in range(ptr[key + 1] - ptr[key]):
            unit = tf_table[values[i] - 1] * w / norms[docs[i]]
            if i == 0 or unit > top or unit != unit:
                if top == top:  # once NaN, NaN stays
                    top = unit
        out[key] = top
    return out


def _merge(
    pos: np.ndarray, counts: np.ndarray, maxima: np.ndarray, docs: np.ndarray, vals: np.ndarray, n_keys: int,
    merged: np.ndarray, out_vals: np.ndarray, low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int]:
    """One key range of the writer's merge: the blocks' keys (at merged positions ``pos``, with
    ``counts`` postings and largest values ``maxima``, blocks one after the other in document
    order) and their postings (``docs``, ``vals``, in the same order) placed key by key into
    ``merged`` (scratch), ``out_vals`` and ``low`` (the documents' low 16 bits). Returns
    (postings per merged key, largest value per key, runs): ``run_at``/``run_high`` get the run
    starts and their high bits; a run starts at every key's first posting and wherever a key's
    ``document >> 16`` changes (the writer then keeps those where the high bits change in store
    order, as :func:`~coderiv.index.format.postings.doc_runs` has them). The output
    arrays are the caller's, reused from one key range to the next (no fresh pages)."""
    key_counts = np.zeros(n_keys, np.int64)
    maxvals = np.zeros(n_keys, np.uint32)
    for i in range(pos.shape[0]):
        key_counts[pos[i]] += counts[i]
        if maxima[i] > maxvals[pos[i]]:
            maxvals[pos[i]] = maxima[i]
    filled = np.empty(n_keys, np.int64)
    total = 0
    for k in range(n_keys):
        filled[k] = total
        total += key_counts[k]
    source = 0
    for i in range(pos.shape[0]):
        at = filled[pos[i]]
        for j in range(counts[i]):
            merged[at + j] = docs[source + j]
            out_vals[at + j] = vals[source + j]
        filled[pos[i]] = at + counts[i]
        source += counts[i]
    runs = 0
    p = 0
    for k in range(n_keys):
        previous = -1
        for _ in range(key_counts[k]):
            high = np.int64(merged[p] >> 16)
            if high != previous:
                run_at[runs] = p
                run_high[runs] = high
                runs += 1
                previous = high
            low[p] = merged[p] & 0xFFFF
            p += 1
    return key_counts, maxvals, runs


def _warm_up(kernels: dict[str, Any]) -> None:
    """Compile (or load from the cache) the loops for the array types of a run of one posting."""
    one = np.ones(1, np.uint64)
    kernels["group"](one, one, np.ones(1, np.int64), 0, np.ones(1, np.uint32), _SPREAD)


_LOOPS: dict[str, Callable[..., Any]] = {"group": _group, "squares": _squares, "max_units": _max_units, "merge": _merge}
_KERNELS = LazyKernels(_LOOPS, _warm_up, helpers=(globals(), ("run_after", "_decode_key")))  # the loops call them, compiled


def load() -> bool:
    """Compile (or load from numba's cache) the loops when numba is already loaded by
    :func:`coderiv.keys.compiled_terms.load`; False otherwise (the numpy paths then run)."""
    return _KERNELS.loaded() or (compiled_terms.loaded() and _KERNELS.load())


def _usual_store(docs: SplitNumbers, vals: CountValues) -> bool:
    """A store as this coderiv writes it (format 5: documents' low 16 bits, values in a byte);
    any other layout takes the numpy path."""
    return bool(np.asarray(docs.low).dtype == np.uint16 and np.asarray(vals.low).dtype == np.uint8)


def _store_arrays(
    docs: SplitNumbers, vals: CountValues, ptr: np.ndarray, weights: np.ndarray, tf_table: np.ndarray
) -> tuple[np.ndarray, ...]:
    """The arrays the cosine loops read, the narrowed ones (run starts, the side table) widened
    (they are short) so that one compiled version serves every index: a presence store's 1s
    contiguous (:meth:`~coderiv.index.format.counts.CountValues.loop_low`), not a zero-stride view."""
    low = vals.loop_low() if vals.is_presence else vals.low  # (a plain read checks the whole file)
    return (
        np.asarray(docs.low, np.uint16), np.asarray(docs.run_at, np.int64), np.asarray(docs.run_high, np.uint16),
        np.asarray(low, np.uint8), np.asarray(vals.over_at, np.int64), np.asarray(vals.over_val, np.int64),
        np.asarray(ptr, np.int64), np.asarray(weights, np.float64), np.asarray(tf_table, np.float64),
    )


def cosine_passes(
    docs: SplitNumbers, vals: CountValues, ptr: np.ndarray, weights: np.ndarray, tf_table: np.ndarray, chunk_ends: np.ndarray,
    n_docs: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(W_d per document, max_d x_dt / W_d per key) of a store's
    :class:`~coderiv.index.format.postings.SplitNumbers` ``docs`` and
    :class:`~coderiv.index.format.counts.CountValues` ``vals``; None when the loops are not loaded."""
    if not _usual_store(docs, vals) or not load():
        return None
    arrays = _store_arrays(docs, vals, ptr, weights, tf_table)
    rows = np.zeros(len(ptr) - 1, np.int64)
    norms = np.sqrt(_KERNELS["squares"](*arrays, np.asarray(chunk_ends, np.int64), rows, 1, n_docs))
    return norms, _KERNELS["max_units"](*arrays, norms)


def row_squares(
    docs: SplitNumbers, vals: CountValues, ptr: np.ndarray, weights: np.ndarray, tf_table: np.ndarray, chunk_ends: np.ndarray,
    key_rows: np.ndarray, n_rows: int, n_docs: int,
) -> np.ndarray | None:
    """Σ x_dt² per (row of the key, document), flat at ``row · n_docs + document`` (the norm
    classes of :mod:`~coderiv.index.cosine_bounds`); None when the loops are not loaded."""
    if not _usual_store(docs, vals) or not load():
        return None
    arrays = _store_arrays(docs, vals, ptr, weights, tf_table)
    squares: np.ndarray = _KERNELS["squares"](*arrays, np.asarray(chunk_ends, np.int64), np.asarray(key_rows, np.int64), n_rows, n_docs)
    return squares


class MergeBuffers:
    """The merge's per-posting arrays, kept from one key range to the next and grown when a
    range needs more: writing them to files copies them, so the next range may overwrite."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, size: int, dtype: type) -> np.ndarray:
        array = self.arrays.get(name)
        if array is None or len(array) < size:
            array = self.arrays[name] = np.empty(max(size, 1024), dtype)
        return array[:size]


def merge_key_range(
    pos: np.ndarray, counts: np.ndarray, maxima: np.ndarray, docs: np.ndarray, vals: np.ndarray, n_keys: int,
    buffers: MergeBuffers,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_merge` compiled: (postings per key, largest value per key, low 16 bits of the
    documents, values, run starts, their high bits), the last four views of ``buffers``; None
    when the loops are not loaded."""
    if not load():
        return None
    total = len(docs)
    low, out_vals = buffers.get("low", total, np.uint16), buffers.get("vals", total, np.uint32)
    run_at, run_high = buffers.get("run_at", total, np.int64), buffers.get("run_high", total, np.uint16)
    key_counts, maxvals, runs = _KERNELS["merge"](
        np.ascontiguousarray(pos, np.int64), np.ascontiguousarray(counts, np.int64), np.ascontiguousarray(maxima, np.uint32),
        docs, vals, n_keys, buffers.get("merged", total, np.uint32), out_vals, low, run_at, run_high,
    )
    return key_counts, maxvals, low, out_vals, run_at[:runs], run_high[:runs]


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
        ordered = np.sort(keys)
        distinct = np.empty(len(ordered), bool)
        distinct[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=distinct[1:])
        unique = ordered[distinct]
        del ordered, distinct
        counts, docs, out_vals, maxima = _KERNELS["group"](keys, unique, np.ascontiguousarray(doc_counts, np.int64), first, vals, _SPREAD)
        return unique, counts, docs, out_vals, maxima
    order = np.argsort(keys, kind="stable")  # documents ascend: stable by key is by (key, document)
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))
    docs = np.repeat(np.arange(first, first + len(doc_counts), dtype=np.uint32), doc_counts)[order]
    out_vals = vals[order]
    counts = np.diff(np.append(starts, len(keys))).astype(np.uint32)
    return sorted_keys[starts], counts, docs, out_vals, np.maximum.reduceat(out_vals, starts)
