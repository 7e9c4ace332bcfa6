"""An array stored encoded and read as if it were plain: the one base of a store's split numbers
(:class:`~coderiv.index.format.split_numbers.SplitNumbers`: document numbers, split keys and
offsets) and its values (:class:`~coderiv.index.format.counts.CountValues`). A subclass
decodes positions (:meth:`EncodedArray.take`) and ranges (:meth:`EncodedArray.ranges`); slicing,
``np.asarray`` and the block checks of its files (:mod:`.integrity`) are the same for both."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from coderiv.index.format.integrity import NO_GUARD, Checked, FileGuard, NoGuard

#: Entries encoded or scanned at a time by the encoders that read a whole array (bounded memory).
ENCODE_CHUNK = 16_000_000


def narrow(values: np.ndarray) -> np.ndarray:
    """Values in the smallest unsigned integer type that holds them (counts are mostly 1–3)."""
    top = int(values.max()) if len(values) else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.uint64)


def nonempty_ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``starts``, ``ends`` as int64 without the empty ranges (``ends[i] <= starts[i]``)."""
    starts, ends = np.asarray(starts).astype(np.int64), np.asarray(ends).astype(np.int64)
    keep = ends > starts
    return starts[keep], ends[keep]


def concatenated_slices(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``raw[starts[i]:ends[i]]`` for every i, concatenated (one slice: a view, not a copy)."""
    if len(starts) == 1:
        return np.asarray(raw[int(starts[0]) : int(ends[0])])
    return np.concatenate([raw[a:b] for a, b in zip(starts.tolist(), ends.tolist())])


class EncodedArray(ABC):
    """A one-dimensional array read through decoding: ``array[a:b]``, ``array[positions]`` and
    ``np.asarray(array)`` give the plain numbers. Every encoding keeps a ``low`` array (the
    numbers' or values' low bits), checked as reads touch it."""

    low: Checked[np.ndarray] = Checked()
    _raw_low: np.ndarray

    def __init__(self) -> None:
        #: block checks of the files read from disk, by array name (none for in-memory arrays)
        self._guards: dict[str, FileGuard] = {}

    def _guard(self, name: str) -> FileGuard | NoGuard:
        return self._guards.get(name, NO_GUARD)

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def take(self, positions: np.ndarray) -> np.ndarray:
        """The decoded numbers at ``positions`` (any order)."""

    @abstractmethod
    def ranges(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The decoded numbers of ``starts[i]:ends[i]`` for every i, concatenated."""

    def __getitem__(self, item: slice | np.ndarray) -> np.ndarray:
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step != 1:
                return self.take(np.arange(start, stop, step))
            return self.ranges(np.array([start]), np.array([stop]))
        return self.take(item)

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        decoded = self[:]
        return decoded if dtype is None else decoded.astype(dtype)
