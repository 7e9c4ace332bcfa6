"""Step 1 of writing a generation (:mod:`.writer`): analysed batches spilled to runs on disk.

A run holds flat forward arrays (per-document counts, keys, values), so no more than one run
is in memory. In a fresh build whose documents come in id order, each run is instead grouped by
key into a segment (:mod:`.segments`) in a thread while analysis goes on (:class:`Presort`); a
run whose keys fit in 32 bits (chunk ids) is only split by the top bits of its keys
(:mod:`.key_partition`), the merge sorting each key range once.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from coderiv.index.builder import compiled_writer, key_partition
from coderiv.index.builder.analysis_workers import AnalyzedBatch
from coderiv.index.builder.combined_sort import group_narrow_run
from coderiv.index.builder.compiled_writer import group_run
from coderiv.index.builder.segments import Segment, save_partitioned, save_segment

RUN_POSTINGS = 2_000_000


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
                stores[name] = save_forward(folder, name, counts, keys, vals)
            for batch in self._pending:
                batch.release()
            self.runs.append(Run(ids, stores))
        self._pending, self._size = [], 0


def _concatenated(batches: list[AnalyzedBatch], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(postings per document, keys, values) of store ``name`` over the batches."""
    parts = [b.stores[name] for b in batches]
    return tuple(np.concatenate([part[i] for part in parts]) for i in range(3))  # type: ignore[return-value]


def save_forward(
    folder: Path, name: str, counts: np.ndarray, keys: np.ndarray, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Write a run's forward arrays of store ``name`` and map them: (doc_ptr, keys, vals)."""
    doc_ptr = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=doc_ptr[1:])
    arrays = {"doc_ptr": doc_ptr, "keys": keys, "vals": vals}
    for label, array in arrays.items():
        np.save(folder / f"{safe_name(name)}.{label}.npy", array)
    return tuple(np.load(folder / f"{safe_name(name)}.{label}.npy", mmap_mode="r") for label in arrays)


class Presort(threading.Thread):
    """Sorts one run into a segment per store while analysis goes on (the concatenation, the
    grouping by key of :func:`~coderiv.index.builder.compiled_writer.group_run` and the writes release
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
                folder = self.folder / f"{safe_name(name)}-sorted"
                pieces = [batch.stores[name] for batch in self.batches]
                doc_type = np.uint16 if sum(len(counts) for counts, _, _ in pieces) <= 1 << 16 else np.uint32
                split = key_partition.partition_pieces(pieces, doc_type, self.buffers)  # the batches as they are, not joined
                if split is not None:  # narrow keys (chunk ids): the merge sorts them, by key range
                    self.segments[name] = save_partitioned(folder, split, self.first)
                    continue
                counts, keys, vals = _concatenated(self.batches, name)
                n_docs = len(counts)
                grouped = group_narrow_run(keys, counts, self.first, vals) or group_run(keys, counts, self.first, vals)
                del counts, keys, vals
                self.segments[name] = save_segment(folder, *grouped, self.first, n_docs)
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
            stores[name] = save_forward(self.folder, name, counts, keys[order], vals)
        return stores


def safe_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
