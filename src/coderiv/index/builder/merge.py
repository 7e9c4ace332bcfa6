"""Step 4 of writing a generation (:mod:`.writer`): segments merged into a store's ``.npy`` files
one key range at a time.

Segments are read a block at a time and merged one key range at a time (:func:`_key_ranges`, at
most ``budget`` segment keys and postings; partitioned runs by ranges of whole partitions,
:func:`_partition_ranges`); ranges are in document order, so each key's documents come out
ascending. Each output file is appended to as the key ranges go (:mod:`.files`). Document
numbers are written as their low 16 bits, and the runs of high bits are found segment by segment
on the way (:class:`_DocRuns`); values as one byte a posting with the large ones aside. A key
range is merged by a thread one range ahead of the one being written; the heavy loop has a
compiled twin in :mod:`.compiled_writer` and narrow postings one packed sort
(:mod:`.combined_sort`), all writing the same bytes.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from coderiv.index.builder import compiled_writer, key_partition
from coderiv.index.builder.combined_sort import Sorted, sort_packed, sort_pieces, sort_units
from coderiv.index.builder.combined_sort import loaded as combined_sort_loaded
from coderiv.index.builder.files import NpyWriter, SplitWriter
from coderiv.index.builder.invert import document_ranges
from coderiv.index.builder.segments import Segment, group_postings, save_segment
from coderiv.index.format.counts import ESCAPE, OVER_AT_FILE, OVER_VAL_FILE
from coderiv.index.format.encoded import narrow
from coderiv.index.format.postings import SPLIT_FILES, key_dtype, offsets_dtype
from coderiv.keys.kinds import distinct

#: Postings of a key range of partitioned segments (a chunk store's) merged at a time: the
#: merge's buffers (about 46 bytes a posting, two sets) are faulted in once, and its radix sort's
#: arrays stay in cache; less than the 2M of ``RANGE_POSTINGS // 8``, no better below
#: (measured: docs/performance-history.md).
PARTITION_RANGE_POSTINGS = 1_000_000


class WriteStopped(Exception):
    """A store's merge stopped between key ranges because ``stop`` was set (the thread writing
    it is not waited for when the build fails or is interrupted)."""


def merge_segments(
    segments: list[Segment], out: Path, budget: int, stop: threading.Event | None = None, presence: bool = False
) -> bool:
    """Merge sorted segments (in document order) into a store's ``.npy`` files, one key range at
    a time (:func:`_key_ranges`): each range's keys are unique-merged, its postings placed by
    key and written in order, so memory holds one key range, whatever the number of keys.
    Partitioned segments (a chunk store's runs, :mod:`~coderiv.index.builder.key_partition`) are merged
    by ranges of whole partitions (:func:`_partition_ranges`), each sorted once; if only some
    are partitioned, those are sorted first.
    Values are written as :mod:`~coderiv.index.format.counts` stores them (one byte a posting, the
    values of 255 and more aside when any exceeds 255) on the way, with no pass afterwards; a
    ``presence`` store's (:func:`presence_segments`) and its ``maxvals`` not at all. Keys that
    all fit 32 bits (a chunk store's) and their offsets are written split, 2 bytes each
    (:class:`~coderiv.index.format.postings.SplitNumbers`); returns whether they were."""
    n_postings = sum(s.n_postings for s in segments)
    top = max((s.max_val for s in segments), default=0)
    out.mkdir(parents=True, exist_ok=True)
    split = all(s.narrow_keys for s in segments) and n_postings < 1 << 32
    files: dict[str, NpyWriter | SplitWriter] = {
        "docs": NpyWriter(out / "docs.npy", np.dtype(np.uint16)),
        "doc_run_at": NpyWriter(out / "doc_run_at.npy", narrow(np.array([n_postings])).dtype),
        "doc_run_high": NpyWriter(out / "doc_run_high.npy", np.dtype(np.uint16)),
    }
    if split:
        files["keys"] = SplitWriter(out, SPLIT_FILES["keys"])
        files["ptr"] = SplitWriter(out, SPLIT_FILES["ptr"])
    else:
        files["keys"] = NpyWriter(out / "keys.npy", key_dtype(all(s.narrow_keys for s in segments)))
        files["ptr"] = NpyWriter(out / "ptr.npy", offsets_dtype(n_postings))
    if not presence:
        files["maxvals"] = NpyWriter(out / "maxvals.npy", narrow(np.array([top])).dtype)
        files["vals"] = NpyWriter(out / "vals.npy", np.dtype(np.uint8))
    over: tuple[list[np.ndarray], list[np.ndarray]] | None = ([], []) if top > ESCAPE else None
    ranges: Iterator[list[_Block]] | Iterator[_Units]
    merge: Callable[[Any, compiled_writer.MergeBuffers], _Merged]
    temporary: list[Segment] = []
    try:
        filled = [segment for segment in segments if segment.n_postings]  # a run without postings is any kind
        if filled and all(segment.parts is not None for segment in filled):
            ranges, merge = _partition_ranges(filled, min(budget, PARTITION_RANGE_POSTINGS)), _merge_slices
        else:
            converted = [_sorted(segment) for segment in segments]
            temporary = [s for s, o in zip(converted, segments) if s is not o]
            ranges, merge = _key_ranges(converted, budget), _merge_blocks
        files["ptr"].append(np.zeros(1, np.int64))
        written, high = 0, -1
        for done, merged in _merged_ranges(ranges, merge):
            if stop is not None and stop.is_set():
                raise WriteStopped(f"writing {out.name} stopped")
            written, high = append_key_range(*merged, written, high, files, over)
            _release_read(done)
        files["doc_run_at"].append(np.array([n_postings]))
    finally:
        for writer in files.values():
            writer.close()
        for segment in temporary:
            shutil.rmtree(segment.folder, ignore_errors=True)
    if presence:
        return split
    over_at, over_val = over or ([], [])
    np.save(out / OVER_AT_FILE, narrow(np.concatenate([np.empty(0, np.int64), *over_at])), allow_pickle=False)
    np.save(out / OVER_VAL_FILE, narrow(np.concatenate([np.empty(0, np.uint32), *over_val])), allow_pickle=False)
    return split


@dataclass
class _Block:
    """The keys of one segment inside one key range, with their counts and largest values, and
    where their postings start in the segment."""

    segment: Segment
    keys: np.ndarray
    counts: np.ndarray
    maxima: np.ndarray
    posting_at: int


def _key_ranges(segments: list[Segment], budget: int) -> Iterator[list[_Block]]:
    """Consecutive key ranges of the segments, each as one block per segment, read a block at a
    time: every segment offers its next keys (at most ``budget / len(segments)`` keys or
    postings, at least one key); the range ends at the smallest last offered key among the
    segments that have more, so every key of the range is in the offered blocks. A range holds
    at most ``budget`` segment keys, and postings of at most that many plus one key per segment."""
    share = max(1, budget // max(1, len(segments)))
    key_at = [0] * len(segments)
    posting_at = [0] * len(segments)
    while True:
        live = [i for i, s in enumerate(segments) if key_at[i] < s.n_keys]
        if not live:
            return
        offered = {}
        for i in live:
            segment = segments[i]
            keys = segment.read("keys", key_at[i], min(share, segment.n_keys - key_at[i]))
            counts = segment.read("counts", key_at[i], len(keys))
            fits = max(1, int(np.searchsorted(np.cumsum(counts, dtype=np.int64), share, side="right")))
            offered[i] = keys[:fits], counts[:fits]
        more = [i for i in live if key_at[i] + len(offered[i][0]) < segments[i].n_keys]
        limit = np.uint64(min(int(offered[i][0][-1]) for i in more)) if more else None
        blocks = []
        for i in live:
            keys, counts = offered[i]
            taken = len(keys) if limit is None else int(np.searchsorted(keys, limit, side="right"))
            if taken:
                maxima = segments[i].read("max", key_at[i], taken)
                blocks.append(_Block(segments[i], keys[:taken], counts[:taken], maxima, posting_at[i]))
                key_at[i] += taken
                posting_at[i] += int(counts[:taken].sum(dtype=np.int64))
        yield blocks


_Merged = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


#: postings ``start:stop`` of a partitioned segment
_Slice = tuple[Segment, int, int]


@dataclass
class _Units:
    """One key range of partitioned segments: the slice of every segment that holds its
    postings, and where each of its units (keys ``[u << unit_shift, (u + 1) << unit_shift)``,
    ``u = unit_lo, …``) starts in each slice (``bounds[s, u - unit_lo]``, relative to slice
    ``s``; one column more than units)."""

    slices: list[_Slice]
    bounds: np.ndarray
    unit_shift: int
    unit_lo: int


def _partition_ranges(segments: list[Segment], budget: int) -> Iterator[_Units]:
    """Consecutive key ranges of partitioned segments, each as the slice of every segment that
    holds its postings: units of keys ``[u << S, (u + 1) << S)`` (S the widest shift, so a unit
    is whole partitions of every segment) gathered into ranges of about ``budget`` postings
    (:func:`document_ranges`; a unit is never cut)."""
    unit_shift = max(segment.shift for segment in segments)
    n_units = max(segment.top_key >> unit_shift for segment in segments) + 1
    bounds = []
    weights = np.zeros(n_units, np.int64)
    for segment in segments:
        assert segment.parts is not None
        bounds.append(key_partition.unit_bounds(segment.parts, segment.shift, unit_shift, n_units))
        weights += np.diff(bounds[-1])
    for lo, hi in document_ranges(weights, budget):
        held = [(segment, b) for segment, b in zip(segments, bounds) if b[hi] > b[lo]]
        if held:  # (units without keys make a range of nothing)
            slices = [(segment, int(b[lo]), int(b[hi])) for segment, b in held]
            relative = np.array([b[lo : hi + 1] - b[lo] for _, b in held], np.int64)
            yield _Units(slices, relative, unit_shift, lo)


def _merge_slices(units: _Units, buffers: compiled_writer.MergeBuffers) -> _Merged:
    """Merge one key range of partitioned segments: their postings sorted by (key, document).
    Values all equal (a presence store's): from the stored arrays as they are, in ``buffers``,
    unit by unit with the compiled loops (:func:`~coderiv.index.builder.combined_sort.sort_units`),
    else by one sort of packed integers (:func:`~coderiv.index.builder.combined_sort.sort_pieces`);
    otherwise a lexicographic sort. Returned as :func:`_merge_blocks` does."""
    slices = units.slices
    values = {segment.max_val for segment, _, _ in slices}
    grouped = None
    if all(segment.constant for segment, _, _ in slices) and len(values) == 1:
        value, top_doc = values.pop(), max(segment.top_doc for segment, _, _ in slices)
        grouped = _sorted_units(units, top_doc, value, buffers)
        if grouped is None:
            pieces = [(segment.read("keys", a, b - a), segment.raw("docs", a, b - a), segment.doc_base) for segment, a, b in slices]
            grouped = sort_pieces(pieces, top_doc, value, buffers)
    if grouped is not None:
        unique, counts, docs, vals, maxima = grouped[:5]
    else:
        keys = np.concatenate([np.empty(0, np.uint64), *(segment.read("keys", a, b - a) for segment, a, b in slices)])
        docs = np.concatenate([np.empty(0, np.uint32), *(segment.read("docs", a, b - a) for segment, a, b in slices)])
        vals = np.concatenate([np.empty(0, np.uint32), *(segment.read("vals", a, b - a) for segment, a, b in slices)])
        unique, counts, docs, vals, maxima = group_postings(keys, docs, vals)
    run_at, run_high = range_runs(docs)
    # the conversions go to the range's buffers, not fresh arrays (whose pages every range
    # would fault in anew; see the machine note in docs/performance.md)
    wide_counts = buffers.get("counts_int64", len(counts), np.int64)
    np.copyto(wide_counts, counts, casting="unsafe")
    low = buffers.get("low_uint16", len(docs), np.uint16)
    np.copyto(low, docs, casting="unsafe")  # the low 16 bits
    return unique, wide_counts, maxima, low, vals, run_at, run_high


def _sorted_units(units: _Units, top_doc: int, value: int, buffers: compiled_writer.MergeBuffers) -> Sorted | None:
    """:func:`~coderiv.index.builder.combined_sort.sort_units` of a key range's slices, read as they are
    stored into reused buffers (None: not loaded, see there)."""
    if not combined_sort_loaded():
        return None
    slices = units.slices
    total = sum(b - a for _, a, b in slices)
    narrow_docs = all(segment.narrow_docs for segment, _, _ in slices)
    keys = buffers.get("unit_keys", total, np.uint16)  # (a partitioned run's stored low bits)
    docs = buffers.get("unit_narrow_docs", total, np.uint16) if narrow_docs else buffers.get("unit_docs", total, np.uint32)
    offsets = np.zeros(len(slices), np.int64)
    at = 0
    for number, (segment, a, b) in enumerate(slices):
        segment.read_into("keys", a, keys[at : at + b - a], low_keys=True)  # (sort_units needs no more)
        segment.read_into("docs", a, docs[at : at + b - a], rebase=False)
        offsets[number] = at
        at += b - a
    bases = np.array([segment.doc_base for segment, _, _ in slices], np.int64)
    where = np.ascontiguousarray(units.bounds + offsets[:, None])
    return sort_units(keys, docs, bases, where, units.unit_shift, units.unit_lo, top_doc, value, buffers)


def range_runs(docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of a merged key range's documents (uint32): where ``docs >> 16`` changes, from
    the first (the writer joins them across ranges, :func:`append_key_range`); one run without
    a pass when every number is below 65,536."""
    if not len(docs):
        return np.zeros(0, np.int64), np.zeros(0, np.uint16)
    if int(docs.max()) < 1 << 16:
        return np.zeros(1, np.int64), np.zeros(1, np.uint16)
    high = docs >> np.uint32(16)
    run_at = np.concatenate(([0], np.flatnonzero(high[1:] != high[:-1]) + 1))
    return run_at, high[run_at].astype(np.uint16)


def _sorted(segment: Segment) -> Segment:
    """A partitioned segment sorted by (key, document), as a run's segment usually is (its
    store's other runs have wide keys: the merge takes them all by key); others as they are."""
    if segment.parts is None:
        return segment
    keys = segment.read("keys", 0, segment.n_postings)
    docs = segment.read("docs", 0, segment.n_postings)
    vals = segment.read("vals", 0, segment.n_postings)
    grouped = group_postings(keys, docs, vals)
    shutil.rmtree(segment.folder, ignore_errors=True)
    return save_segment(segment.folder.with_name(segment.folder.name + "-by-key"), *grouped)


def _merged_ranges(ranges: Iterator[Any], merge: Callable[[Any, compiled_writer.MergeBuffers], _Merged]) -> Iterator[tuple[Any, _Merged]]:
    """Every key range (of :func:`_key_ranges` or :func:`_partition_ranges`) with its merge (by
    ``merge``), merged in a thread one range ahead of the one being written, so that a second
    core merges (sorts, compiled loops: the GIL released) while this one writes. Two sets of
    buffers for the compiled loop, used in turn: a range's are reused two ranges later, after
    it has been written."""
    buffers = [compiled_writer.MergeBuffers(), compiled_writer.MergeBuffers()]
    with ThreadPoolExecutor(1, thread_name_prefix="coderiv-merge") as ahead:
        pending: tuple[Any, Future[_Merged]] | None = None
        for number, blocks in enumerate(ranges):
            merging = ahead.submit(merge, blocks, buffers[number % 2])
            if pending is not None:
                yield pending[0], pending[1].result()
            pending = blocks, merging
        if pending is not None:
            yield pending[0], pending[1].result()


def _release_read(done: list[_Block] | _Units) -> None:
    """Give back the scratch pages of a written key range's postings (the segments are read in
    key order: nothing before them is read again; :meth:`Segment.release`)."""
    if isinstance(done, _Units):
        for segment, _, stop in done.slices:
            segment.release(("keys", "docs", "vals"), stop)
    else:
        for block in done:
            block.segment.release(("docs", "vals"), block.posting_at + int(block.counts.sum(dtype=np.int64)))


def _merge_blocks(blocks: list[_Block], buffers: compiled_writer.MergeBuffers) -> _Merged:
    """Merge one key range's blocks (segments in document order): (keys, postings per key,
    largest value per key, documents' low 16 bits, values, run starts relative to the range,
    their high bits). Narrow keys (chunk ids) by one sort of packed postings, else the
    compiled loop when loaded (into ``buffers``), else numpy passes."""
    packed = _merge_narrow(blocks)
    if packed is not None:
        return packed
    keys = distinct(np.concatenate([b.keys for b in blocks]))
    merged = _compiled_merge(blocks, keys, buffers)
    if merged is not None:
        return (keys, *merged)
    counts = np.zeros(len(keys), np.int64)
    maxvals = np.zeros(len(keys), np.uint32)
    positions = []
    for block in blocks:
        pos = np.searchsorted(keys, block.keys)  # a key is once in a segment: plain fancy updates
        counts[pos] += block.counts
        maxvals[pos] = np.maximum(maxvals[pos], block.maxima)
        positions.append(pos)
    ptr = np.cumsum(counts)
    filled = ptr - counts  # next free place of each key, relative to the range's first posting
    low = np.empty(int(ptr[-1]), np.uint16)
    vals = np.empty(int(ptr[-1]), np.uint32)
    runs = _DocRuns(len(keys))
    for block, pos in zip(blocks, positions):
        seg_counts = block.counts.astype(np.int64)
        n = int(seg_counts.sum())
        seg_docs = block.segment.read("docs", block.posting_at, n)
        offsets = np.cumsum(seg_counts) - seg_counts
        dest = np.arange(n, dtype=np.int64) + np.repeat(filled[pos] - offsets, seg_counts)
        runs.add(seg_docs, pos, offsets, dest)
        low[dest] = seg_docs.astype(np.uint16)  # the low 16 bits
        vals[dest] = block.segment.read("vals", block.posting_at, n)
        filled[pos] += seg_counts
    run_at, run_high = runs.arrays()
    return keys, counts, maxvals, low, vals, run_at, run_high


def _merge_narrow(blocks: list[_Block]) -> _Merged | None:
    """:func:`_merge_blocks` for keys, documents and values that fit in 64 bits together (chunk
    ids): the blocks' postings sorted by (key, document) in one sort of packed integers
    (:func:`~coderiv.index.builder.combined_sort.sort_packed`); None when they do not fit."""
    sizes = [int(b.counts.sum(dtype=np.int64)) for b in blocks]
    if not sum(sizes) or any(int(b.keys[-1]).bit_length() > 32 for b in blocks if len(b.keys)):
        return None  # wide keys (terms): the other paths; the blocks' keys are sorted
    keys = np.concatenate([np.repeat(b.keys, b.counts) for b in blocks])
    docs = np.concatenate([b.segment.read("docs", b.posting_at, size) for b, size in zip(blocks, sizes)])
    vals = np.concatenate([b.segment.read("vals", b.posting_at, size) for b, size in zip(blocks, sizes)])
    grouped = sort_packed(keys, docs, vals, runs=True)
    if grouped is None:
        return None
    unique, counts, docs, vals, maxima, run_at, run_high = grouped
    return unique, counts.astype(np.int64), maxima, docs.astype(np.uint16), vals, run_at, run_high


def _compiled_merge(
    blocks: list[_Block], keys: np.ndarray, buffers: compiled_writer.MergeBuffers
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`~coderiv.index.builder.compiled_writer.merge_key_range` of the blocks (None: not loaded),
    their postings read into reused buffers."""
    if not compiled_writer.load():
        return None
    pos = np.concatenate([np.searchsorted(keys, b.keys) for b in blocks])
    sizes = [int(b.counts.sum(dtype=np.int64)) for b in blocks]
    total = sum(sizes)
    docs, vals = buffers.get("docs", total, np.uint32), buffers.get("in_vals", total, np.uint32)
    at = 0
    for block, size in zip(blocks, sizes):
        block.segment.read_into("docs", block.posting_at, docs[at : at + size])
        block.segment.read_into("vals", block.posting_at, vals[at : at + size])
        at += size
    counts = np.concatenate([b.counts for b in blocks])
    maxima = np.concatenate([b.maxima for b in blocks])
    return compiled_writer.merge_key_range(pos, counts, maxima, docs, vals, len(keys), buffers)


def append_key_range(
    keys: np.ndarray, counts: np.ndarray, maxvals: np.ndarray, low: np.ndarray, vals: np.ndarray, run_at: np.ndarray,
    run_high: np.ndarray, written: int, high: int, files: dict[str, NpyWriter | SplitWriter],
    over: tuple[list[np.ndarray], list[np.ndarray]] | None,
) -> tuple[int, int]:
    """Append one merged key range (:func:`_merge_blocks`) to the store's files (its ``counts``
    become the offsets, in place); ``written``
    postings precede it, the last of them with high bits ``high`` (−1 before the first); values
    of ``ESCAPE`` and more go to ``over`` (positions, values) when given; values and largest
    values are not written when ``files`` has no ``vals`` (a presence store). The range's runs start
    at each key's first posting (its keys were merged apart); only those where the high bits
    change are kept (:class:`~coderiv.index.format.postings.SplitNumbers`). Returns the postings written
    with it and before it, and the last one's high bits."""
    # in place, over the counts (int64, not read again): no array of the range's keys is
    # allocated (a fresh allocation faults its pages in)
    ptr = counts if counts.dtype == np.int64 and counts.flags.writeable else counts.astype(np.int64)
    np.cumsum(ptr, out=ptr)
    ptr += written
    files["keys"].append(keys)
    files["ptr"].append(ptr)
    files["docs"].append(low)
    if "vals" in files:  # (a presence store has no values files)
        files["maxvals"].append(maxvals)
        if over is not None:
            large = np.flatnonzero(vals >= ESCAPE)
            over[0].append(large + written)
            over[1].append(vals[large])
            vals = np.minimum(vals, ESCAPE, out=vals if vals.flags.writeable else None)
        files["vals"].append(vals)
    highs = run_high.astype(np.int64)
    change = highs != np.concatenate(([high], highs[:-1]))
    files["doc_run_at"].append(run_at[change] + written)
    files["doc_run_high"].append(run_high[change])
    return int(ptr[-1]), int(highs[-1]) if len(highs) else high


class _DocRuns:
    """The runs of a key range for :class:`~coderiv.index.format.postings.SplitNumbers` (a run starts at
    every key's first posting and wherever a key's ``docs >> 16`` changes; :func:`append_key_range`
    keeps those where the high bits change in store order), found while a key range's segments
    are merged, so the merged numbers are never written in full nor read again. A key's
    postings arrive segment by segment in document order; ``last_high`` carries each key's high
    bits from one segment to the next."""

    def __init__(self, n_keys: int) -> None:
        self.last_high = np.full(n_keys, -1, np.int64)
        self.at: list[np.ndarray] = []
        self.high: list[np.ndarray] = []

    def add(self, seg_docs: np.ndarray, pos: np.ndarray, offsets: np.ndarray, dest: np.ndarray) -> None:
        """One segment: ``seg_docs`` sorted by (key, document); the block of key ``pos[i]``
        starts at ``offsets[i]`` and goes to output positions ``dest``."""
        if not len(seg_docs):
            return
        high = seg_docs.astype(np.int64) >> 16
        starts = np.zeros(len(high), bool)
        starts[1:] = high[1:] != high[:-1]
        starts[offsets] = high[offsets] != self.last_high[pos]
        ends = np.append(offsets[1:], len(high)) - 1
        self.last_high[pos] = high[ends]
        at = np.flatnonzero(starts)
        self.at.append(dest[at])
        self.high.append(high[at])

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(run starts, their high bits), ordered by position."""
        at = np.concatenate(self.at) if self.at else np.empty(0, np.int64)
        high = np.concatenate(self.high) if self.high else np.empty(0, np.int64)
        order = np.argsort(at, kind="stable")
        return at[order], high[order].astype(np.uint16)
