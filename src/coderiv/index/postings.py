"""The postings store: one key kind's inverted arrays (key → documents), plain numpy arrays
saved as ``.npy`` and memory-mapped on open (never pickle).

``keys`` is sorted and unique; ``ptr[i]:ptr[i+1]`` slices ``docs`` (ascending) and ``vals`` for
``keys[i]``, so ``f_t`` of key i is ``ptr[i+1] - ptr[i]``; ``maxvals[i]`` is the largest value in
those postings (bounds for top-k pruning). Values are stored in the narrowest unsigned type that
holds them. The forward view (document → keys), needed only by incremental runs and by queries
naming a document of the index, is derived on demand by one stable sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coderiv.errors import CorruptIndexError

ARRAY_NAMES = ("keys", "ptr", "docs", "vals", "maxvals")


def narrow(values: np.ndarray) -> np.ndarray:
    """Values in the smallest unsigned integer type that holds them (counts are mostly 1–3)."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


@dataclass
class Postings:
    """Inverted arrays of one store (see the module docstring)."""

    n_docs: int
    keys: np.ndarray
    ptr: np.ndarray
    docs: np.ndarray
    vals: np.ndarray
    maxvals: np.ndarray

    @property
    def n_postings(self) -> int:
        return len(self.docs)

    @property
    def doc_freqs(self) -> np.ndarray:
        """f_t for every key, aligned with ``keys``."""
        return np.diff(self.ptr)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Position of each key in ``self.keys``, or -1 where the collection lacks it."""
        keys = np.asarray(keys, np.uint64)
        pos = np.searchsorted(self.keys, keys)
        found = pos < len(self.keys)
        found[found] = self.keys[pos[found]] == keys[found]
        return np.where(found, pos, -1)

    def doc_keys(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        """Keys (sorted) and values of one document."""
        entries = np.flatnonzero(np.asarray(self.docs) == doc)  # one scan; the index keeps no forward copy
        key_of = np.searchsorted(self.ptr, entries, side="right") - 1
        return np.asarray(self.keys[key_of]), np.asarray(self.vals[entries]).astype(np.int32)

    def slices(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Concatenated postings of the keys at ``positions``: (docs, vals, lengths).

        Each key's postings are a contiguous slice, so this copies slices (sequential reads of
        the memory map) instead of gathering element by element; ``lengths[i]`` postings belong
        to ``positions[i]``.
        """
        ptr = np.asarray(self.ptr[positions]), np.asarray(self.ptr[positions + 1])
        bounds = list(zip(ptr[0].tolist(), ptr[1].tolist()))
        if not bounds:
            return np.empty(0, self.docs.dtype), np.empty(0, self.vals.dtype), np.zeros(0, np.int64)
        docs = np.concatenate([self.docs[lo:hi] for lo, hi in bounds])
        vals = np.concatenate([self.vals[lo:hi] for lo, hi in bounds])
        return docs, vals, ptr[1] - ptr[0]

    def gather(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Concatenated postings of the keys at ``positions``: (docs, vals, owner index), where
        ``owner[j]`` is the index into ``positions`` whose key posting j belongs to."""
        docs, vals, lengths = self.slices(positions)
        return docs, vals, np.repeat(np.arange(len(positions)), lengths)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name in ARRAY_NAMES:
            np.save(folder / f"{name}.npy", getattr(self, name), allow_pickle=False)

    @classmethod
    def load(cls, folder: Path, n_docs: int, mmap: bool = True) -> Postings:
        arrays = {}
        for name in ARRAY_NAMES:
            path = folder / f"{name}.npy"
            try:
                # np.asarray drops the memmap subclass (a plain view of the same mapping): slicing a
                # memmap costs microseconds of Python per call, a hot path in pruning.
                arrays[name] = np.asarray(np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False))
            except (OSError, ValueError, EOFError) as exc:
                raise CorruptIndexError(f"index file {path} is missing or damaged ({exc})") from exc
        postings = cls(n_docs=n_docs, **arrays)
        postings.check_shapes()
        return postings

    @staticmethod
    def _sample(array: np.ndarray, count: int = 65_536) -> np.ndarray:
        """About ``count`` evenly spaced entries and the last one: a check that costs the same
        for any index size (reading a 2 GB array on every open would not)."""
        step = max(1, len(array) // count)
        return np.concatenate((array[::step], array[-1:]))

    def check_shapes(self) -> None:
        """Cheap consistency checks done on every open: lengths agree, sampled document numbers
        are in range, sampled offsets ascend (full checksums: ``Index.verify``)."""
        ok = (
            len(self.ptr) == len(self.keys) + 1 == len(self.maxvals) + 1
            and len(self.docs) == len(self.vals) == int(self.ptr[-1])
            and (len(self.docs) == 0 or int(self._sample(self.docs).max()) < self.n_docs)
            and (len(self.ptr) < 2 or bool(np.all(np.diff(self._sample(self.ptr).astype(np.int64)) >= 0)))
        )
        if not ok:
            raise CorruptIndexError("index arrays are inconsistent (lengths, offsets or document numbers); rebuild the index")


def group_by_key(
    keys: np.ndarray, docs: np.ndarray, vals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Postings given in any order, sorted by (key, document): (unique keys, count per key,
    docs, vals, largest value per key). Shared by in-memory builds and the index writer."""
    order = np.lexsort((docs, keys))
    keys, docs, vals = keys[order], docs[order], vals[order]
    if not len(keys):
        return np.empty(0, np.uint64), np.empty(0, np.int64), docs, vals, np.empty(0, vals.dtype)
    starts = np.concatenate(([0], np.flatnonzero(keys[1:] != keys[:-1]) + 1))
    counts = np.diff(np.concatenate((starts, [len(keys)])))
    return keys[starts], counts, docs, vals, np.maximum.reduceat(vals, starts)


def from_forward(per_doc: Sequence[tuple[np.ndarray, np.ndarray]]) -> Postings:
    """Invert per-document (sorted unique keys, values) pairs given in document order."""
    n_docs = len(per_doc)
    lengths = np.fromiter((len(k) for k, _ in per_doc), np.int64, n_docs)
    fwd_keys = np.concatenate([k for k, _ in per_doc]).astype(np.uint64) if n_docs else np.empty(0, np.uint64)
    fwd_vals = np.concatenate([v for _, v in per_doc]) if n_docs else np.empty(0, np.int32)
    doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    keys, counts, docs, vals, maxvals = group_by_key(fwd_keys, doc_of, fwd_vals)
    ptr = np.zeros(len(keys) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return Postings(
        n_docs=n_docs,
        keys=keys,
        ptr=ptr,
        docs=docs.astype(np.uint32),
        vals=narrow(vals),
        maxvals=narrow(maxvals),
    )
