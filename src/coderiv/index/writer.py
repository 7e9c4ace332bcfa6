"""Writing an index generation in bounded memory: spill, number, invert by range, merge.

1. **Spill.** Analysed batches of new or changed documents are appended to runs on disk
   (flat forward arrays: per-document counts, keys, values), so no more than one run is held.
2. **Number.** Once every id is known, documents are numbered in sorted id order, which makes
   the result independent of input order: an update equals a full rebuild, array for array.
3. **Invert by range.** Document numbers are cut into ranges of about ``range_postings``
   postings. Each range gathers its documents' postings — new ones from the runs, unchanged
   ones from the previous generation's inverted arrays — sorts them by (key, document) and is
   written as a segment.
4. **Merge.** Segments are merged key by key straight into the memory-mapped output arrays;
   ranges are in document order, so each key's documents come out ascending. Document
   numbers are written as their low 16 bits, and the runs of high bits are found segment by
   segment on the way (:class:`_DocRuns`), with no further pass over the postings.

Peak memory is a few times ``range_postings`` × 8 bytes, whatever the collection's size.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.format import open_memmap

from coderiv.index.analysis_workers import AnalyzedBatch, default_workers
from coderiv.index.child_processes import stop_pool, worker_pool
from coderiv.index.counts import encode_file
from coderiv.index.postings import ENCODE_CHUNK, Postings, group_by_key, narrow
from coderiv.keys.kinds import StoreSpec
from coderiv.weights import document_norms, idf_weight, tf_weight

RANGE_POSTINGS = 16_000_000
RUN_POSTINGS = 8_000_000


@dataclass
class Run:
    """One spilled run: its documents and, per store, (doc_ptr, keys, vals) memory-mapped."""

    ids: list[str]
    stores: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


class Spill:
    """Collects analysed batches into runs on disk (see the module docstring, step 1)."""

    def __init__(self, folder: Path, names: list[str], run_postings: int | None = None) -> None:
        self.folder = folder
        self.names = names
        self.run_postings = run_postings or RUN_POSTINGS
        self.runs: list[Run] = []
        self._pending: list[AnalyzedBatch] = []
        self._size = 0

    def add(self, batch: AnalyzedBatch) -> None:
        if not batch.ids:
            return
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
        stores = {}
        for name in self.names:
            counts = np.concatenate([b.stores[name][0] for b in self._pending])
            doc_ptr = np.zeros(len(counts) + 1, np.int64)
            np.cumsum(counts, out=doc_ptr[1:])
            arrays = {
                "doc_ptr": doc_ptr,
                "keys": np.concatenate([b.stores[name][1] for b in self._pending]),
                "vals": np.concatenate([b.stores[name][2] for b in self._pending]),
            }
            for label, array in arrays.items():
                np.save(folder / f"{_safe(name)}.{label}.npy", array)
            stores[name] = tuple(np.load(folder / f"{_safe(name)}.{label}.npy", mmap_mode="r") for label in arrays)
        self.runs.append(Run(ids, stores))
        self._pending, self._size = [], 0


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
                key_of = np.searchsorted(np.asarray(store.ptr), positions, side="right") - 1
                docs.append(new)
                keys.append(np.asarray(store.keys)[key_of])
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


Segment = tuple[np.ndarray, np.ndarray, np.ndarray, Path]

#: The sources of the store being written, for range workers forked from this process (a
#: forked child shares the parent's memory maps; nothing large is pickled).
_FORK_SOURCES: Sources | None = None


def _invert_range(sources: Sources, name: str, lo: int, hi: int, folder: Path) -> Segment:
    """Sort one document range's postings by (key, document) and write them as a segment."""
    docs, keys, vals = sources.range_postings(name, lo, hi)
    seg_keys, seg_counts, docs, vals, seg_max = group_by_key(keys, docs, vals)
    folder.mkdir(parents=True)
    np.save(folder / "docs.npy", docs.astype(np.uint32))
    np.save(folder / "vals.npy", vals)
    return seg_keys, seg_counts, seg_max, folder


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


