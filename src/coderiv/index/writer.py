"""Writing an index generation in bounded memory: spill, number, invert by range, merge.

1. **Spill.** Analysed batches of new or changed documents are appended to runs on disk
   (flat forward arrays: per-document counts, keys, values), so no more than one run is held.
   In a fresh build whose documents come in id order, each run is instead grouped by key into
   a segment (step 3's form) in a thread while analysis goes on (:class:`Presort`), and steps
   2–3 have nothing left to do; a run whose keys fit in 32 bits (chunk ids) is only split by
   the top bits of its keys (:mod:`~coderiv.index.key_partition`), the merge sorting each key
   range once.
2. **Number.** Once every id is known, documents are numbered in sorted id order, which makes
   the result independent of input order: an update equals a full rebuild, array for array.
3. **Invert by range.** Document numbers are cut into ranges of about ``range_postings``
   postings. Each range gathers its documents' postings — new ones from the runs, unchanged
   ones from the previous generation's inverted arrays — sorts them by (key, document) and is
   written as a segment: raw files of keys, counts and maxima per key, documents and values.
4. **Merge by key range.** The segments are read a block at a time and merged one key range
   at a time (:func:`_key_ranges`, at most ``range_postings / 8`` segment keys and postings;
   partitioned runs by ranges of whole partitions, :func:`_partition_ranges`);
   ranges are in document order, so each key's documents come out ascending. Each output
   ``.npy`` is appended to as the key ranges go (:class:`NpyWriter`). Document numbers are
   written as their low 16 bits, and the runs of high bits are found segment by segment on
   the way (:class:`_DocRuns`); values as one byte a posting with the large ones aside.

The heavy loops (a run grouped by key, a key range merged) have compiled twins in
:mod:`~coderiv.index.compiled_writer` (numba, ``coderiv[fast]``), used when the indexing job
loaded numba; they write the same bytes. Postings whose key, document and value fit in 64
bits together (a chunk store's 32-bit ids) are instead sorted, grouped and merged by one sort
of packed integers (:mod:`~coderiv.index.combined_sort`), and their segments are written
narrow (keys in 4 bytes, equal values not at all). A key range is merged by a thread one range
ahead of the one being written. The cosine statistics of a written terms store are computed by
:mod:`~coderiv.index.cosine_statistics`.

Peak memory is a few times ``range_postings`` × 8 bytes, whatever the number of documents or
keys: no array of the merge holds one entry per key of the store.
"""

from __future__ import annotations

import multiprocessing
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.format import dtype_to_descr, write_array_header_1_0

from coderiv.index import compiled_writer, key_partition
from coderiv.index.analysis_workers import AnalyzedBatch, default_workers
from coderiv.index.child_processes import stop_pool, worker_pool
from coderiv.index.combined_sort import Sorted, group_narrow_run, sort_packed, sort_pieces, sort_units
from coderiv.index.combined_sort import loaded as combined_sort_loaded
from coderiv.index.compiled_writer import group_run
from coderiv.index.counts import ESCAPE, OVER_AT_FILE, OVER_VAL_FILE
from coderiv.index.early_writeback import WRITEBACK_BYTES, start_writeback
from coderiv.index.postings import ENCODE_CHUNK, SPLIT_FILES, Postings, group_by_key, key_dtype, narrow, offsets_dtype
from coderiv.index.scratch_pages import release_prefix
from coderiv.keys.kinds import distinct

RANGE_POSTINGS = 16_000_000
RUN_POSTINGS = 2_000_000
#: Postings of a key range of partitioned segments (a chunk store's) merged at a time: the
#: merge's buffers (about 46 bytes a posting, two sets) are faulted in once, and its radix sort's
#: arrays stay in cache. At 1M instead of the 2M of ``RANGE_POSTINGS // 8`` a report-ready
#: build of 10,000 long documents took 0.3–0.5 s less CPU (system time 1.25–1.37 s against
#: 1.85–2.32) and 40–50 MB less peak memory; 500K was no better than 1M (26 Nov 2026).
PARTITION_RANGE_POSTINGS = 1_000_000


