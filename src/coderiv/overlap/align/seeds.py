"""Seeding for text alignment: the word n-grams two texts share (the *seeds* of
:mod:`coderiv.overlap.align`), over the words of :mod:`.words`.

A seed is a position pair (i, j): the ``n`` words from word i of
the suspicious text equal the ``n`` words from word j of the source. This is the "common
features" step of Kasprzak & Brandejs (PAN 2010: word 5-grams) and Torrejón & Ramos (PAN 2012-13:
word n-grams with n 2-3), with shorter n-grams than Kasprzak's so that one changed word in every
few still leaves seeds; the extension step (:mod:`.extend`) turns the scattered seeds into
passages.

An n-gram found more than ``max_occurrences`` times in either text (boilerplate such as "of the
same") is dropped: it seeds everywhere and aligns nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coderiv.overlap.align.words import Words


def ngram_keys(ids: np.ndarray, n: int) -> np.ndarray:
    """One 64-bit key per n-gram of words (position k: words k..k+n-1); equal n-grams have equal
    keys, and distinct ones collide with probability about 2^-64 (a polynomial hash, wrapping)."""
    if len(ids) < n:
        return np.empty(0, np.uint64)
    keys = np.zeros(len(ids) - n + 1, np.uint64)
    base = np.uint64(1_000_003)
    with np.errstate(over="ignore"):
        for k in range(n):
            keys = keys * base + (ids[k : len(ids) - n + 1 + k].astype(np.uint64) + np.uint64(1))
    return keys


@dataclass(frozen=True)
class Seeds:
    """Seed position pairs, sorted by suspicious position then source position."""

    susp: np.ndarray
    src: np.ndarray
    n: int

    def __len__(self) -> int:
        return len(self.susp)


def find_seeds(susp: Words, src: Words, n: int, max_occurrences: int) -> Seeds:
    """Every (i, j) whose n-grams are equal, leaving out n-grams more frequent than
    ``max_occurrences`` in either text."""
    a, b = ngram_keys(susp.ids, n), ngram_keys(src.ids, n)
    empty = np.empty(0, np.int64)
    if len(a) == 0 or len(b) == 0:
        return Seeds(empty, empty, n)
    b_order = np.argsort(b, kind="stable")
    b_sorted = b[b_order]
    lo = np.searchsorted(b_sorted, a, "left")
    hi = np.searchsorted(b_sorted, a, "right")
    counts = hi - lo
    uniq, inverse, a_counts = np.unique(a, return_inverse=True, return_counts=True)
    keep = (counts > 0) & (counts <= max_occurrences) & (a_counts[inverse] <= max_occurrences)
    rows = np.flatnonzero(keep)
    if len(rows) == 0:
        return Seeds(empty, empty, n)
    reps = counts[rows]
    i = np.repeat(rows, reps)
    # For each kept row, positions lo..hi-1 of the sorted source keys.
    offsets = np.arange(len(i)) - np.repeat(np.cumsum(reps) - reps, reps)
    j = b_order[np.repeat(lo[rows], reps) + offsets]
    order = np.lexsort((j, i))
    return Seeds(i[order].astype(np.int64), j[order].astype(np.int64), n)
