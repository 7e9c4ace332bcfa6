"""Ascending-by-run numbers below 2³² in 2 bytes each (:class:`SplitNumbers`): a store's
document numbers, and the keys and offsets of a split store; with the vectorized binary
searches over sorted slices that reading them needs."""

from __future__ import annotations

from typing import Literal

import numpy as np

from coderiv.index.format.encoded import ENCODE_CHUNK, EncodedArray, concatenated_slices, narrow, nonempty_ranges
from coderiv.index.format.integrity import NO_GUARD, Checked, FileGuard, NoGuard, checked_insertion


def insertion_points(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, targets: np.ndarray, side: Literal["left", "right"] = "left",
    guard: FileGuard | NoGuard = NO_GUARD,
) -> np.ndarray:
    """For each i, where ``targets[i]`` goes in the sorted slice ``values[lo[i]:hi[i]]`` (as
    ``np.searchsorted`` with ``side``, plus ``lo[i]``): many binary searches at once,
    ~log2(longest slice) numpy steps. ``guard`` checks the elements that decide each answer
    (:func:`.integrity.checked_insertion`)."""
    lo, hi = np.asarray(lo).astype(np.int64), np.asarray(hi).astype(np.int64)
    start, end = lo.copy(), hi.copy()
    targets = np.asarray(targets).astype(np.int64)
    while True:
        active = np.flatnonzero(lo < hi)
        if not len(active):
            break
        mid = (lo[active] + hi[active]) // 2
        right = values[mid] < targets[active] if side == "left" else values[mid] <= targets[active]
        lo[active[right]] = mid[right] + 1
        hi[active[~right]] = mid[~right]
    checked_insertion(guard, values, start, end, targets, lo, side)
    return lo


def search_segments(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, targets: np.ndarray, guard: FileGuard | NoGuard = NO_GUARD
) -> np.ndarray:
    """For each i, the position of ``targets[i]`` in the sorted slice ``values[lo[i]:hi[i]]``, or
    −1 where it is absent (:func:`insertion_points`)."""
    end = np.asarray(hi).astype(np.int64)
    targets = np.asarray(targets).astype(np.int64)
    lo = insertion_points(values, lo, end, targets, "left", guard)
    found = lo < end
    found[found] = values[lo[found]] == targets[found]
    return np.where(found, lo, -1)


def _concat_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i], starts[i]+1, …`` (``counts[i]`` of them) for every i, concatenated."""
    offsets = np.cumsum(counts) - counts
    ranges: np.ndarray = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(starts - offsets, counts)
    return ranges


def doc_runs(docs: np.ndarray, chunk: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(run_at, run_high) of :class:`SplitNumbers` for ``docs`` (uint32, in store order): a run
    starts at the first posting and wherever ``docs >> 16`` changes, whatever the keys. Reads
    ``docs`` ``chunk`` postings at a time, so it may be a memory map of any size."""
    chunk = chunk or ENCODE_CHUNK
    starts, highs = [], []
    previous = -1
    for a in range(0, len(docs), chunk):
        high = (np.asarray(docs[a : a + chunk]).astype(np.int64)) >> 16
        at = np.flatnonzero(np.diff(high, prepend=previous) != 0) + a
        starts.append(at)
        highs.append(high[at - a])
        previous = int(high[-1])
    run_at = narrow(np.concatenate([*starts, [len(docs)]]).astype(np.int64))  # uint32 below 4G postings
    run_high = np.concatenate(highs).astype(np.uint16) if highs else np.empty(0, np.uint16)
    return run_at, run_high


