"""A run's narrow postings split by the top bits of their keys, not sorted: a chunk store's runs.

The writer's merge sorts each key range of a narrow store (chunk ids: key, document and value
in one 64-bit integer, :func:`~coderiv.index.builder.combined_sort.sort_packed`) whatever order its
segments hold, so a run's full sort by (key, document) was done twice over. All the merge
needs of a run is where each key range's postings are. Here they are moved into partitions by
``key >> shift`` (the top :data:`PART_BITS` bits of the run's widest key), stable, in one
counting pass — the first pass of a radix sort (Knuth, TAOCP vol. 3, §5.2.5), the rest left to
the merge's sort of each key range. The partition bounds (``parts``: postings before each
partition) let any key range cut at a multiple of ``2**shift`` be read from the segment, and
give each posting's key its top bits: a key is kept as its low 16 bits (``shift`` is at most 16
for keys of 32 bits), so a run's scratch file takes 2 bytes a key instead of 4.

The counting pass has a compiled twin (numba, ``coderiv[fast]``, loaded when the indexing job has
loaded numba), else numpy's stable argsort of the partitions; the same arrays (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coderiv.index.builder.compiled_writer import MergeBuffers
from coderiv.jit import LazyKernels
from coderiv.keys import compiled_terms

#: Bits of a key that choose its partition: 65,536 partitions, some 30 postings each in a run of
#: ~2M (a run of long documents' chunk ids), 512 KB of counters; a key's other 16 bits are what
#: the segment stores: scratch files of 2 bytes a key instead of 4, for a slightly slower
#: counting pass (measured: docs/performance-history.md).
PART_BITS = 16


@dataclass
class Partitioned:
    """A run's postings by partition: keys (their low 16 bits, uint16: :func:`full_keys`),
    documents (relative to the run's first, in ``docs``' type), values (None when all equal
    ``top_val``); partition p holds postings ``parts[p]:parts[p + 1]``, its keys in
    ``[p << shift, (p + 1) << shift)``; within a partition postings keep the run's order
    (documents ascending); ``n_docs`` documents."""

    keys: np.ndarray
    docs: np.ndarray
    vals: np.ndarray | None
    parts: np.ndarray
    shift: int
    top_key: int
    top_val: int
    n_docs: int


def shift_of(top_key: int) -> int:
    """The shift that leaves at most :data:`PART_BITS` bits of keys up to ``top_key``."""
    return max(0, int(top_key).bit_length() - PART_BITS)


#: Bits of a key a partitioned run keeps (the partition gives the rest: ``shift`` ≤ this).
LOW_BITS = 16


def full_keys(low: np.ndarray, start: int, parts: np.ndarray, shift: int) -> np.ndarray:
    """The keys (uint64) of postings ``start, start + 1, …`` of a partitioned run, from their
    low :data:`LOW_BITS` bits ``low`` and the run's partition bounds: partition ``p``'s keys are
    ``p << shift`` plus their ``shift`` low bits."""
    positions = np.arange(start, start + len(low), dtype=np.int64)
    partition = np.searchsorted(parts, positions, side="right").astype(np.uint64) - np.uint64(1)
    mask = np.uint64((1 << shift) - 1)
    keys: np.ndarray = (partition << np.uint64(shift)) | (low.astype(np.uint64) & mask)
    return keys


#: Postings of consecutive documents: (postings per document, keys, values), as a batch of
#: :class:`~coderiv.index.builder.analysis_workers.AnalyzedBatch` holds a store's.
Piece = tuple[np.ndarray, np.ndarray, np.ndarray]


def partition_run(keys: np.ndarray, doc_counts: np.ndarray, vals: np.ndarray, doc_type: type) -> Partitioned | None:
    """The postings of documents 0, 1, … (document i the next ``doc_counts[i]`` entries of
    ``keys``/``vals``) by partition; None when a key needs more than 32 bits (the caller sorts
    them instead). Documents are written in ``doc_type`` (uint16 or uint32, wide enough)."""
    return partition_pieces([(doc_counts, keys, vals)], doc_type)


def partition_pieces(pieces: Sequence[Piece], doc_type: type, buffers: MergeBuffers | None = None) -> Partitioned | None:
    """:func:`partition_run` of the pieces' documents one after the other (a run's batches),
    without joining them first. With ``buffers`` (the compiled pass), the partitioned arrays are
    views of them, valid until the next call: a build partitions one run at a time, and reusing
    the memory spares the pages a fresh allocation would fault in for every run (see
    :mod:`~coderiv.system.scratch_pages`)."""
    filled = [piece for piece in pieces if len(piece[1])]
    if not filled:
        return None
    top_key = max(int(np.max(keys)) for _, keys, _ in filled)
    if top_key >= 1 << 32:
        return None
    n_docs = 0
    starts = []  # each piece's first document
    for counts, _, _ in pieces:
        starts.append(n_docs)
        n_docs += len(counts)
    shift = shift_of(top_key)
    n_parts = (top_key >> shift) + 1
    lowest = min(int(np.min(vals)) for _, _, vals in filled)
    top_val = max(int(np.max(vals)) for _, _, vals in filled)
    total = sum(len(keys) for _, keys, _ in pieces)
    buffers = buffers or MergeBuffers()
    docs: np.ndarray = buffers.get(f"partition_docs_{np.dtype(doc_type).name}", total, doc_type)
    out_vals = buffers.get("partition_vals", total if lowest != top_val else 0, np.uint32)
    if not (_KERNELS.loaded() or (compiled_terms.loaded() and _KERNELS.load())):
        keys = np.concatenate([np.asarray(keys, np.uint32) for _, keys, _ in pieces])
        counts = np.concatenate([np.asarray(counts, np.int64) for counts, _, _ in pieces])
        varied = np.concatenate([np.asarray(vals, np.uint32) for _, _, vals in pieces]) if len(out_vals) else out_vals
        out_keys, parts = _numpy_partition(keys, counts, varied, shift, n_parts, docs, out_vals)
        return Partitioned(out_keys, docs, out_vals if len(out_vals) else None, parts, shift, top_key, top_val, n_docs)
    parts = np.zeros(n_parts + 1, np.int64)
    loop_keys = [np.ascontiguousarray(keys, np.uint32) for _, keys, _ in pieces]  # a copy only of wide-typed keys
    for keys in loop_keys:
        _KERNELS["count"](keys, shift, parts)
    np.cumsum(parts, out=parts)
    place = parts[:-1].copy()
    out_keys = buffers.get("partition_keys", total, np.uint16)
    for keys, (counts, _, vals), start in zip(loop_keys, pieces, starts):
        varied = np.ascontiguousarray(vals, np.uint32) if len(out_vals) else out_vals
        _KERNELS["scatter"](keys, np.ascontiguousarray(counts, np.int64), varied, shift, place, start, out_keys, docs, out_vals)
    return Partitioned(out_keys, docs, out_vals if len(out_vals) else None, parts, shift, top_key, top_val, n_docs)


def _numpy_partition(
    keys: np.ndarray, doc_counts: np.ndarray, vals: np.ndarray, shift: int, n_parts: int, docs: np.ndarray, out_vals: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The partition by a stable argsort of the partitions (without numba)."""
    part = keys >> np.uint32(shift)
    order = np.argsort(part, kind="stable")
    parts = np.zeros(n_parts + 1, np.int64)
    np.cumsum(np.bincount(part, minlength=n_parts), out=parts[1:])
    docs[:] = np.repeat(np.arange(len(doc_counts), dtype=np.int64), doc_counts)[order]
    if len(vals):
        out_vals[:] = vals[order]
    return (keys[order] & np.uint32(0xFFFF)).astype(np.uint16), parts


