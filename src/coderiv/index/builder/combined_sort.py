"""The writer's sorts of postings with narrow keys (chunk ids) as one sort of packed integers.

A chunk store's keys are 32-bit ids (:mod:`coderiv.keys.chunks`), nearly all distinct: a run of
a few hundred long documents holds millions of them. Grouping such a run by key through a hash
table (:func:`coderiv.index.builder.compiled_writer.group_run`) touches a table far larger than the
caches at random, and numpy's stable argsort of 64-bit keys is slow too, several times numpy's
vectorised sort of plain 64-bit integers (measured: docs/performance-history.md). When a
key, a document number and a value fit together in 64 bits, the integer
``key << (d + v) | document << v | value`` sorts exactly as (key, document) does (a key is once
per document, so the value never decides), and the sorted integers are the grouped postings:
for a presorted run (:func:`group_narrow_run`) and for a key range of the merge, whose
segments' postings are packed the same way. A value shared by every posting (a presence store's
1) takes no bits.

The merge of a chunk store's partitioned runs (:mod:`.key_partition`) needs no comparison sort
at all: :func:`sort_units` radix-sorts each partition's postings on their own, by the key bits
the partition leaves, and groups them in the same loop.

Each function returns None when the postings do not fit, and the caller takes its general path.
The sorted integers are unpacked (keys, counts, documents, values, maxima and runs) by one
compiled pass (numba, ``coderiv[fast]``, loaded when the indexing job has loaded numba), else by
numpy passes; the same arrays (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coderiv.index.builder.compiled_writer import MergeBuffers
from coderiv.jit import LazyKernels
from coderiv.keys import compiled_terms

#: (distinct keys uint64, postings per key uint32, documents uint32 and values uint32 in (key,
#: document) order, largest value per key uint32, run starts int64 and their high bits uint16)
Sorted = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def sort_packed(keys: np.ndarray, docs: np.ndarray, vals: np.ndarray, runs: bool = False) -> Sorted | None:
    """Postings (``keys[i]``, ``docs[i]``, ``vals[i]``), no (key, document) twice, sorted by
    (key, document) with one sort of integers packing all three; None when they need more than
    64 bits (or there are none). With ``runs``, also the key range's runs of
    :class:`~coderiv.index.format.postings.SplitNumbers` (one starts at every key's first posting and
    wherever a key's ``document >> 16`` changes; the writer keeps those where the high bits
    change in store order), else those two arrays are empty. The sorted
    integers are unpacked by one compiled pass when the loops are loaded, else numpy passes."""
    if not len(keys) or int(keys.max()).bit_length() > 63:
        return None
    lowest, highest = int(vals.min()), int(vals.max())
    value_bits = 0 if lowest == highest else highest.bit_length()
    doc_bits = int(docs.max()).bit_length()
    below = doc_bits + value_bits
    if int(keys.max()).bit_length() + below > 64 or below >= 64:
        return None
    packed = np.asarray(keys, np.uint64) << np.uint64(below)
    packed |= np.asarray(docs, np.uint64) << np.uint64(value_bits)
    if value_bits:
        packed |= vals
    packed.sort()
    if loaded():
        result: Sorted = _KERNELS["unpack"](packed, below, value_bits, lowest, runs)
        return result
    return _numpy_unpack(packed, below, value_bits, lowest, runs)


def _numpy_unpack(packed: np.ndarray, below: int, value_bits: int, lowest: int, runs: bool) -> Sorted:
    """:func:`sort_packed`'s sorted integers unpacked by numpy passes."""
    sorted_keys = packed >> np.uint64(below)
    new = np.empty(len(packed), bool)
    new[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    unique = sorted_keys[starts]
    del sorted_keys, new
    counts = np.diff(np.append(starts, len(packed))).astype(np.uint32)
    out_docs = ((packed >> np.uint64(value_bits)) & np.uint64((1 << (below - value_bits)) - 1)).astype(np.uint32)
    if value_bits:
        out_vals = (packed & np.uint64((1 << value_bits) - 1)).astype(np.uint32)
        maxima = np.maximum.reduceat(out_vals, starts)
    else:
        out_vals = np.full(len(packed), lowest, np.uint32)
        maxima = np.full(len(unique), lowest, np.uint32)
    if not runs:
        return unique, counts, out_docs, out_vals, maxima, np.empty(0, np.int64), np.empty(0, np.uint16)
    high = out_docs >> np.uint32(16)
    run = np.empty(len(high), bool)
    run[0] = True
    np.not_equal(high[1:], high[:-1], out=run[1:])
    run[starts] = True
    run_at = np.flatnonzero(run)
    return unique, counts, out_docs, out_vals, maxima, run_at, high[run_at].astype(np.uint16)


def _unpack(packed: np.ndarray, below: int, value_bits: int, lowest: int, runs: bool) -> Sorted:
    """:func:`_numpy_unpack` in one pass (the loop the kernels compile)."""
    n = packed.shape[0]
    unique = np.empty(n, np.uint64)
    counts = np.empty(n, np.uint32)
    maxima = np.empty(n, np.uint32)
    docs = np.empty(n, np.uint32)
    vals = np.empty(n, np.uint32)
    run_at = np.empty(n if runs else 0, np.int64)
    run_high = np.empty(n if runs else 0, np.uint16)
    doc_mask = (np.uint64(1) << np.uint64(below - value_bits)) - np.uint64(1)
    val_mask = (np.uint64(1) << np.uint64(value_bits)) - np.uint64(1)
    k = -1
    r = 0
    previous_key = np.uint64(0)
    previous_high = np.int64(-1)
    for i in range(n):
        x = packed[i]
        key = x >> np.uint64(below)
        doc = np.uint32((x >> np.uint64(value_bits)) & doc_mask)
        val = np.uint32(x & val_mask) if value_bits else np.uint32(lowest)
        if i == 0 or key != previous_key:
            k += 1
            unique[k] = key
            counts[k] = 0
            maxima[k] = val
            previous_key = key
            previous_high = np.int64(-1)
        counts[k] += 1
        if val > maxima[k]:
            maxima[k] = val
        docs[i] = doc
        vals[i] = val
        if runs:
            high = np.int64(doc >> np.uint32(16))
            if high != previous_high:
                run_at[r] = i
                run_high[r] = high
                r += 1
                previous_high = high
    return unique[: k + 1], counts[: k + 1], docs, vals, maxima[: k + 1], run_at[:r], run_high[:r]


def _pack_into(out: np.ndarray, keys: np.ndarray, docs: np.ndarray, doc_base: int, below: int) -> None:
    """``out[i] = keys[i] << below | (docs[i] + doc_base)`` (the loop the kernels compile)."""
    shift = np.uint64(below)
    base = np.uint64(doc_base)
    for i in range(keys.shape[0]):
        out[i] = (np.uint64(keys[i]) << shift) | (np.uint64(docs[i]) + base)


def _group_into(packed: np.ndarray, below: int, unique: np.ndarray, counts: np.ndarray, docs: np.ndarray) -> int:
    """Sorted ``key << below | document`` integers split into the distinct keys, the postings
    of each and the documents (the loop the kernels compile); the number of keys."""
    doc_mask = (np.uint64(1) << np.uint64(below)) - np.uint64(1)
    k = -1
    previous = np.uint64(0)
    for i in range(packed.shape[0]):
        x = packed[i]
        key = x >> np.uint64(below)
        if i == 0 or key != previous:
            k += 1
            unique[k] = key
            counts[k] = 0
            previous = key
        counts[k] += 1
        docs[i] = np.uint32(x & doc_mask)
    return k + 1


#: Bits of a key sorted by one pass of :func:`_sort_units`' radix sort: 256 counters (2 KB);
#: a unit's keys differ in their 16 low bits at most (:data:`~.key_partition.PART_BITS`), two
#: passes, and a unit of some 1,200 postings pays for 512 counters, not 2,048.
DIGIT_BITS = 8
#: Units of at most this many postings are sorted by insertion, not by counting passes.
INSERTION_SORT_BELOW = 48


def sort_units(
    keys: np.ndarray, docs: np.ndarray, bases: np.ndarray, where: np.ndarray, unit_shift: int, unit_lo: int, top_doc: int,
    value: int, buffers: MergeBuffers,
) -> Sorted | None:
    """:func:`sort_pieces` for the slices of partitioned segments (:mod:`.key_partition`) in
    document order, given one after the other: slice ``s``'s postings of unit ``unit_lo + u``
    (keys ``[(unit_lo + u) << unit_shift, (unit_lo + u + 1) << unit_shift)``) are
    ``where[s, u]:where[s, u + 1]`` of ``keys`` (uint16 or uint32: the ``unit_shift`` low
    bits are read) and ``docs`` (uint16 or uint32, less
    the slice's ``bases[s]``), in document order, and every document of slice ``s`` comes
    before those of slice ``s + 1``. Each unit is sorted on its own, by the ``unit_shift`` low
    bits of its keys, with a stable least-significant-digit radix sort (Knuth, TAOCP vol. 3,
    §5.2.5) of :data:`DIGIT_BITS` a pass, so documents stay in order within a key, in arrays of
    a unit's size that stay in the cache, faster than packing, sorting and grouping the whole
    range (measured: docs/performance-history.md). Needs the compiled
    loops: None when they are not loaded or a document needs more than 32 bits."""
    if not loaded() or int(top_doc).bit_length() > 32 or unit_shift > 32 or not len(bases):
        return None
    total = len(keys)
    largest = int(np.max(np.sum(np.diff(where, axis=1), axis=0), initial=0))
    scratch = buffers.get("unit_a", largest, np.uint64), buffers.get("unit_b", largest, np.uint64)
    unique, counts = buffers.get("unique", total, np.uint32), buffers.get("counts", total, np.uint32)
    docs_out = buffers.get("docs", total, np.uint32)
    n_keys = _KERNELS["sort_units"](keys, docs, bases, where, unit_shift, unit_lo, *scratch, unique, counts, docs_out)
    return _one_value(unique[:n_keys], counts[:n_keys], docs_out, value)


def _sort_units(
    keys: np.ndarray, docs: np.ndarray, bases: np.ndarray, where: np.ndarray, unit_shift: int, unit_lo: int, a: np.ndarray,
    b: np.ndarray, unique: np.ndarray, counts: np.ndarray, docs_out: np.ndarray,
) -> int:
    """Each unit's postings gathered from the slices (``where[s, u]:where[s, u + 1]`` of
    ``keys``/``docs``, documents plus ``bases[s]``) as ``low key << 32 | document``, radix-sorted on the key's ``unit_shift``
    low bits (insertion for a few), and grouped into ``unique``/``counts``/``docs_out`` (the
    loop the kernels compile); the number of keys. Every pass's digit counts are taken while
    gathering."""
    n_pieces, n_units = where.shape[0], where.shape[1] - 1
    low_mask = np.uint32((np.uint64(1) << np.uint64(unit_shift)) - np.uint64(1))
    digit_mask = np.uint64((1 << DIGIT_BITS) - 1)
    n_passes = max(1, (unit_shift + DIGIT_BITS - 1) // DIGIT_BITS)
    starts = np.zeros((n_passes, 1 << DIGIT_BITS), np.int64)
    n_keys = 0
    out = 0
    for u in range(n_units):
        n = 0
        for s in range(n_pieces):
            base = np.uint64(bases[s])
            for i in range(where[s, u], where[s, u + 1]):
                low = np.uint64(keys[i] & low_mask)
                a[n] = (low << np.uint64(32)) | (np.uint64(docs[i]) + base)
                for p in range(n_passes):
                    starts[p, (low >> np.uint64(p * DIGIT_BITS)) & digit_mask] += 1
                n += 1
        src, dst = a, b
        if n <= INSERTION_SORT_BELOW:
            for i in range(1, n):  # stable: only greater keys move past
                x = src[i]
                j = i - 1
                while j >= 0 and (src[j] >> np.uint64(32)) > (x >> np.uint64(32)):
                    src[j + 1] = src[j]
                    j -= 1
                src[j + 1] = x
        else:
            for p in range(n_passes):
                total = 0
                for d in range(1 << DIGIT_BITS):
                    count = starts[p, d]
                    starts[p, d] = total
                    total += count
                shift = np.uint64(32 + p * DIGIT_BITS)
                for i in range(n):
                    x = src[i]
                    d = (x >> shift) & digit_mask
                    dst[starts[p, d]] = x
                    starts[p, d] += 1
                src, dst = dst, src
        starts[:, :] = 0
        unit_key = np.uint64(unit_lo + u) << np.uint64(unit_shift)
        previous = np.uint64(0)
        for i in range(n):
            x = src[i]
            key = unit_key | (x >> np.uint64(32))
            if i == 0 or key != previous:
                unique[n_keys] = np.uint32(key)
                counts[n_keys] = 0
                n_keys += 1
                previous = key
            counts[n_keys - 1] += 1
            docs_out[out] = np.uint32(x & np.uint64(0xFFFFFFFF))
            out += 1
    return n_keys


def _warm_up(kernels: dict[str, Any]) -> None:
    """Compile (or load from the cache) the loops for the arrays they get."""
    kernels["unpack"](np.array([5, 9], np.uint64), 2, 1, 1, True)
    out = np.empty(2, np.uint64)
    for doc_type in (np.uint16, np.uint32):
        kernels["pack_into"](out, np.array([1, 2], np.uint32), np.array([0, 1], doc_type), 0, 2)
    kernels["group_into"](out, 2, np.empty(2, np.uint32), np.empty(2, np.uint32), np.empty(2, np.uint32))
    two = np.empty(2, np.uint32)
    for doc_type in (np.uint16, np.uint32):
        kernels["sort_units"](
            np.array([1, 2], np.uint16), np.array([0, 1], doc_type), np.zeros(1, np.int64), np.array([[0, 2]], np.int64), 16, 0,
            out, out.copy(), two, two.copy(), two.copy(),
        )


_KERNELS = LazyKernels(
    {"unpack": _unpack, "pack_into": _pack_into, "group_into": _group_into, "sort_units": _sort_units}, _warm_up
)


def loaded() -> bool:
    """Whether the compiled loops are ready (loaded now if the job loaded numba)."""
    return _KERNELS.loaded() or (compiled_terms.loaded() and _KERNELS.load())


#: A piece of narrow postings: keys (uint32), documents (uint16 or uint32) less a base, the base.
Piece = tuple[np.ndarray, np.ndarray, int]


def sort_pieces(pieces: list[Piece], top_doc: int, value: int, buffers: MergeBuffers) -> Sorted | None:
    """Postings of one value (a presence store's 1), no (key, document) twice, given as pieces
    (:data:`Piece`, documents at most ``top_doc``), sorted by (key, document) with one sort of
    packed integers, as :func:`sort_packed` gives them (without runs) but in ``buffers``,
    reused from one call to the next: a merge's key ranges take no fresh memory; the keys in
    uint32. None when a document needs more than 32 bits."""
    below = max(1, int(top_doc).bit_length())
    if below > 32 or not pieces:
        return None
    total = sum(len(keys) for keys, _, _ in pieces)
    packed = buffers.get("packed", total, np.uint64)
    compiled = loaded()
    at = 0
    for keys, docs, base in pieces:
        out = packed[at : at + len(keys)]
        if compiled:
            _KERNELS["pack_into"](out, keys, docs, base, below)
        else:
            np.left_shift(keys, np.uint64(below), out=out, dtype=np.uint64)
            out |= docs.astype(np.uint64) + np.uint64(base)
        at += len(keys)
    packed.sort()
    unique, counts = buffers.get("unique", total, np.uint32), buffers.get("counts", total, np.uint32)  # keys of 32 bits
    docs = buffers.get("docs", total, np.uint32)
    if compiled:
        n_keys = _KERNELS["group_into"](packed, below, unique, counts, docs)
        unique, counts = unique[:n_keys], counts[:n_keys]
    else:
        keys_of = packed >> np.uint64(below)
        starts = np.flatnonzero(np.concatenate(([True], keys_of[1:] != keys_of[:-1])))
        unique, counts = keys_of[starts].astype(np.uint32), np.diff(np.append(starts, total)).astype(np.uint32)
        np.bitwise_and(packed, np.uint64((1 << below) - 1), out=docs, casting="unsafe")
    return _one_value(unique, counts, docs, value)


def _one_value(unique: np.ndarray, counts: np.ndarray, docs: np.ndarray, value: int) -> Sorted:
    """Grouped postings of one value as :data:`Sorted` (no runs): what :func:`sort_pieces` and
    :func:`sort_units` give. Every value and maximum is ``value``, given as read-only broadcast
    views that take no memory: a presence store, these sorts' usual caller, writes neither."""
    same = np.uint32(value)
    vals, maxima = np.broadcast_to(same, len(docs)), np.broadcast_to(same, len(unique))
    return unique, counts, docs, vals, maxima, np.empty(0, np.int64), np.empty(0, np.uint16)



def group_narrow_run(
    keys: np.ndarray, doc_counts: np.ndarray, first: int, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`~coderiv.index.builder.compiled_writer.group_run` (documents ``first, first + 1, …``,
    document i the next ``doc_counts[i]`` entries of ``keys``/``vals``, its keys distinct) by
    :func:`sort_packed`; None when the postings do not fit in 64 bits."""
    if not len(keys) or int(np.max(keys)).bit_length() > 48:
        return None  # wide keys (terms): not worth numbering the documents
    docs = np.repeat(np.arange(first, first + len(doc_counts), dtype=np.uint32), doc_counts)
    grouped = sort_packed(keys, docs, vals)
    return None if grouped is None else grouped[:5]
