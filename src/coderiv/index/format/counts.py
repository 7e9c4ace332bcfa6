"""Posting values (f_dt) in one byte a posting, the rare larger ones kept aside.

Almost every count is small (1–3 on real text), but one count above 255 in the whole store
used to widen every posting's value to 2 bytes — on the synthetic 100K collection 94 MB of a
200 MB index. :class:`CountValues` stores ``low`` as uint8; when the store has any value of
255 or more, every such value is written as 255 in ``low`` (an escape) and its true value is
kept in a small side table sorted by posting position (``over_at``, ``over_val``). Reads
decode to the stored numbers exactly, so answers are unchanged. A store whose values all fit
in a byte has an empty side table, and then 255 in ``low`` is a plain value; an index written
before the side table existed (format 4) reads the same way.

A *presence store* (every value 1: a chunk or fingerprint store's keys are present or not)
writes no values at all (:data:`PRESENCE`, docs/index-format.md): :meth:`CountValues.presence`
reads them as a zero-stride view of a single 1, which costs no memory and no file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coderiv.index.format.encoded import ENCODE_CHUNK, EncodedArray, concatenated_slices, narrow, nonempty_ranges
from coderiv.index.format.integrity import BlockTable, Checked, load_npy

#: The escape in ``low`` of a store with a side table.
ESCAPE = 255
#: Postings re-encoded at a time by :func:`encode_file` (bounded memory).
OVER_AT_FILE = "vals_over_at.npy"
OVER_VAL_FILE = "vals_over_val.npy"
#: The ``values`` of a presence store's record in the manifest (every value 1, no values file);
#: :data:`COUNTS` (or no ``values``, in indexes written before presence stores) has the files.
PRESENCE = "presence"
COUNTS = "counts"


def ones(length: int) -> np.ndarray:
    """``length`` values of 1 (uint8) in no memory: a read-only zero-stride view of one byte."""
    return np.broadcast_to(np.ones(1, np.uint8), (length,))


class CountValues(EncodedArray):
    """Every posting's value: ``low`` (one byte each) plus the side table of large values.
    Read from disk, ``low``'s blocks are checked as reads touch them and the side table (small)
    whole on first use (:mod:`.integrity`)."""

    over_at: Checked[np.ndarray] = Checked()
    over_val: Checked[np.ndarray] = Checked()
    _raw_over_at: np.ndarray
    _raw_over_val: np.ndarray

    def __init__(self, low: np.ndarray, over_at: np.ndarray | None = None, over_val: np.ndarray | None = None) -> None:
        super().__init__()
        self.low = low
        self.over_at = np.empty(0, np.int64) if over_at is None else over_at
        self.over_val = np.empty(0, np.uint16) if over_val is None else over_val
        self.escaped = len(self._raw_over_at) > 0
        self.dtype = np.result_type(low.dtype, self._raw_over_val.dtype) if self.escaped else low.dtype
        #: every value is 1 and ``low`` is :func:`ones` (no file; :meth:`presence`)
        self.is_presence = False
        self._loop_low: np.ndarray | None = None

    @classmethod
    def presence(cls, length: int) -> CountValues:
        """The values of a presence store of ``length`` postings: all 1, read from no file."""
        values = cls(ones(length))
        values.is_presence = True
        return values

    def loop_low(self) -> np.ndarray:
        """``low`` for a compiled loop, contiguous (one numba type for every store): a presence
        store's 1s made once and kept. Only the terms store reaches the compiled loops (ranking,
        cosine statistics), and it is a presence store only in a collection where no document
        repeats a term, so this is never a chunk store's 80 MB."""
        if not self.is_presence:
            return self._raw_low
        if self._loop_low is None:
            made = np.ones(len(self), np.uint8)
            made.flags.writeable = False  # as a memory-mapped file's values are
            self._loop_low = made
        return self._loop_low

    def attach(self, table: BlockTable, folder: str) -> None:
        """Check the side table, read from ``folder`` of a generation, against ``table`` (``low``
        is attached by its store; a presence store has none)."""
        if self.is_presence:
            return
        self._guards["over_at"] = table.guard(f"{folder}/{OVER_AT_FILE}", self._raw_over_at)
        self._guards["over_val"] = table.guard(f"{folder}/{OVER_VAL_FILE}", self._raw_over_val)

    def _low_at(self, positions: np.ndarray) -> np.ndarray:
        self._guard("low").elements(positions)
        return np.asarray(self._raw_low[positions])

    @classmethod
    def encode(cls, values: np.ndarray) -> CountValues:
        """In-memory values (any unsigned or signed integer type, all ≥ 0)."""
        values = np.asarray(values)
        if not len(values) or int(values.max()) < ESCAPE + 1:
            return cls(values.astype(np.uint8))
        over_at = np.flatnonzero(values >= ESCAPE)
        low = np.minimum(values, ESCAPE).astype(np.uint8)
        return cls(low, narrow(over_at.astype(np.int64)), narrow(values[over_at]))

    def __len__(self) -> int:
        return len(self._raw_low)

    def take(self, positions: np.ndarray) -> np.ndarray:
        """Values of the postings at ``positions`` (any order)."""
        positions = np.asarray(positions)
        low = self._low_at(positions)
        if not self.escaped:
            return low
        escaped = np.flatnonzero(low == ESCAPE)
        if not len(escaped):
            return low
        out = low.astype(self.dtype)
        at = positions[escaped].astype(self.over_at.dtype)  # a same-type search converts nothing
        out[escaped] = self.over_val[np.searchsorted(self.over_at, at)]
        return out

    def ranges(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Values of postings ``starts[i]:ends[i]`` for every i, concatenated.

        The escapes inside the ranges are found in the side table (two binary searches per
        range), not by a pass over the values: a read without large values costs nothing more
        than the plain array's.
        """
        starts, ends = nonempty_ranges(starts, ends)
        if not len(starts):
            return np.empty(0, self._raw_low.dtype)
        self._guard("low").spans(starts, ends)
        raw = self._raw_low
        if self.is_presence:  # fresh 1s, never zero-stride; read-only as a file's one slice is
            low = np.ones(int((ends - starts).sum()), np.uint8)
            low.flags.writeable = len(starts) > 1
            return low
        low = concatenated_slices(raw, starts, ends)
        if not self.escaped:
            return low
        first, last = self._side_positions(starts), self._side_positions(ends)
        if not int((last - first).sum()):
            return low
        counts = last - first
        entry = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        offsets = np.cumsum(ends - starts) - (ends - starts)
        owner = np.repeat(np.arange(len(starts)), counts)
        out = low.astype(self.dtype)
        out[offsets[owner] + self.over_at[entry].astype(np.int64) - starts[owner]] = self.over_val[entry]
        return out

    def _side_positions(self, positions: np.ndarray) -> np.ndarray:
        """Where each posting position falls in the side table (``searchsorted`` left). The
        positions are searched in the table's own narrow type (a mixed-type search would convert
        the whole table on every call); positions past that type's range lie past every entry
        (a cast would wrap them around, as it did before, giving negative counts)."""
        over_at = self.over_at
        top = np.iinfo(over_at.dtype).max
        found: np.ndarray = np.searchsorted(over_at, np.minimum(positions, top).astype(over_at.dtype))
        found[positions > top] = len(over_at)
        return found

    def save(self, folder: Path, name: str = "vals") -> None:
        np.save(folder / f"{name}.npy", self.low, allow_pickle=False)
        np.save(folder / OVER_AT_FILE, self.over_at, allow_pickle=False)
        np.save(folder / OVER_VAL_FILE, self.over_val, allow_pickle=False)


def encode_file(folder: Path) -> None:
    """Re-encode ``folder/vals.npy`` written in any unsigned type as one byte a posting plus the
    side table (written even when empty), a chunk at a time: bounded memory."""
    path = folder / "vals.npy"
    values = np.load(path, mmap_mode="r")
    over_at: list[np.ndarray] = []
    over_val: list[np.ndarray] = []
    if values.dtype != np.uint8:
        scratch = folder / "vals.encoding.npy"
        low = np.lib.format.open_memmap(scratch, mode="w+", dtype=np.uint8, shape=(len(values),))
        for a in range(0, len(values), ENCODE_CHUNK):
            chunk = np.asarray(values[a : a + ENCODE_CHUNK])
            big = np.flatnonzero(chunk >= ESCAPE)
            over_at.append(big + a)
            over_val.append(chunk[big])
            low[a : a + len(chunk)] = np.minimum(chunk, ESCAPE)
        low.flush()
        del low
        scratch.replace(path)
    del values
    at = np.concatenate(over_at) if over_at else np.empty(0, np.int64)
    val = np.concatenate(over_val) if over_val else np.empty(0, np.uint16)
    np.save(folder / OVER_AT_FILE, narrow(at.astype(np.int64)), allow_pickle=False)
    np.save(folder / OVER_VAL_FILE, narrow(val), allow_pickle=False)


def load(folder: Path, low: np.ndarray, mmap: bool = True) -> CountValues:
    """The values of a store folder whose ``vals.npy`` is already loaded as ``low``, with their
    side table (written for every store with values, empty or not)."""
    over_at = load_npy(folder / OVER_AT_FILE, mmap)
    over_val = load_npy(folder / OVER_VAL_FILE, mmap)
    return CountValues(low, over_at, over_val)