class SplitNumbers(EncodedArray):
    """Numbers below 2³² in 2 bytes each instead of 4: a store's document numbers, and the keys
    and offsets of a store whose keys fit 32 bits (a chunk store's: :data:`SPLIT`).

    ``low`` (uint16) holds each number's low 16 bits; the high bits are stored once per run:
    numbers ``run_at[j] ≤ p < run_at[j+1]`` have high bits ``run_high[j]``. A run starts
    wherever the high bits change from one number to the next. Document numbers ascend within a
    key, so a run may hold the end of one key and the start of the next: a collection of at most
    65,536 documents has one run, and a key overlaps at most ``1 + N / 65536`` runs. Keys and
    offsets ascend through the whole array, so they have at most 65,536 runs (a binary search
    over the runs, then one within a run, finds a key). Reads decode to uint32 (the same
    numbers as a plain array), every array stays memory-mapped, and any number is reachable
    directly.
    """

    dtype = np.dtype(np.uint32)
    run_at: Checked[np.ndarray] = Checked()
    run_high: Checked[np.ndarray] = Checked()
    _raw_run_at: np.ndarray
    _raw_run_high: np.ndarray

    def __init__(self, low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray) -> None:
        super().__init__()
        self.low, self.run_at, self.run_high = low, run_at, run_high

    @classmethod
    def encode(cls, docs: np.ndarray) -> SplitNumbers:
        """Split in-memory document numbers (in store order)."""
        docs = np.asarray(docs)
        run_at, run_high = doc_runs(docs, max(len(docs), 1))
        return cls((docs & 0xFFFF).astype(np.uint16), run_at, run_high)

    def __len__(self) -> int:
        return len(self._raw_low)

    def _search_runs(self, positions: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        """``np.searchsorted`` over ``run_at`` with the positions in its own (narrowed) type:
        a mixed-type search would convert the whole ``run_at`` on every call. The neighbours
        deciding each answer are checked (:func:`.integrity.checked_insertion`)."""
        run_at = self._raw_run_at
        targets = positions.astype(run_at.dtype, copy=False)
        found: np.ndarray = np.searchsorted(run_at, targets, side=side)
        checked_insertion(self._guard("run_at"), run_at, 0, len(run_at), targets, found, side)
        return found.astype(np.int64, copy=False)

    def _run_high(self, runs: np.ndarray) -> np.ndarray:
        """The high bits of the runs at ``runs``, their blocks checked."""
        self._guard("run_high").elements(runs)
        return np.asarray(self._raw_run_high[runs])

    def _run_bounds(self, runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the runs at ``runs`` start and end (posting offsets), their blocks checked."""
        self._guard("run_at").elements(np.concatenate((runs, runs + 1)))
        run_at = self._raw_run_at
        return run_at[runs].astype(np.int64), run_at[runs + 1].astype(np.int64)

    def _low_ranges(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The low bits of postings ``starts[i]:ends[i]``, concatenated, their blocks checked."""
        self._guard("low").spans(starts, ends)
        return concatenated_slices(self._raw_low, starts, ends)

    def ranges(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Decoded numbers of postings ``starts[i]:ends[i]`` for every i, concatenated."""
        starts, ends = nonempty_ranges(starts, ends)
        if not len(starts):
            return np.empty(0, np.uint32)
        low = self._low_ranges(starts, ends)
        first = self._search_runs(starts, "right") - 1
        counts = self._search_runs(ends, "left") - first
        if int(counts.max()) == 1:  # each range within one run (rare keys, or N ≤ 65,536): no run walk
            high = self._run_high(first).astype(np.uint32)
            if not high.any():
                return low.astype(np.uint32)
            decoded: np.ndarray = np.repeat(high << np.uint32(16), ends - starts)
        else:
            run = _concat_ranges(first, counts)
            owner = np.repeat(np.arange(len(starts)), counts)
            run_start, run_end = self._run_bounds(run)
            lengths = np.minimum(run_end, ends[owner]) - np.maximum(run_start, starts[owner])
            decoded = np.repeat(self._run_high(run).astype(np.uint32) << np.uint32(16), lengths)
        decoded |= low
        return decoded

    def take(self, positions: np.ndarray) -> np.ndarray:
        """Decoded numbers of the postings at ``positions`` (any order)."""
        positions = np.asarray(positions).astype(np.int64, copy=False)
        run = self._search_runs(positions, "right")
        run -= 1
        self._guard("low").elements(positions)
        decoded: np.ndarray = self._run_high(run).astype(np.uint32)
        del run
        decoded <<= np.uint32(16)
        decoded |= self._raw_low[positions]
        return decoded

    def search_sorted(self, values: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        """``np.searchsorted`` of ``values`` in the decoded numbers, which must ascend (a split
        store's keys or offsets): the runs before the one with a value's high bits hold smaller
        numbers, so the answer is that run's start plus a search of its low bits."""
        values = np.asarray(values).astype(np.int64)
        high = values >> 16
        run_high = self._raw_run_high
        self._guard("run_high").whole()  # (at most 65,536 runs: 128 KB)
        run = np.searchsorted(run_high, np.minimum(high, 1 << 16).astype(np.int64), side="left")
        start = self._run_bounds(np.minimum(run, len(run_high) - 1))[0] if len(run_high) else np.zeros(len(values), np.int64)
        at = np.where(run < len(run_high), start, len(self))
        inside = np.flatnonzero(run < len(run_high))
        inside = inside[run_high[run[inside]] == high[inside]]
        if len(inside):
            lo, hi = self._run_bounds(run[inside])
            at[inside] = insertion_points(self._raw_low, lo, hi, values[inside] & 0xFFFF, side, self._guard("low"))
        return at

    def shape_agrees(self) -> bool:
        """The runs cover the numbers: as many starts as high bits plus one, from 0 to the
        length (two elements read, their blocks checked)."""
        run_at = self._raw_run_at
        if len(run_at) != len(self._raw_run_high) + 1:
            return False
        self._guard("run_at").elements(np.array([0, len(run_at) - 1]))
        return int(run_at[0]) == 0 and int(run_at[-1]) == len(self)

    def search(
        self, lo: np.ndarray, hi: np.ndarray, targets: np.ndarray, owner: np.ndarray | None = None
    ) -> np.ndarray:
        """For each i, the position of document ``targets[i]`` among the postings of one key, or
        −1: the run with the target's high bits, then its low bits within that run. The key's
        postings are ``lo[j]:hi[j]`` with ``j = owner[i]`` (``j = i`` without ``owner``), so
        many targets probing the same key find its runs once."""
        lo, hi = np.asarray(lo).astype(np.int64), np.asarray(hi).astype(np.int64)
        targets = np.asarray(targets).astype(np.int64)
        owner = np.arange(len(targets)) if owner is None else np.asarray(owner)
        first = self._search_runs(lo, "right") - 1
        last = self._search_runs(hi, "left")
        at = np.full(len(targets), -1, np.int64)
        if bool(np.all(last - first == 1)):  # each key within one run, which covers all of it
            found = np.flatnonzero(self._run_high(first)[owner] == targets >> 16)
            keys = owner[found]
            sub_lo, sub_hi = lo[keys], hi[keys]
        else:
            keys = owner
            run = search_segments(self._raw_run_high, first[keys], last[keys], targets >> 16, self._guard("run_high"))
            found = np.flatnonzero(run >= 0)
            keys, r = keys[found], run[found]
            run_start, run_end = self._run_bounds(r)
            sub_lo = np.maximum(run_start, lo[keys])
            sub_hi = np.minimum(run_end, hi[keys])
        if len(found):
            at[found] = search_segments(self._raw_low, sub_lo, sub_hi, targets[found] & 0xFFFF, self._guard("low"))
        return at