def write_store(
    sources: Sources, name: str, n_docs: int, weights: np.ndarray, out: Path, scratch: Path,
    range_postings: int | None = None, workers: int | None = None,
) -> Postings:
    """Invert one store by document range and merge the segments into ``out`` (steps 3–4)."""
    ranges = _ranges(weights, range_postings or RANGE_POSTINGS)
    segments = _invert_ranges(sources, name, ranges, scratch, workers)

    all_keys = np.unique(np.concatenate([s[0] for s in segments])) if segments else np.empty(0, np.uint64)
    counts = np.zeros(len(all_keys), np.int64)
    maxvals = np.zeros(len(all_keys), np.uint32)
    for seg_keys, seg_counts, seg_max, _ in segments:
        pos = np.searchsorted(all_keys, seg_keys)
        counts[pos] += seg_counts
        np.maximum.at(maxvals, pos, seg_max)
    ptr = np.zeros(len(all_keys) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    out.mkdir(parents=True, exist_ok=True)
    val_dtype = narrow(maxvals).dtype
    out_low = preallocated_memmap(out / "docs.npy", np.dtype(np.uint16), int(ptr[-1]))
    out_vals = preallocated_memmap(out / "vals.npy", val_dtype, int(ptr[-1]))
    runs = _DocRuns(len(all_keys))
    filled = ptr[:-1].copy()
    for seg_keys, seg_counts, _, folder in segments:
        pos = np.searchsorted(all_keys, seg_keys)
        offsets = np.cumsum(seg_counts) - seg_counts
        dest = np.arange(int(seg_counts.sum()), dtype=np.int64) + np.repeat(filled[pos] - offsets, seg_counts)
        seg_docs = np.load(folder / "docs.npy")
        runs.add(seg_docs, pos, offsets, dest)
        out_low[dest] = seg_docs.astype(np.uint16)  # the low 16 bits
        out_vals[dest] = np.load(folder / "vals.npy").astype(val_dtype)
        filled[pos] += seg_counts
        shutil.rmtree(folder)
    out_vals.flush()
    out_low.flush()
    del out_vals, out_low
    run_at, run_high = runs.arrays(int(ptr[-1]))
    np.save(out / "doc_run_at.npy", run_at)
    np.save(out / "doc_run_high.npy", run_high)
    np.save(out / "keys.npy", all_keys)
    np.save(out / "ptr.npy", ptr)
    np.save(out / "maxvals.npy", narrow(maxvals))
    encode_file(out)  # values in one byte a posting, the rare large ones aside
    return Postings.load(out, n_docs)


class _DocRuns:
    """The runs of :class:`~coderiv.index.postings.DocNumbers` (a run starts at every key's
    first posting and wherever a key's ``docs >> 16`` changes), found while the segments are
    merged, so the merged numbers are never written in full nor read again. A key's postings
    arrive segment by segment in document order; ``last_high`` carries each key's high bits
    from one segment to the next. Equals :func:`~coderiv.index.postings.doc_runs` of the
    merged numbers."""

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

    def arrays(self, n_postings: int) -> tuple[np.ndarray, np.ndarray]:
        """(run_at, run_high) as stored."""
        at = np.concatenate(self.at) if self.at else np.empty(0, np.int64)
        high = np.concatenate(self.high) if self.high else np.empty(0, np.int64)
        order = np.argsort(at, kind="stable")
        return narrow(np.append(at[order], n_postings)), high[order].astype(np.uint16)


def preallocated_memmap(path: Path, dtype: np.dtype, length: int) -> np.memmap:
    """A new ``.npy`` array file mapped for writing, its blocks reserved on disk first.

    A store written through a memory map into a sparse file would meet a full disk as SIGBUS
    (death without a message); ``posix_fallocate`` makes a full disk an ``OSError`` here.
    """
    array = open_memmap(path, mode="w+", dtype=dtype, shape=(length,))
    if length and hasattr(os, "posix_fallocate"):
        with open(path, "r+b") as handle:
            os.posix_fallocate(handle.fileno(), 0, os.fstat(handle.fileno()).st_size)
    return array


def _cosine_components(
    store: Postings, n_docs: int, chunk: int, f_t: np.ndarray | None = None, collection_size: int | None = None
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """(first key, end key, documents, x_dt) for consecutive key ranges of about ``chunk``
    postings: x_dt = (1 + ln f_dt) · w_t from per-key weights and a table over the few distinct
    f_dt values, so no logarithm is taken per posting. ``f_t`` and ``collection_size`` give
    collection-wide statistics when the store holds only a shard (default: the store's own)."""
    ptr = np.asarray(store.ptr)
    f_t_all = np.diff(ptr)
    weights = idf_weight((f_t_all if f_t is None else np.asarray(f_t)).astype(np.float64), collection_size or n_docs)
    tf_table = tf_weight(np.arange(1, int(np.max(store.maxvals, initial=1)) + 1, dtype=np.float64))
    key = 0
    while key < len(f_t_all):
        end = max(int(np.searchsorted(ptr, ptr[key] + chunk, side="right")) - 1, key + 1)
        lo, hi = int(ptr[key]), int(ptr[end])
        x = tf_table[np.asarray(store.vals[lo:hi]).astype(np.int64) - 1] * np.repeat(weights[key:end], f_t_all[key:end])
        yield key, end, np.asarray(store.docs[lo:hi]), x
        key = end


def cosine_statistics(
    store: Postings, n_docs: int, chunk: int | None = None, f_t: np.ndarray | None = None, collection_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """W_d for every document and, for every term, max_d x_dt / W_d (cosine, and the bound
    that lets cosine queries prune): two passes over the terms store, a key range at a time.
    A shard passes the collection's ``f_t`` (per key of its store) and ``collection_size`` N."""
    chunk = chunk or RANGE_POSTINGS
    components = _cosine_components(store, n_docs, chunk, f_t, collection_size)
    norms = document_norms(((docs, x) for _, _, docs, x in components), n_docs)
    max_unit = np.zeros(len(store.keys))
    ptr = np.asarray(store.ptr)
    for key, end, docs, x in _cosine_components(store, n_docs, chunk, f_t, collection_size):
        starts = ptr[key:end] - ptr[key]
        max_unit[key:end] = np.maximum.reduceat(x / norms[docs], starts)
    return norms, max_unit


def scratch_folder(root: Path) -> Path:
    """A temporary folder for runs and segments beside the index (same filesystem)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="tmp-scratch-", dir=root))


def store_specs_in_order(specs: Iterable[StoreSpec]) -> list[StoreSpec]:
    """``terms`` first, then the other stores by name (the store-N folder order)."""
    specs = list(specs)
    return [s for s in specs if s.name == "terms"] + sorted((s for s in specs if s.name != "terms"), key=lambda s: s.name)
