"""A segment: one document range's postings sorted by (key, document), written as raw scratch
files in their narrowest types, read back a block at a time by the merge (:mod:`.merge`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from coderiv.index.builder import key_partition
from coderiv.index.builder.combined_sort import sort_packed
from coderiv.index.format.encoded import narrow
from coderiv.index.format.postings import group_by_key
from coderiv.system.scratch_pages import release_prefix


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
    #: a partitioned run (:mod:`~coderiv.index.builder.key_partition`): postings before each partition
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
        and reads on from there (:mod:`~coderiv.system.scratch_pages`)."""
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


def write_segment(folder: Path, keys: np.ndarray, docs: np.ndarray, vals: np.ndarray) -> Segment:
    """Postings in any order sorted by (key, document) (:func:`group_postings`) and written as a segment."""
    return save_segment(folder, *group_postings(keys, docs, vals))


def group_postings(
    keys: np.ndarray, docs: np.ndarray, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Postings in any order sorted by (key, document): (distinct keys, postings per key,
    documents, values, largest value per key), by one sort of packed postings when they fit in
    64 bits (:func:`~coderiv.index.builder.combined_sort.sort_packed`, chunk ids), else by a
    lexicographic sort (:func:`~coderiv.index.format.postings.group_by_key`)."""
    packed = sort_packed(keys, docs, vals)
    return group_by_key(keys, docs, vals) if packed is None else packed[:5]


def save_segment(
    folder: Path, keys: np.ndarray, counts: np.ndarray, docs: np.ndarray, vals: np.ndarray, maxima: np.ndarray,
    doc_base: int = 0, n_docs: int | None = None,
) -> Segment:
    """Write postings sorted by (key, document) as a segment: (distinct keys, postings per key,
    documents, values, largest value per key). Documents ``doc_base … doc_base + n_docs − 1``
    (a presorted run's) are written less ``doc_base``, in 2 bytes when there are at most 65,536
    of them; values in 2 bytes when all are below 65,536. Written to scratch files rather than
    kept in memory, which saved no measurable CPU and raised the build's peak
    (measured: docs/performance-history.md)."""
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


def save_partitioned(folder: Path, split: key_partition.Partitioned, doc_base: int) -> Segment:
    """A run's postings by partition (:func:`~coderiv.index.builder.key_partition.partition_run`,
    documents relative to ``doc_base``) written as a segment (as :func:`save_segment`)."""
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
