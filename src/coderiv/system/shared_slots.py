"""Shared memory through which analysis workers hand their arrays back, instead of a pipe.

A worker's analysed batch is a few flat arrays (:class:`~coderiv.index.builder.analysis_workers.AnalyzedBatch`):
in a report-ready build of long documents, about 5 bytes of chunk ids and values for every word
of text. Returned through the pool's pipe, each array is pickled, pushed through the kernel's
64 KB pipe buffer in turns between writer and reader, gathered and unpickled: time that shared
memory does not spend (measured: docs/performance-history.md).

:class:`SlotRing` is a fixed set of equal slots in one anonymous shared mapping, made by the
parent before its workers fork (so they inherit it; other start methods get no ring and use the
pipe). The parent takes a free slot for each batch it submits and names it in the task; the
worker copies the arrays into it and returns only where they lie (:class:`SlotArrays`); the
parent maps them as views and gives the slot back once it is done with them (an explicit
release: numpy's views do not say when the last one goes). A batch whose arrays do not fit,
or that finds no free slot, takes the pipe as before. The slots' pages are touched once and
reused batch after batch, so the copy costs no page faults either.
"""

from __future__ import annotations

import mmap
import multiprocessing
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Arrays in a slot start at multiples of this many bytes (any dtype's alignment).
ALIGN = 64


@dataclass(frozen=True)
class SlotArrays:
    """Where a worker put its arrays: slot ``slot``, each as (byte offset, dtype, length)."""

    slot: int
    layout: tuple[tuple[int, str, int], ...]


class SlotRing:
    """``n_slots`` slots of ``slot_bytes`` each in one shared anonymous mapping."""

    def __init__(self, n_slots: int, slot_bytes: int) -> None:
        self.n_slots, self.slot_bytes = n_slots, slot_bytes
        self._memory = mmap.mmap(-1, n_slots * slot_bytes, flags=mmap.MAP_SHARED)
        self._bytes = np.frombuffer(self._memory, np.uint8)
        self._free = list(range(n_slots - 1, -1, -1))
        self._lock = threading.Lock()  # slots come back from the thread that consumed them

    @classmethod
    def for_pool(cls, n_slots: int, slot_bytes: int) -> SlotRing | None:
        """A ring that forked workers inherit; None when workers would not be forked."""
        if multiprocessing.get_start_method(allow_none=False) != "fork":
            return None
        return cls(n_slots, slot_bytes)

    def take(self) -> int | None:
        """A free slot (parent), or None when every slot is in use."""
        with self._lock:
            return self._free.pop() if self._free else None

    def give_back(self, slot: int) -> None:
        """Slot ``slot`` is free again: nothing reads its arrays any more (parent)."""
        with self._lock:
            if slot in self._free:
                raise ValueError(f"slot {slot} given back twice")
            self._free.append(slot)

    def n_free(self) -> int:
        with self._lock:
            return len(self._free)

    def put(self, slot: int, arrays: Sequence[np.ndarray]) -> SlotArrays | None:
        """Copy ``arrays`` into slot ``slot`` (worker); None when they do not fit (the caller
        sends them through the pipe instead)."""
        layout, at = [], 0
        for array in arrays:
            layout.append((at, array.dtype.str, len(array)))
            at += -(-array.nbytes // ALIGN) * ALIGN
        if at > self.slot_bytes:
            return None
        base = slot * self.slot_bytes
        for array, (offset, _, _) in zip(arrays, layout):
            start = base + offset
            self._bytes[start:start + array.nbytes] = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        return SlotArrays(slot, tuple(layout))

    def views(self, placed: SlotArrays) -> list[np.ndarray]:
        """The arrays a worker put (parent): views of the slot, valid until it is given back."""
        base = placed.slot * self.slot_bytes
        out = []
        for offset, dtype, length in placed.layout:
            kind = np.dtype(dtype)
            start = base + offset
            out.append(self._bytes[start:start + length * kind.itemsize].view(kind))
        return out
