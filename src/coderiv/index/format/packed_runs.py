"""Reading postings as the compiled loops do, one at a time: a document number is its low 16 bits
plus the high bits of the run holding it (:class:`~coderiv.index.format.split_numbers.SplitNumbers`),
a value is its byte unless that is the escape, whose value is in the side table
(:class:`~coderiv.index.format.counts.CountValues`). Plain functions of scalars and arrays, so
that numba compiles them into the loops that call them (``LazyKernels(helpers=...)``,
:mod:`coderiv.jit`), and the codec's layout is written once for every compiled reader.

numba's on-disk cache of a calling loop is keyed by the caller's own file: after changing a
helper here in a working copy, clear the callers' caches (``__pycache__/*.nbi``, ``*.nbc`` of
``compiled_probes`` and ``compiled_writer``) or they keep the old helper's code. An installed
release rewrites every file, which invalidates them."""

from __future__ import annotations

import numpy as np


def run_of(run_at: np.ndarray, position: int) -> int:
    """The run holding posting ``position``: the last r with run_at[r] ≤ position."""
    lo, hi = 0, run_at.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if int(run_at[mid]) <= position:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def lower_bound(values: np.ndarray, lo: int, hi: int, target: int) -> int:
    """The first i in [lo, hi) with values[i] ≥ ``target`` (``hi`` if none): a binary search
    of ascending ``values``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if int(values[mid]) < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def first_escape(over_at: np.ndarray, position: int) -> int:
    """Index in the side table of the first escaped posting at or after ``position``."""
    return lower_bound(over_at, 0, over_at.shape[0], position)


def escaped_value(over_at: np.ndarray, over_val: np.ndarray, position: int) -> int:
    """The value of posting ``position``, whose byte is the escape: the side table's."""
    return int(over_val[first_escape(over_at, position)])


def run_after(run_at: np.ndarray, position: int, run: int) -> int:
    """The run holding posting ``position`` in a walk over ascending positions, from ``run``,
    the run of the previous posting read (0 to start): a step forward instead of a search.

    A walk's document and value stay written in its loop (``(run_high[run] << 16) | low[p]``;
    the byte, or the side table's value when ``over_at[escape] == p``): a helper returning them
    with the cursors as a tuple, or as three scalar helpers, made the cosine statistics' loops
    5-12x slower under numba (0.47 s against 0.045 s on 20K documents; it does not inline them),
    where this one costs nothing measurable."""
    while run_at[run + 1] <= position:
        run += 1
    return run
