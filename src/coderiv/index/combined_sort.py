"""The writer's sorts of postings with narrow keys (chunk ids) as one sort of packed integers.

A chunk store's keys are 32-bit ids (:mod:`coderiv.keys.chunks`), nearly all distinct: a run of
a few hundred long documents holds millions of them. Grouping such a run by key through a hash
table (:func:`coderiv.index.compiled_writer.group_run`) touches a table far larger than the
caches at random, and numpy's stable argsort of 64-bit keys is slow too (both ~100 ns a posting
on this project's machine, 2026-11-25); numpy's vectorised sort of plain 64-bit integers takes
~5–15 ns. When a key, a document number and a value fit together in 64 bits, the integer
``key << (d + v) | document << v | value`` sorts exactly as (key, document) does (a key is once
per document, so the value never decides), and the sorted integers are the grouped postings:
for a presorted run (:func:`group_narrow_run`) and for a key range of the merge, whose
segments' postings are packed the same way. A value shared by every posting (a presence store's
1) takes no bits.

Each function returns None when the postings do not fit, and the caller takes its general path.
"""

from __future__ import annotations

import numpy as np

#: (distinct keys uint64, postings per key uint32, documents uint32 and values uint32 in (key,
#: document) order, largest value per key uint32, each key's first posting int64)
Sorted = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def sort_packed(keys: np.ndarray, docs: np.ndarray, vals: np.ndarray) -> Sorted | None:
    """Postings (``keys[i]``, ``docs[i]``, ``vals[i]``), no (key, document) twice, sorted by
    (key, document) with one sort of integers packing all three; None when they need more than
    64 bits (or there are none)."""
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
    sorted_keys = packed >> np.uint64(below)
    new = np.empty(len(packed), bool)
    new[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    unique = sorted_keys[starts]
    del sorted_keys, new
    counts = np.diff(np.append(starts, len(packed))).astype(np.uint32)
    out_docs = ((packed >> np.uint64(value_bits)) & np.uint64((1 << doc_bits) - 1)).astype(np.uint32)
    if value_bits:
        out_vals = (packed & np.uint64((1 << value_bits) - 1)).astype(np.uint32)
        maxima = np.maximum.reduceat(out_vals, starts)
    else:
        out_vals = np.full(len(packed), lowest, np.uint32)
        maxima = np.full(len(unique), lowest, np.uint32)
    return unique, counts, out_docs, out_vals, maxima, starts


def group_narrow_run(
    keys: np.ndarray, doc_counts: np.ndarray, first: int, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`~coderiv.index.compiled_writer.group_run` (documents ``first, first + 1, …``,
    document i the next ``doc_counts[i]`` entries of ``keys``/``vals``, its keys distinct) by
    :func:`sort_packed`; None when the postings do not fit in 64 bits."""
    if not len(keys) or int(np.max(keys)).bit_length() > 48:
        return None  # wide keys (terms): not worth numbering the documents
    docs = np.repeat(np.arange(first, first + len(doc_counts), dtype=np.uint32), doc_counts)
    grouped = sort_packed(keys, docs, vals)
    return None if grouped is None else grouped[:5]
