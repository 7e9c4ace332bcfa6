"""Steps 2-3 of writing a generation (:mod:`.writer`): where each new document number's postings
come from (:class:`Sources`: the runs, or the previous generation), and their inversion by
document range into segments, in forked worker processes when there are several ranges."""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coderiv.index.builder.analysis_workers import default_workers
from coderiv.index.builder.segments import Segment, write_segment
from coderiv.index.builder.spill import Run, safe_name
from coderiv.index.format.encoded import ENCODE_CHUNK
from coderiv.index.format.postings import Postings
from coderiv.system.child_processes import stop_pool, worker_pool


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


def document_ranges(weights: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Cut 0..len(weights) into consecutive ranges whose weights sum to about ``budget``."""
    cuts = [0]
    total = np.cumsum(weights)
    while cuts[-1] < len(weights):
        base = total[cuts[-1] - 1] if cuts[-1] else 0
        nxt = int(np.searchsorted(total, base + budget, side="right"))
        cuts.append(min(len(weights), max(nxt, cuts[-1] + 1)))
    return list(zip(cuts[:-1], cuts[1:]))


#: The sources of the store being written, for range workers forked from this process (a
#: forked child shares the parent's memory maps; nothing large is pickled).
_FORK_SOURCES: Sources | None = None


def _invert_range(sources: Sources, name: str, lo: int, hi: int, folder: Path) -> Segment:
    """Sort one document range's postings by (key, document) and write them as a segment."""
    docs, keys, vals = sources.range_postings(name, lo, hi)
    return write_segment(folder, keys, docs, vals)


def _invert_range_forked(name: str, lo: int, hi: int, folder: Path) -> Segment:
    assert _FORK_SOURCES is not None
    return _invert_range(_FORK_SOURCES, name, lo, hi, folder)


def invert_ranges(
    sources: Sources, name: str, ranges: list[tuple[int, int]], scratch: Path, workers: int | None = None
) -> list[Segment]:
    """Every range's segment, in range order; ranges are sorted in parallel worker processes
    (forked, so they share the sources' memory maps) when there are several."""
    global _FORK_SOURCES
    folders = [scratch / f"{safe_name(name)}-seg-{number:05d}" for number in range(len(ranges))]
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
