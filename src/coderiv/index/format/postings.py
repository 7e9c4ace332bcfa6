"""The postings store: one key kind's inverted arrays (key → documents), plain numpy arrays
saved as ``.npy`` and memory-mapped on open (never pickle).

``keys`` is sorted and unique; ``ptr[i]:ptr[i+1]`` slices ``docs`` (ascending) and ``vals`` for
``keys[i]``, so ``f_t`` of key i is ``ptr[i+1] - ptr[i]``; ``maxvals[i]`` is the largest value in
those postings (bounds for top-k pruning). Values take one byte a posting plus a side table of
the rare large ones (:class:`~coderiv.index.format.counts.CountValues`); document numbers 2 bytes a
posting plus a few runs (:class:`SplitNumbers`), and so are the keys and offsets of a store whose
keys fit 32 bits (:data:`SPLIT`, a chunk store's). A presence store (every value 1, a chunk
store's) has no values nor ``maxvals`` files: both read as 1s from no memory
(:data:`~coderiv.index.format.counts.PRESENCE`). The
forward view (document → keys), needed only by incremental runs and by queries naming a
document of the index, is derived on demand by one stable sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

from coderiv.errors import CorruptIndexError
from coderiv.index.format import counts
from coderiv.index.format.counts import CountValues
from coderiv.index.format.encoded import narrow
from coderiv.index.format.integrity import NO_GUARD, BlockTable, Checked, FileGuard, NoGuard, checked_insertion, load_npy
from coderiv.index.format.split_numbers import SplitNumbers

ARRAY_NAMES = ("keys", "ptr", "docs", "doc_run_at", "doc_run_high", "vals", "maxvals")


#: A store's manifest record says ``"layout": "split"`` when its keys and offsets are
#: :class:`SplitNumbers` (2 bytes each, a store whose keys fit 32 bits), ``"plain"`` otherwise.
PLAIN, SPLIT = "plain", "split"


#: The files of a split store's keys and offsets: low 16 bits, run starts, runs' high bits.
SPLIT_FILES = {"keys": ("keys", "key_run_at", "key_run_high"), "ptr": ("ptr", "ptr_run_at", "ptr_run_high")}


#: The files a presence store does not have (:data:`~coderiv.index.format.counts.PRESENCE`).
VALUE_FILES = ("vals", "maxvals")



#: :meth:`Postings.key_of` decodes a split store's offsets whole for more than one posting in
#: this many keys (numpy's search in C beats the vectorized one over the runs from there).
DECODE_WHOLE = 64


def key_dtype(all_below_2_32: bool) -> np.dtype:
    """The stored type of a store's keys: 4 bytes when every key is below 2³² (chunk and
    shingle ids, 32 bits as paper 003 has them), else 8 (terms' 64-bit keys). Lookups take
    64-bit keys either way (:meth:`Postings.lookup`)."""
    return np.dtype(np.uint32 if all_below_2_32 else np.uint64)


def offsets_dtype(n_postings: int) -> np.dtype:
    """The stored type of a store's ``ptr``: 4 bytes below 2³² postings, else 8. Reads of a
    few offsets (:meth:`Postings.pointers`) give int64 either way."""
    return np.dtype(np.uint32 if n_postings < 1 << 32 else np.int64)


def stored_keys(keys: np.ndarray) -> np.ndarray:
    """Sorted unique ``keys`` in their stored type (:func:`key_dtype`)."""
    keys = np.asarray(keys, np.uint64)
    return keys.astype(key_dtype(not len(keys) or int(keys[-1]) < 1 << 32))


def keys_and_offsets(keys: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray | SplitNumbers, np.ndarray | SplitNumbers]:
    """A store's sorted unique ``keys`` and its offsets ``ptr`` as they are stored: split
    (:data:`SPLIT`, 2 bytes each) when every key fits 32 bits and there are fewer than 2³²
    postings, as the index writer writes them; else plain, in their narrowest types."""
    keys = stored_keys(keys)
    n_postings = int(ptr[-1])
    if keys.dtype == np.uint32 and n_postings < 1 << 32:
        return SplitNumbers.encode(keys), SplitNumbers.encode(np.asarray(ptr).astype(np.uint32))
    return keys, np.asarray(ptr).astype(offsets_dtype(n_postings))


class KeysOrOffsets(Checked[np.ndarray]):
    """``keys`` or ``ptr`` of a :class:`Postings`: a plain array (its whole file checked on the
    first read, as :class:`~coderiv.index.format.integrity.Checked` does), or a split store's
    :class:`SplitNumbers`, decoded whole on every read (and not kept: a pass over a store
    holds one step of it). Code that reads a few keys or a step of them goes through
    :meth:`Postings.lookup`, :meth:`~Postings.pointers`, :meth:`~Postings.keys_at`,
    :meth:`~Postings.key_of`, :meth:`~Postings.offsets_between` and
    :meth:`~Postings.keys_between`, which read only what they touch."""

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> KeysOrOffsets: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> np.ndarray: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        stored = super().__get__(obj, owner)
        if obj is None or not isinstance(stored, SplitNumbers):
            return stored
        return np.asarray(stored)


class Postings:
    """Inverted arrays of one store (see the module docstring). A store read from disk checks
    every block before it is used (:mod:`.integrity`): the methods here check only the blocks
    they touch, a plain read of ``keys``, ``ptr`` or ``maxvals`` checks the whole file."""

    keys: KeysOrOffsets = KeysOrOffsets()
    ptr: KeysOrOffsets = KeysOrOffsets()
    maxvals: Checked[np.ndarray] = Checked()
    _raw_keys: np.ndarray | SplitNumbers
    _raw_ptr: np.ndarray | SplitNumbers
    _raw_maxvals: np.ndarray

    def __init__(
        self, n_docs: int, keys: np.ndarray | SplitNumbers, ptr: np.ndarray | SplitNumbers, docs: SplitNumbers,
        vals: CountValues | np.ndarray, maxvals: np.ndarray,
    ) -> None:
        self.n_docs, self.docs, self.maxvals = n_docs, docs, maxvals
        self.__dict__["_raw_keys"], self.__dict__["_raw_ptr"] = keys, ptr
        self.vals = vals if isinstance(vals, CountValues) else CountValues.encode(vals)  # plain in-memory values
        self._guards: dict[str, FileGuard] = {}

    @property
    def is_split(self) -> bool:
        """Keys and offsets are :class:`SplitNumbers` (:data:`SPLIT`)."""
        return isinstance(self._raw_keys, SplitNumbers)

    def _guard(self, name: str) -> FileGuard | NoGuard:
        return self._guards.get(name, NO_GUARD)

    def pointers(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) of the postings of the keys at ``positions``, their blocks checked."""
        positions = np.asarray(positions, np.int64)
        ptr = self._raw_ptr
        if isinstance(ptr, SplitNumbers):  # one search of the runs for both ends
            both = ptr.take(np.concatenate((positions, positions + 1))).astype(np.int64)
            return both[: len(positions)], both[len(positions) :]
        self._guard("ptr").elements(np.concatenate((positions, positions + 1)))
        return np.asarray(ptr[positions], np.int64), np.asarray(ptr[positions + 1], np.int64)

    def offsets_between(self, a: int, b: int) -> np.ndarray:
        """``ptr[a:b]`` in its stored type (``b`` up to the number of keys + 1), its blocks
        checked: one step of a pass over the store."""
        ptr = self._raw_ptr
        if isinstance(ptr, SplitNumbers):
            return ptr.ranges(np.array([a]), np.array([b]))
        self._guard("ptr").spans(np.array([a]), np.array([b]))
        return np.asarray(ptr[a:b])

    def keys_between(self, a: int, b: int) -> np.ndarray:
        """``keys[a:b]`` in their stored type, their blocks checked."""
        keys = self._raw_keys
        if isinstance(keys, SplitNumbers):
            return keys.ranges(np.array([a]), np.array([b]))
        self._guard("keys").spans(np.array([a]), np.array([b]))
        return np.asarray(keys[a:b])

    def key_of(self, positions: np.ndarray) -> np.ndarray:
        """The position of the key that holds each posting at ``positions``."""
        positions = np.asarray(positions, np.int64)
        ptr = self._raw_ptr
        if isinstance(ptr, SplitNumbers):
            if len(positions) * DECODE_WHOLE < len(ptr):  # a few: searched in the runs, then the low bits
                return ptr.search_sorted(positions, "right") - 1
            ptr = np.asarray(ptr)  # many (an update's kept postings): one decode, one search in C
        targets = positions.astype(ptr.dtype)
        found = np.searchsorted(ptr, targets, side="right")
        checked_insertion(self._guard("ptr"), ptr, 0, len(ptr), targets, found, "right")
        return found.astype(np.int64) - 1

    def doc_freqs_at(self, positions: np.ndarray) -> np.ndarray:
        """f_t of the keys at ``positions``."""
        start, end = self.pointers(positions)
        freqs: np.ndarray = end - start
        return freqs

    def check_ranges(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Check the blocks of postings ``starts[i]:ends[i]`` (low bits, values, the high bits of
        their runs) before a compiled loop reads them from :meth:`unchecked_arrays`."""
        starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
        docs = self.docs
        docs._guard("low").spans(starts, ends)
        self.vals._guards.get("low", NO_GUARD).spans(starts, ends)
        high = docs._guard("run_high")
        keep = ends > starts
        if not high.complete and keep.any():  # (a small file is complete after its first read)
            first = docs._search_runs(starts[keep], "right") - 1
            high.spans(first, docs._search_runs(ends[keep], "left"))

    def unchecked_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(low bits, run starts, run high bits, values' low byte) for compiled loops: the run
        starts checked whole (the loops bisect them; one run below 65,536 documents), the others as
        :meth:`check_ranges` is told, which must come before every read."""
        return self.docs._raw_low, self.docs.run_at, self.docs._raw_run_high, self.vals.loop_low()

    def maxvals_at(self, positions: np.ndarray) -> np.ndarray:
        """The largest value of each key at ``positions``, its blocks checked."""
        self._guard("maxvals").elements(positions)
        return np.asarray(self._raw_maxvals[positions])

    def keys_at(self, positions: np.ndarray) -> np.ndarray:
        """The keys at ``positions``, their blocks checked."""
        if isinstance(self._raw_keys, SplitNumbers):
            return self._raw_keys.take(positions).astype(np.uint64)
        self._guard("keys").elements(positions)
        return np.asarray(self._raw_keys[positions]).astype(np.uint64)

    def attach(self, table: BlockTable, folder: str) -> None:
        """Check this store's arrays, read from ``folder`` of a generation, against ``table``."""
        arrays: dict[str, tuple[Postings | SplitNumbers | CountValues, str, np.ndarray]] = {
            "maxvals": (self, "maxvals", self._raw_maxvals), "docs": (self.docs, "low", self.docs._raw_low),
            "doc_run_at": (self.docs, "run_at", self.docs._raw_run_at),
            "doc_run_high": (self.docs, "run_high", self.docs._raw_run_high),
            "vals": (self.vals, "low", self.vals._raw_low),
        }
        for name in ("keys", "ptr"):
            stored = self.__dict__["_raw_" + name]
            if isinstance(stored, SplitNumbers):
                low, run_at, run_high = SPLIT_FILES[name]
                arrays[low] = (stored, "low", stored._raw_low)
                arrays[run_at] = (stored, "run_at", stored._raw_run_at)
                arrays[run_high] = (stored, "run_high", stored._raw_run_high)
            else:
                arrays[name] = (self, name, stored)
        if self.is_presence:  # no files: nothing read from disk to check
            for file in VALUE_FILES:
                del arrays[file]
        for file, (owner, attribute, array) in arrays.items():
            owner._guards[attribute] = table.guard(f"{folder}/{file}.npy", array)
        self.vals.attach(table, folder)

    @property
    def is_presence(self) -> bool:
        """Every value is 1 and neither values nor ``maxvals`` have a file
        (:data:`~coderiv.index.format.counts.PRESENCE`)."""
        return self.vals.is_presence

    @property
    def n_keys(self) -> int:
        return len(self._raw_keys)

    @property
    def n_postings(self) -> int:
        return len(self.docs)

    @property
    def doc_freqs(self) -> np.ndarray:
        """f_t for every key, aligned with ``keys``."""
        return np.diff(np.asarray(self.ptr, np.int64))

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Position of each key in ``self.keys``, or -1 where the collection lacks it."""
        keys = np.asarray(keys, np.uint64)
        table = self._raw_keys
        if isinstance(table, SplitNumbers):  # runs of high bits, then low bits (a key over 32 bits is absent)
            ends = np.full(len(keys), len(table), np.int64)
            return table.search(np.zeros(len(keys), np.int64), ends, np.minimum(keys, np.uint64(1 << 32)).astype(np.int64))
        if table.dtype == keys.dtype:
            return self._search_keys(keys)
        # keys stored in 4 bytes (:func:`key_dtype`): a wider key is absent, the rest searched in
        # the stored type (a search of mixed types would convert the whole table on every call)
        absent = keys >> np.uint64(32) != 0
        pos = self._search_keys(np.where(absent, np.uint64(0), keys).astype(table.dtype))
        pos[absent] = -1
        return pos

    def _search_keys(self, keys: np.ndarray) -> np.ndarray:
        """:meth:`lookup` of keys already in the stored type."""
        table = self._raw_keys
        assert isinstance(table, np.ndarray)
        pos = np.searchsorted(table, keys)
        checked_insertion(self._guard("keys"), table, 0, len(table), keys, pos)
        found = pos < len(table)
        found[found] = table[pos[found]] == keys[found]
        return np.where(found, pos, -1)

    def doc_keys(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        """Keys (sorted) and values of one document."""
        entries = np.flatnonzero(np.asarray(self.docs) == doc)  # one scan; the index keeps no forward copy
        return self.keys_at(self.key_of(entries)), self.vals.take(entries).astype(np.int32)

    def slices(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Concatenated postings of the keys at ``positions``: (docs, vals, lengths).

        Each key's postings are a contiguous slice, so this copies slices (sequential reads of
        the memory map) instead of gathering element by element; ``lengths[i]`` postings belong
        to ``positions[i]``.
        """
        ptr = self.pointers(positions)
        if not len(ptr[0]):
            return np.empty(0, self.docs.dtype), np.empty(0, self.vals.dtype), np.zeros(0, np.int64)
        docs = self.docs.ranges(ptr[0], ptr[1])
        return docs, self.vals.ranges(ptr[0], ptr[1]), ptr[1] - ptr[0]

    def gather(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Concatenated postings of the keys at ``positions``: (docs, vals, owner index), where
        ``owner[j]`` is the index into ``positions`` whose key posting j belongs to."""
        docs, vals, lengths = self.slices(positions)
        return docs, vals, np.repeat(np.arange(len(positions)), lengths)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        arrays = {"docs": self.docs.low, "doc_run_at": self.docs.run_at, "doc_run_high": self.docs.run_high}
        for name in ("keys", "ptr"):
            stored = self.__dict__["_raw_" + name]
            if isinstance(stored, SplitNumbers):
                arrays.update(zip(SPLIT_FILES[name], (stored.low, stored.run_at, stored.run_high)))
        for name in ARRAY_NAMES:
            if name != "vals":
                np.save(folder / f"{name}.npy", arrays[name] if name in arrays else getattr(self, name), allow_pickle=False)
        for name in ("key_run_at", "key_run_high", "ptr_run_at", "ptr_run_high"):
            if name in arrays:
                np.save(folder / f"{name}.npy", arrays[name], allow_pickle=False)
        self.vals.save(folder)

    @classmethod
    def load(
        cls, folder: Path, n_docs: int, mmap: bool = True, table: BlockTable | None = None, presence: bool = False,
        split: bool = False,
    ) -> Postings:
        """The store saved in ``folder``; with ``table`` (the generation's block checksums), every
        block is checked as it is first read (:mod:`.integrity`). A ``presence`` store (so its
        manifest record says, :data:`~coderiv.index.format.counts.PRESENCE`) reads every value as 1
        without a file; any other store's missing values file is damage. A ``split`` store's
        keys and offsets are :class:`SplitNumbers` (:data:`SPLIT`)."""
        arrays: dict[str, Any] = {}
        names = ARRAY_NAMES + (SPLIT_FILES["keys"][1:] + SPLIT_FILES["ptr"][1:] if split else ())
        for name in names:
            if presence and name in VALUE_FILES:
                continue
            path = folder / f"{name}.npy"
            try:
                # np.asarray drops the memmap subclass (a plain view of the same mapping): slicing a
                # memmap costs microseconds of Python per call, a hot path in pruning.
                arrays[name] = load_npy(path, mmap)
            except (OSError, ValueError, EOFError) as exc:
                raise CorruptIndexError(f"index file {path} is missing or damaged ({exc})") from exc
        docs = SplitNumbers(arrays.pop("docs"), arrays.pop("doc_run_at"), arrays.pop("doc_run_high"))
        if split:
            for name, files in SPLIT_FILES.items():
                arrays[name] = SplitNumbers(*(arrays.pop(file) for file in files))
        if presence:
            vals = CountValues.presence(len(docs))
            arrays["maxvals"] = counts.ones(len(arrays["keys"]))
        else:
            try:
                vals = counts.load(folder, arrays.pop("vals"), mmap)
            except (OSError, ValueError, EOFError) as exc:
                raise CorruptIndexError(f"index values in {folder} are missing or damaged ({exc})") from exc
        postings = cls(n_docs=n_docs, docs=docs, vals=vals, **arrays)
        if table is not None:
            postings.attach(table, folder.name)
        postings.check_shapes()
        return postings

    def check_shapes(self) -> None:
        """The checks done on every open, a few elements each: the arrays' lengths agree and
        the offsets end where the postings do. Nothing is sampled: every block a query reads is
        checked against its checksum as it is read (:mod:`.integrity`), so an open reads only
        the blocks of these few elements."""
        docs, vals, ptr, keys = self.docs, self.vals, self._raw_ptr, self._raw_keys
        ok = (
            len(ptr) == len(keys) + 1 == len(self._raw_maxvals) + 1
            and len(docs) == len(vals)
            and len(vals._raw_over_at) == len(vals._raw_over_val)
            and all(numbers.shape_agrees() for numbers in (docs, ptr, keys) if isinstance(numbers, SplitNumbers))
        )
        if ok:
            last = np.array([len(ptr) - 1])
            if isinstance(ptr, SplitNumbers):
                ok = int(ptr.take(last)[0]) == len(docs)
            else:
                self._guard("ptr").elements(last)
                ok = int(ptr[-1]) == len(docs)
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
    stored, offsets = keys_and_offsets(keys, ptr)
    return Postings(
        n_docs=n_docs,
        keys=stored,
        ptr=offsets,
        docs=SplitNumbers.encode(docs.astype(np.uint32)),
        vals=CountValues.encode(vals),
        maxvals=narrow(maxvals),
    )