class Run:
    """One spilled run: its documents and, per store, (doc_ptr, keys, vals) memory-mapped; and
    its segments being sorted while analysis goes on (:class:`Presort`), if any. A presorted
    run has no forward files unless they are needed (:attr:`stores`)."""

    def __init__(
        self, ids: list[str], stores: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
        presort: Presort | None = None,
    ) -> None:
        if stores is None and presort is None:
            raise ValueError("a run needs its forward arrays or its presort")
        self.ids, self._stores, self.presort = ids, stores, presort

    @property
    def stores(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per store, (doc_ptr, keys, vals): a presorted run's are rebuilt from its segments the
        first time they are asked for (documents that did not come in id order)."""
        if self._stores is None:
            assert self.presort is not None
            self._stores = self.presort.forward()
        return self._stores


class Spill:
    """Collects analysed batches into runs on disk (see the module docstring, step 1).

    With ``presort``, runs are sorted into segments while analysis goes on (:class:`Presort`)
    for as long as the documents come in id order (then a fresh build numbers them 0, 1, … in
    run order); a presorted run writes no forward files. Once a document comes out of order,
    the later runs are written as forward files only."""

    def __init__(self, folder: Path, names: list[str], run_postings: int | None = None, presort: bool = True) -> None:
        self.folder = folder
        self.names = names
        self.run_postings = run_postings or RUN_POSTINGS
        self.presort = presort
        self.runs: list[Run] = []
        self._pending: list[AnalyzedBatch] = []
        self._size = 0
        self._last_id: str | None = None
        #: the partitioned arrays of the run being sorted, reused by the next (one at a time)
        self.buffers = compiled_writer.MergeBuffers()

    def add(self, batch: AnalyzedBatch) -> None:
        if not batch.ids:
            batch.release()
            return
        if self.presort:
            previous = self._last_id
            for doc_id in batch.ids:
                if previous is not None and doc_id <= previous:
                    self.presort = False  # out of id order: numbers will not follow run order
                    break
                previous = doc_id
            self._last_id = batch.ids[-1]
        self._pending.append(batch)
        self._size += batch.n_postings
        if self._size >= self.run_postings:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        folder = self.folder / f"run-{len(self.runs):05d}"
        folder.mkdir(parents=True)
        ids = [doc_id for b in self._pending for doc_id in b.ids]
        if self.runs and self.runs[-1].presort is not None:
            self.runs[-1].presort.join()  # one run sorted at a time: bounded memory
        if self.presort:
            first = sum(len(run.ids) for run in self.runs)
            self.runs.append(Run(ids, presort=Presort(self._pending, self.names, first, folder, self.buffers)))
        else:
            stores = {}
            for name in self.names:
                counts, keys, vals = _concatenated(self._pending, name)
                stores[name] = _save_forward(folder, name, counts, keys, vals)
            for batch in self._pending:
                batch.release()
            self.runs.append(Run(ids, stores))
        self._pending, self._size = [], 0


def _concatenated(batches: list[AnalyzedBatch], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(postings per document, keys, values) of store ``name`` over the batches."""
    parts = [b.stores[name] for b in batches]
    return tuple(np.concatenate([part[i] for part in parts]) for i in range(3))  # type: ignore[return-value]


def _save_forward(
    folder: Path, name: str, counts: np.ndarray, keys: np.ndarray, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Write a run's forward arrays of store ``name`` and map them: (doc_ptr, keys, vals)."""
    doc_ptr = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=doc_ptr[1:])
    arrays = {"doc_ptr": doc_ptr, "keys": keys, "vals": vals}
    for label, array in arrays.items():
        np.save(folder / f"{_safe(name)}.{label}.npy", array)
    return tuple(np.load(folder / f"{_safe(name)}.{label}.npy", mmap_mode="r") for label in arrays)


class Presort(threading.Thread):
    """Sorts one run into a segment per store while analysis goes on (the concatenation, the
    grouping by key of :func:`~coderiv.index.compiled_writer.group_run` and the writes release
    the GIL), with the document numbers ``first, first + 1, …`` that the run's documents get
    when they arrive in id order and nothing is kept from a previous index — as in a fresh
    build of a folder or tar. :func:`write_store` checks that before using them."""

    def __init__(
        self, batches: list[AnalyzedBatch], names: list[str], first: int, folder: Path,
        buffers: compiled_writer.MergeBuffers | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.batches, self.names, self.first, self.folder = batches, names, first, folder
        self.buffers = buffers
        self.segments: dict[str, Segment] = {}
        self.n_docs = sum(len(b.ids) for b in batches)
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            for name in self.names:
                folder = self.folder / f"{_safe(name)}-sorted"
                pieces = [batch.stores[name] for batch in self.batches]
                doc_type = np.uint16 if sum(len(counts) for counts, _, _ in pieces) <= 1 << 16 else np.uint32
                split = key_partition.partition_pieces(pieces, doc_type, self.buffers)  # the batches as they are, not joined
                if split is not None:  # narrow keys (chunk ids): the merge sorts them, by key range
                    self.segments[name] = _save_partitioned(folder, split, self.first)
                    continue
                counts, keys, vals = _concatenated(self.batches, name)
                n_docs = len(counts)
                grouped = group_narrow_run(keys, counts, self.first, vals) or group_run(keys, counts, self.first, vals)
                del counts, keys, vals
                self.segments[name] = _save_segment(folder, *grouped, self.first, n_docs)
        except BaseException as exc:  # re-raised by result() in the writing thread
            self.error = exc
        finally:
            for batch in self.batches:  # read: their shared slots can take new batches
                batch.release()
            self.batches = []

    def result(self) -> dict[str, Segment]:
        self.join()
        if self.error is not None:
            raise self.error
        return self.segments

    def forward(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The run's forward files, rebuilt from its segments and mapped (the documents did not
        come in id order, so the segments' numbers are not theirs): per document, its keys in
        ascending order with their values, as the analysis gave them."""
        stores = {}
        for name, segment in self.result().items():
            if segment.parts is not None:  # partitioned: a key per posting
                keys = segment.read("keys", 0, segment.n_postings)
            else:
                keys = np.repeat(segment.read("keys", 0, segment.n_keys), segment.read("counts", 0, segment.n_keys))
            docs = segment.read("docs", 0, segment.n_postings).astype(np.int64) - self.first
            order = np.argsort(docs, kind="stable")
            counts = np.bincount(docs, minlength=self.n_docs)
            vals = segment.read("vals", 0, segment.n_postings)[order]
            stores[name] = _save_forward(self.folder, name, counts, keys[order], vals)
        return stores


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _slices(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Indexes of the entries of ``rows`` in a CSR layout with offsets ``ptr`` (vectorized)."""
    starts = ptr[rows]
    lengths = ptr[rows + 1] - starts
    offsets = np.cumsum(lengths) - lengths
    return np.asarray(np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(offsets - starts, lengths))


@dataclass
class Sources:
    """Where each new document number's postings come from: a run, or the previous index."""

    runs: list[Run]
    run_numbers: list[np.ndarray]  # new number of every document of each run
    old: dict[str, Postings]  # previous generation's stores (empty for a fresh build)
    old_to_new: np.ndarray  # new number of every old document, −1 where dropped or changed

    def range_postings(self, name: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(doc numbers, keys, vals) of every posting of documents lo ≤ number < hi."""
        docs, keys, vals = [], [], []
        for run, numbers in zip(self.runs, self.run_numbers):
            rows = np.flatnonzero((numbers >= lo) & (numbers < hi))
            if not len(rows):
                continue
            doc_ptr, run_keys, run_vals = run.stores[name]
            docs.append(np.repeat(numbers[rows], np.diff(np.asarray(doc_ptr))[rows]))
            if int(rows[-1]) - int(rows[0]) + 1 == len(rows):  # consecutive documents: one slice, no gather
                a, b = int(doc_ptr[rows[0]]), int(doc_ptr[rows[-1] + 1])
                keys.append(np.array(run_keys[a:b]))
                vals.append(np.asarray(run_vals[a:b]).astype(np.uint32))
                continue
            idx = _slices(np.asarray(doc_ptr), rows)
            keys.append(np.asarray(run_keys[idx]))
            vals.append(np.asarray(run_vals[idx]).astype(np.uint32))
        if name in self.old:
            in_range = np.flatnonzero((self.old_to_new >= lo) & (self.old_to_new < hi))
            if len(in_range):
                store = self.old[name]
                positions, old_numbers = _postings_of_documents(store, int(in_range[0]), int(in_range[-1]))
                new = self.old_to_new[old_numbers]
                positions, new = positions[new >= 0], new[new >= 0]
                docs.append(new)
                keys.append(store.keys_at(store.key_of(positions)))
                vals.append(store.vals.take(positions).astype(np.uint32))
        if not docs:
            return np.empty(0, np.int64), np.empty(0, np.uint64), np.empty(0, np.uint32)
        return np.concatenate(docs).astype(np.int64), np.concatenate(keys), np.concatenate(vals)


def _postings_of_documents(store: Postings, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and document numbers of the postings of documents first..last (inclusive),
    decoding the document numbers a chunk at a time (memory stays bounded)."""
    positions, numbers = [], []
    for a in range(0, len(store.docs), ENCODE_CHUNK):
        docs = store.docs[a : a + ENCODE_CHUNK]
        hit = np.flatnonzero((docs >= first) & (docs <= last))
        positions.append(hit + a)
        numbers.append(docs[hit])
    if not positions:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(positions).astype(np.int64), np.concatenate(numbers).astype(np.int64)


def _ranges(weights: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Cut 0..len(weights) into consecutive ranges whose weights sum to about ``budget``."""
    cuts = [0]
    total = np.cumsum(weights)
    while cuts[-1] < len(weights):
        base = total[cuts[-1] - 1] if cuts[-1] else 0
        nxt = int(np.searchsorted(total, base + budget, side="right"))
        cuts.append(min(len(weights), max(nxt, cuts[-1] + 1)))
    return list(zip(cuts[:-1], cuts[1:]))


@dataclass
class Segment:
    """One document range's postings sorted by (key, document), as raw files in ``folder``:
    ``keys`` (uint64, unique), ``counts`` (uint32, postings per key), ``max`` (uint32, largest
    value per key), ``docs`` and ``vals`` (one per posting). Only these few numbers travel
    between processes; the merge reads the files a block at a time. ``docs`` holds the numbers
    less ``doc_base`` and both are written in 2 bytes when they fit (``narrow_docs``,
    ``narrow_vals``: a run's few thousand documents, its counts), else 4; reads give uint32.
    Keys below 2³² (chunk ids) are written in 4 bytes (``narrow_keys``; a partitioned run's in
    2, below), the largest values in 2 with the values, the postings per key in 2 when all are
    below 65,536 (``narrow_counts``). When every value is the same (``constant``: a presence
    store's 1s), the values and largest values are not written at all, reads give
    ``max_val``: a chunk store's partitioned runs are written and read back at 4 bytes a
    posting, not 20."""

    folder: Path
    n_keys: int
    n_postings: int
    max_val: int
    doc_base: int = 0
    narrow_docs: bool = False
    narrow_vals: bool = False
    narrow_keys: bool = False
    narrow_counts: bool = False
    constant: bool = False
    #: a partitioned run (:mod:`~coderiv.index.key_partition`): postings before each partition
    #: of keys ``key >> shift``; then ``keys`` has one key a posting (``n_keys`` of them, the
    #: postings), stored as its low 16 bits (reads give the whole keys; :meth:`read_into` with
    #: ``low_keys`` the stored bits), unsorted within a partition, no ``counts`` nor ``max``, and
    #: ``top_key`` is the largest key
    parts: np.ndarray | None = None
    shift: int = 0
    top_key: int = 0
    #: the largest document number a partitioned segment can hold
    top_doc: int = 0
    #: bytes of each file already read by the merge and given back (:meth:`release`)
    released: dict[str, int] = field(default_factory=dict)

    def _stored(self, name: str) -> np.dtype:
        if name == "keys":
            if self.parts is not None:
                return np.dtype(np.uint16)  # (the partitions give the top bits)
            return np.dtype(np.uint32 if self.narrow_keys else np.uint64)
        narrow = (
            (name == "docs" and self.narrow_docs) or (name in ("vals", "max") and self.narrow_vals)
            or (name == "counts" and self.narrow_counts)
        )
        return np.dtype(np.uint16 if narrow else np.uint32)

    def release(self, names: tuple[str, ...], upto: int) -> None:
        """Give back the pages of files ``names`` before entry ``upto``: the merge has read them
        and reads on from there (:mod:`~coderiv.index.scratch_pages`)."""
        for name in names:
            if self.constant and name in ("vals", "max"):
                continue  # (not written)
            path = self.folder / f"{name}.bin"
            self.released[name] = release_prefix(path, self.released.get(name, 0), upto * self._stored(name).itemsize)

    def read(self, name: str, start: int, count: int) -> np.ndarray:
        """``count`` entries of file ``name`` from entry ``start``, read (not mapped, so they
        leave the process's resident set when dropped)."""
        out = np.empty(count, np.uint64 if name == "keys" else np.uint32)
        self.read_into(name, start, out)
        return out

    def raw(self, name: str, start: int, count: int) -> np.ndarray:
        """``count`` entries of file ``name`` from entry ``start`` as they are stored (narrow
        types, documents less ``doc_base``, a partitioned run's keys as their low 16 bits), read."""
        part = np.fromfile(self.folder / f"{name}.bin", self._stored(name), count, offset=start * self._stored(name).itemsize)
        if len(part) != count:
            raise OSError(f"segment {self.folder.name} has fewer {name} than asked")
        return part

    def read_into(self, name: str, start: int, out: np.ndarray, rebase: bool = True, low_keys: bool = False) -> None:
        """:meth:`read` into ``out`` (contiguous; uint64 for keys, else uint32, or the stored
        type), as many entries as it holds; documents less ``doc_base`` unless ``rebase``; a
        partitioned run's keys whole unless ``low_keys`` (their stored low 16 bits)."""
        if self.constant and name in ("vals", "max"):
            out[:] = self.max_val
            return
        dtype = self._stored(name)
        raw = out if dtype == out.dtype else np.empty(len(out), dtype)
        with open(self.folder / f"{name}.bin", "rb") as handle:
            handle.seek(start * dtype.itemsize)
            if handle.readinto(raw.view(np.uint8).data) != raw.nbytes:
                raise OSError(f"{self.folder / name}.bin is shorter than expected")
        if name == "keys" and self.parts is not None and not low_keys:
            out[:] = key_partition.full_keys(raw, start, self.parts, self.shift)
        elif raw is not out:
            out[:] = raw
        if name == "docs" and self.doc_base and rebase:
            out += np.uint32(self.doc_base)


#: The sources of the store being written, for range workers forked from this process (a
#: forked child shares the parent's memory maps; nothing large is pickled).
_FORK_SOURCES: Sources | None = None


def _invert_range(sources: Sources, name: str, lo: int, hi: int, folder: Path) -> Segment:
    """Sort one document range's postings by (key, document) and write them as a segment."""
    docs, keys, vals = sources.range_postings(name, lo, hi)
    return _write_segment(folder, keys, docs, vals)


def _write_segment(folder: Path, keys: np.ndarray, docs: np.ndarray, vals: np.ndarray) -> Segment:
    """Postings in any order sorted by (key, document) (:func:`_grouped`) and written as a segment."""
    return _save_segment(folder, *_grouped(keys, docs, vals))


def _grouped(keys: np.ndarray, docs: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Postings in any order sorted by (key, document): (distinct keys, postings per key,
    documents, values, largest value per key), by one sort of packed postings when they fit in
    64 bits (:func:`~coderiv.index.combined_sort.sort_packed`, chunk ids), else by a
    lexicographic sort (:func:`~coderiv.index.postings.group_by_key`)."""
    packed = sort_packed(keys, docs, vals)
    return group_by_key(keys, docs, vals) if packed is None else packed[:5]


def _save_segment(
    folder: Path, keys: np.ndarray, counts: np.ndarray, docs: np.ndarray, vals: np.ndarray, maxima: np.ndarray,
    doc_base: int = 0, n_docs: int | None = None,
) -> Segment:
    """Write postings sorted by (key, document) as a segment: (distinct keys, postings per key,
    documents, values, largest value per key). Documents ``doc_base … doc_base + n_docs − 1``
    (a presorted run's) are written less ``doc_base``, in 2 bytes when there are at most 65,536
    of them; values in 2 bytes when all are below 65,536. Written to scratch files rather than
    kept: keeping a report-ready build's chunk segments in memory (until 25 Nov 2026, up to 256
    MB) saved no measurable CPU on 2,500 long documents and raised the build's peak by 100–250 MB."""
    top = int(np.max(maxima, initial=0))
    narrow_docs = n_docs is not None and n_docs <= 1 << 16
    narrow_vals = top < 1 << 16
    if narrow_docs:
        docs = docs - np.uint32(doc_base)
    narrow_keys = not len(keys) or int(keys[-1]) < 1 << 32  # sorted: the last is the largest
    narrow_counts = not len(counts) or int(counts.max()) < 1 << 16
    constant = bool(len(vals)) and int(vals.min()) == top
    segment = Segment(
        folder, len(keys), len(docs), top, doc_base if narrow_docs else 0, narrow_docs, narrow_vals, narrow_keys, narrow_counts,
        constant,
    )
    arrays = {"keys": keys, "counts": counts, "docs": docs} if constant else {
        "keys": keys, "counts": counts, "max": maxima, "docs": docs, "vals": vals,
    }
    stored = {label: array.astype(segment._stored(label), copy=False) for label, array in arrays.items()}
    folder.mkdir(parents=True)
    for label, array in stored.items():
        array.tofile(folder / f"{label}.bin")
    return segment


def _save_partitioned(folder: Path, split: key_partition.Partitioned, doc_base: int) -> Segment:
    """A run's postings by partition (:func:`~coderiv.index.key_partition.partition_run`,
    documents relative to ``doc_base``) written as a segment (as :func:`_save_segment`)."""
    narrow_docs = split.docs.dtype == np.uint16
    segment = Segment(
        folder, len(split.keys), len(split.keys), split.top_val, doc_base, narrow_docs, split.top_val < 1 << 16, True, False,
        split.vals is None, parts=narrow(split.parts), shift=split.shift, top_key=split.top_key, top_doc=doc_base + split.n_docs - 1,
    )
    stored = {"keys": split.keys, "docs": split.docs}
    if split.vals is not None:
        stored["vals"] = split.vals.astype(segment._stored("vals"), copy=False)
    folder.mkdir(parents=True)
    for label, array in stored.items():
        array.tofile(folder / f"{label}.bin")
    return segment


def _invert_range_forked(name: str, lo: int, hi: int, folder: Path) -> Segment:
    assert _FORK_SOURCES is not None
    return _invert_range(_FORK_SOURCES, name, lo, hi, folder)


def _invert_ranges(
    sources: Sources, name: str, ranges: list[tuple[int, int]], scratch: Path, workers: int | None = None
) -> list[Segment]:
    """Every range's segment, in range order; ranges are sorted in parallel worker processes
    (forked, so they share the sources' memory maps) when there are several."""
    global _FORK_SOURCES
    folders = [scratch / f"{_safe(name)}-seg-{number:05d}" for number in range(len(ranges))]
    workers = min(workers or default_workers(), len(ranges))
    if workers <= 1:
        return [_invert_range(sources, name, lo, hi, folder) for (lo, hi), folder in zip(ranges, folders)]
    _FORK_SOURCES = sources
    try:
        pool = worker_pool(workers, mp_context=multiprocessing.get_context("fork"))
        try:
            futures = [pool.submit(_invert_range_forked, name, lo, hi, folder) for (lo, hi), folder in zip(ranges, folders)]
            segments = [future.result() for future in futures]
        except BaseException:
            stop_pool(pool)
            raise
        pool.shutdown()
        return segments
    finally:
        _FORK_SOURCES = None


class WriteStopped(Exception):
    """A store's merge stopped between key ranges because ``stop`` was set (the thread writing
    it is not waited for when the build fails or is interrupted)."""


def write_store(
    sources: Sources, name: str, n_docs: int, weights: np.ndarray, out: Path, scratch: Path,
    range_postings: int | None = None, workers: int | None = None, merge_entries: int | None = None,
    stop: threading.Event | None = None,
) -> Postings:
    """Invert one store by document range and merge the segments into ``out`` (steps 3–4).

    ``range_postings`` bounds a document range's postings; ``merge_entries`` (default an eighth
    of it) bounds the segment keys and the postings of one key range of the merge."""
    range_postings = range_postings or RANGE_POSTINGS
    segments = _presorted_segments(sources, name)
    if segments is None:
        for run in sources.runs:
            run.stores  # noqa: B018 - a presorted run's forward files, made here before range workers fork
        segments = _invert_ranges(sources, name, _ranges(weights, range_postings), scratch, workers)
    presence = presence_segments(segments)
    try:
        split = merge_segments(segments, out, merge_entries or max(1, range_postings // 8), stop, presence)
    finally:
        for segment in segments:
            shutil.rmtree(segment.folder, ignore_errors=True)
    return Postings.load(out, n_docs, presence=presence, split=split)


def presence_segments(segments: list[Segment]) -> bool:
    """Whether the store merged from ``segments`` is a presence store (every value 1: written
    without values nor ``maxvals``, :data:`~coderiv.index.counts.PRESENCE`): it has postings and
    every segment that holds some is ``constant`` with value 1. The segments hold every posting
    of the store, those kept from a previous index too (:meth:`Sources.range_postings`), so an
    update keeps a presence store presence exactly when no posting has another value."""
    filled = [segment for segment in segments if segment.n_postings]
    return bool(filled) and all(segment.constant and segment.max_val == 1 for segment in filled)


def _presorted_segments(sources: Sources, name: str) -> list[Segment] | None:
    """The runs' own segments of store ``name`` (:class:`Presort`) when they hold the right
    document numbers: every run presorted, nothing kept from a previous index, and the runs'
    documents numbered 0, 1, … in run order. Otherwise None (after the sorts have finished, so
    that no thread runs when range workers are forked)."""
    if not _runs_presorted(sources):
        return None
    return [run.presort.result()[name] for run in sources.runs if run.presort is not None]


def from_presorted_runs(sources: Sources, names: list[str]) -> bool:
    """Whether every store of ``names`` is written from the runs' own segments
    (:func:`_presorted_segments`): then :func:`write_store` forks no range workers for them,
    and they may be written by threads at once."""
    return all(_presorted_segments(sources, name) is not None for name in names)


def _runs_presorted(sources: Sources) -> bool:
    """Whether every run was presorted with the document numbers it has, after the sorts
    have finished (see :func:`_presorted_segments`)."""
    presorts = [run.presort for run in sources.runs]
    for presort in presorts:
        if presort is not None:
            presort.result()
    if not presorts or None in presorts or sources.old:
        return False
    first = 0
    for numbers in sources.run_numbers:
        if not np.array_equal(numbers, np.arange(first, first + len(numbers))):
            return False
        first += len(numbers)
    return True


def merge_segments(
    segments: list[Segment], out: Path, budget: int, stop: threading.Event | None = None, presence: bool = False
) -> bool:
    """Merge sorted segments (in document order) into a store's ``.npy`` files, one key range at
    a time (:func:`_key_ranges`): each range's keys are unique-merged, its postings placed by
    key and written in order, so memory holds one key range, whatever the number of keys.
    Partitioned segments (a chunk store's runs, :mod:`~coderiv.index.key_partition`) are merged
    by ranges of whole partitions (:func:`_partition_ranges`), each sorted once; if only some
    are partitioned, those are sorted first.
    Values are written as :mod:`~coderiv.index.counts` stores them (one byte a posting, the
    values of 255 and more aside when any exceeds 255) on the way, with no pass afterwards; a
    ``presence`` store's (:func:`presence_segments`) and its ``maxvals`` not at all. Keys that
    all fit 32 bits (a chunk store's) and their offsets are written split, 2 bytes each
    (:class:`~coderiv.index.postings.SplitNumbers`); returns whether they were."""
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
            written, high = _append_key_range(*merged, written, high, files, over)
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
    (:func:`_ranges`; a unit is never cut)."""
    unit_shift = max(segment.shift for segment in segments)
    n_units = max(segment.top_key >> unit_shift for segment in segments) + 1
    bounds = []
    weights = np.zeros(n_units, np.int64)
    for segment in segments:
        assert segment.parts is not None
        bounds.append(key_partition.unit_bounds(segment.parts, segment.shift, unit_shift, n_units))
        weights += np.diff(bounds[-1])
    for lo, hi in _ranges(weights, budget):
        held = [(segment, b) for segment, b in zip(segments, bounds) if b[hi] > b[lo]]
        if held:  # (units without keys make a range of nothing)
            slices = [(segment, int(b[lo]), int(b[hi])) for segment, b in held]
            relative = np.array([b[lo : hi + 1] - b[lo] for _, b in held], np.int64)
            yield _Units(slices, relative, unit_shift, lo)


def _merge_slices(units: _Units, buffers: compiled_writer.MergeBuffers) -> _Merged:
    """Merge one key range of partitioned segments: their postings sorted by (key, document).
    Values all equal (a presence store's): from the stored arrays as they are, in ``buffers``,
    unit by unit with the compiled loops (:func:`~coderiv.index.combined_sort.sort_units`),
    else by one sort of packed integers (:func:`~coderiv.index.combined_sort.sort_pieces`);
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
        unique, counts, docs, vals, maxima = _grouped(keys, docs, vals)
    run_at, run_high = _range_runs(docs)
    # the conversions go to the range's buffers, not fresh arrays (whose pages every range
    # would fault in anew; see the machine note in docs/performance.md)
    wide_counts = buffers.get("counts_int64", len(counts), np.int64)
    np.copyto(wide_counts, counts, casting="unsafe")
    low = buffers.get("low_uint16", len(docs), np.uint16)
    np.copyto(low, docs, casting="unsafe")  # the low 16 bits
    return unique, wide_counts, maxima, low, vals, run_at, run_high


def _sorted_units(units: _Units, top_doc: int, value: int, buffers: compiled_writer.MergeBuffers) -> Sorted | None:
    """:func:`~coderiv.index.combined_sort.sort_units` of a key range's slices, read as they are
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


def _range_runs(docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of a merged key range's documents (uint32): where ``docs >> 16`` changes, from
    the first (the writer joins them across ranges, :func:`_append_key_range`); one run without
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
    grouped = _grouped(keys, docs, vals)
    shutil.rmtree(segment.folder, ignore_errors=True)
    return _save_segment(segment.folder.with_name(segment.folder.name + "-by-key"), *grouped)


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
    (:func:`~coderiv.index.combined_sort.sort_packed`); None when they do not fit."""
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
    """:func:`~coderiv.index.compiled_writer.merge_key_range` of the blocks (None: not loaded),
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


def _append_key_range(
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
    change are kept (:class:`~coderiv.index.postings.SplitNumbers`). Returns the postings written
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
    """The runs of a key range for :class:`~coderiv.index.postings.SplitNumbers` (a run starts at
    every key's first posting and wherever a key's ``docs >> 16`` changes; :func:`_append_key_range`
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


class NpyWriter:
    """A one-dimensional ``.npy`` file written front to back in pieces, its length filled in when
    closed: the same bytes as ``np.save`` of the whole array, without holding it. The header
    has a fixed size (numpy pads it for any length), which :meth:`close` checks. A full disk is
    an ``OSError`` from a write, never a fault in a memory map. Every
    :data:`~coderiv.index.early_writeback.WRITEBACK_BYTES` written start their way to disk
    (:mod:`~coderiv.index.early_writeback`), so that the commit's fsync finds little left."""

    def __init__(self, path: Path, dtype: np.dtype) -> None:
        self.path, self.dtype, self.length = path, np.dtype(dtype), 0
        self.file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.header_size = self._header()
        #: where a piece of another type is converted, reused from piece to piece (no fresh pages)
        self._converted = np.empty(0, self.dtype)
        #: bytes whose writeback has been started (the file's first bytes up to there)
        self.written_back = 0

    def _header(self) -> int:
        header = {"descr": dtype_to_descr(self.dtype), "fortran_order": False, "shape": (self.length,)}
        write_array_header_1_0(self.file, header)
        return self.file.tell()

    def append(self, array: np.ndarray) -> None:
        array = np.asarray(array)
        if array.dtype != self.dtype or not array.flags.c_contiguous:
            if len(self._converted) < len(array):
                self._converted = np.empty(len(array), self.dtype)
            converted = self._converted[: len(array)]
            np.copyto(converted, array, casting="unsafe")
            array = converted
        array.tofile(self.file)
        self.length += len(array)
        end = self.header_size + self.length * self.dtype.itemsize
        if end - self.written_back >= WRITEBACK_BYTES:
            # (tofile flushes the file and writes through its descriptor: nothing is buffered)
            start_writeback(self.file.fileno(), self.written_back, end - self.written_back)
            self.written_back = end

    def close(self) -> None:
        if self.file.closed:
            return
        try:
            self.file.seek(0)
            if self._header() != self.header_size:
                raise RuntimeError(f"npy header of {self.path} changed size")
        finally:
            self.file.close()


class SplitWriter:
    """Ascending numbers below 2³² (a split store's keys or offsets) written front to back in
    pieces as :class:`~coderiv.index.postings.SplitNumbers`: their low 16 bits, and a run
    wherever the high bits change. The runs (at most 65,536) are kept and saved on
    :meth:`close`, so the files are the bytes ``np.save`` gives the in-memory encoding."""

    def __init__(self, folder: Path, names: tuple[str, str, str]) -> None:
        self.folder, self.names = folder, names
        self.low = NpyWriter(folder / f"{names[0]}.npy", np.dtype(np.uint16))
        self.length, self.high = 0, -1
        self.run_at: list[np.ndarray] = []
        self.run_high: list[np.ndarray] = []

    def append(self, values: np.ndarray) -> None:
        """Append ascending ``values`` (each at least the last one appended)."""
        if not len(values):
            return
        values = np.asarray(values)
        # the values ascend: each high part's first value is found by a binary search, one per
        # high part in the piece (no pass over the piece but the low bits' cast)
        highs = np.arange(int(values[0]) >> 16, (int(values[-1]) >> 16) + 1, dtype=np.int64)
        at = np.searchsorted(values, (highs << 16).astype(values.dtype))
        present = at < np.append(at[1:], len(values))  # a high part no value has starts where the next does
        at, highs = at[present], highs[present]
        if int(highs[0]) == self.high:  # the piece continues the last run
            at, highs = at[1:], highs[1:]
        self.run_at.append(at + self.length)
        self.run_high.append(highs)
        self.low.append(values)  # (the writer's unsafe cast keeps the low 16 bits)
        self.length += len(values)
        self.high = int(values[-1]) >> 16

    def close(self) -> None:
        if self.low.file.closed:
            return
        self.low.close()
        run_at = narrow(np.concatenate([np.empty(0, np.int64), *self.run_at, [self.length]]).astype(np.int64))
        run_high = np.concatenate([np.empty(0, np.int64), *self.run_high]).astype(np.uint16)
        np.save(self.folder / f"{self.names[1]}.npy", run_at, allow_pickle=False)
        np.save(self.folder / f"{self.names[2]}.npy", run_high, allow_pickle=False)


def scratch_folder(root: Path) -> Path:
    """A temporary folder for runs and segments beside the index (same filesystem)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="tmp-scratch-", dir=root))

