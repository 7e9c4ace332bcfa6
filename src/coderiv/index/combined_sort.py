"""The writer's sorts of narrow keys (chunk ids) as one sort of combined 64-bit integers.

A chunk store's keys are 32-bit ids (:mod:`coderiv.keys.chunks`), nearly all distinct: a run of
a few hundred long documents holds millions of them. Grouping such a run by key through a hash
table (:func:`coderiv.index.compiled_writer.group_run`) touches a table far larger than the
caches at random, and numpy's stable argsort of 64-bit keys is slow too (both ~100 ns a posting
on this project's machine, 2026-11-25); numpy's vectorised sort of plain 64-bit integers takes
~5–15 ns. When a key, a document number and a value fit together in 64 bits, the integer
``key << (d + v) | document << v | value`` sorts exactly as (key, document) does (a key is once
per document, so the value never decides), and the sorted integers are the grouped postings.
The same holds for the merge of a key range: ``key << b | entry`` sorts its segments' keys and
says, for every entry, the rank of its key among the distinct ones.

Each function returns None when the keys are too wide, and the caller takes its general path.
"""

from __future__ import annotations

import numpy as np


def _bits(top: int) -> int:
    """Bits needed to hold every number from 0 to ``top``."""
    return max(int(top).bit_length(), 0)


def group_narrow_run(
    keys: np.ndarray, doc_counts: np.ndarray, first: int, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`~coderiv.index.compiled_writer.group_run` (documents ``first, first + 1, …``,
    document i the next ``doc_counts[i]`` entries of ``keys``/``vals``, its keys distinct) by
    one sort of (key, document, value) packed in 64 bits; None when they do not fit."""
    if not len(keys):
        return None
    lowest, highest = int(vals.min()), int(vals.max())
    value_bits = 0 if lowest == highest else _bits(highest)
    doc_bits = _bits(len(doc_counts) - 1)
    if _bits(int(keys.max())) + doc_bits + value_bits > 64 or doc_bits + value_bits >= 64:
        return None
    packed = np.repeat(np.arange(len(doc_counts), dtype=np.uint64) << np.uint64(value_bits), doc_counts)
    packed |= keys << np.uint64(doc_bits + value_bits)
    if value_bits:
        packed |= vals
    packed.sort()
    below = doc_bits + value_bits
    sorted_keys = packed >> np.uint64(below)
    new = np.empty(len(packed), bool)
    new[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    unique = sorted_keys[starts]
    del sorted_keys, new
    counts = np.diff(np.append(starts, len(packed))).astype(np.uint32)
    docs = ((packed >> np.uint64(value_bits)) & np.uint64((1 << doc_bits) - 1)).astype(np.uint32)
    docs += np.uint32(first)
    if value_bits:
        out_vals = (packed & np.uint64((1 << value_bits) - 1)).astype(np.uint32)
        maxima = np.maximum.reduceat(out_vals, starts)
    else:
        out_vals = np.full(len(packed), lowest, np.uint32)
        maxima = np.full(len(unique), lowest, np.uint32)
    return unique, counts, docs, out_vals, maxima


def distinct_and_ranks(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """(the sorted distinct keys of ``parts``, the rank among them of every entry of the parts
    concatenated), by one sort of ``key << b | entry``; None when key and entry do not fit in 64
    bits. ``distinct(concatenate(parts))`` and ``searchsorted`` of each part, for narrow keys."""
    total = sum(len(p) for p in parts)
    if not total:
        return None
    entry_bits = _bits(total - 1)
    if _bits(max(int(p[-1]) if len(p) else 0 for p in parts)) + entry_bits > 64:
        return None  # the parts are sorted: their last keys are their largest
    packed = np.concatenate(parts)
    packed <<= np.uint64(entry_bits)
    packed |= np.arange(total, dtype=np.uint64)
    packed.sort()
    keys = packed >> np.uint64(entry_bits)
    new = np.empty(total, bool)
    new[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    ranks = np.empty(total, np.int64)
    ranks[(packed & np.uint64((1 << entry_bits) - 1)).astype(np.intp)] = np.cumsum(new) - 1
    return keys[new], ranks