def _count(keys: np.ndarray, shift: int, parts: np.ndarray) -> None:
    """Add each key's posting to ``parts[partition + 1]`` (the counting pass's first loop)."""
    for i in range(keys.shape[0]):
        parts[(keys[i] >> shift) + 1] += 1


def _scatter(
    keys: np.ndarray, doc_counts: np.ndarray, vals: np.ndarray, shift: int, place: np.ndarray, first: int,
    out_keys: np.ndarray, docs: np.ndarray, out_vals: np.ndarray,
) -> None:
    """Every posting of documents ``first, first + 1, …`` (the key's low 16 bits, document,
    value when ``vals`` is not empty) at its partition's next place (the counting pass's
    second loop)."""
    varied = vals.shape[0] > 0
    i = 0
    for doc in range(doc_counts.shape[0]):
        for _ in range(doc_counts[doc]):
            p = keys[i] >> shift
            at = place[p]
            out_keys[at] = np.uint16(keys[i] & 0xFFFF)  # (the partition gives the top bits)
            docs[at] = first + doc
            if varied:
                out_vals[at] = vals[i]
            place[p] = at + 1
            i += 1


def _warm_up(kernels: dict[str, Any]) -> None:
    """Compile (or load from the cache) the loops for both document types."""
    keys, counts, none = np.array([5, 9], np.uint32), np.array([2], np.int64), np.empty(0, np.uint32)
    parts = np.zeros(4, np.int64)
    kernels["count"](keys, 2, parts)
    for doc_type in (np.uint16, np.uint32):
        kernels["scatter"](keys, counts, none, 2, np.zeros(3, np.int64), 0, np.empty(2, np.uint16), np.empty(2, doc_type), none)


_KERNELS = LazyKernels({"count": _count, "scatter": _scatter}, _warm_up)


def unit_bounds(parts: np.ndarray, shift: int, unit_shift: int, n_units: int) -> np.ndarray:
    """Postings before each unit of keys ``[u << unit_shift, (u + 1) << unit_shift)``, for
    u = 0 … n_units (``unit_shift ≥ shift``: a unit is whole partitions), from a run's ``parts``."""
    at = np.minimum(np.arange(n_units + 1, dtype=np.int64) << (unit_shift - shift), len(parts) - 1)
    return np.asarray(parts[at], np.int64)
