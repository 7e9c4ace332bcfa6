"""From shared counts to ranked rows: each pair's percentage read from each end
(:func:`directed_values`, by the method's :attr:`~coderiv.pairs.methods.PairMethod.kind`), and
each document's top k (ties by document number, that is id order), a range of rows at a time
(:data:`ROW_ENTRIES` entries at most), written in place into the table's arrays
(:class:`RowBuilder`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coderiv.pairs.methods import CONTAINMENT, RESEMBLANCE, PairMethod
from coderiv.ranking.measures import get_measure, percent_of_self

#: Directed entries ranked at once when building rows (bounds the top-k's memory).
ROW_ENTRIES = 8_000_000


def directed_values(
    method: PairMethod,
    src: np.ndarray,
    dst: np.ndarray,
    shared: np.ndarray,
    sizes: np.ndarray,
    lengths: np.ndarray | None,
) -> np.ndarray:
    """Percentage of each pair read from ``src`` to ``dst`` (the row document is ``src``)."""
    s1 = sizes[src].astype(np.float64)
    c = shared.astype(np.float64)
    if method.kind == RESEMBLANCE:
        return np.asarray(100.0 * c / (s1 + sizes[dst].astype(np.float64) - c))
    if method.kind == CONTAINMENT:
        return np.asarray(100.0 * c / s1)
    assert lengths is not None and method.measure is not None  # SELF_SCORE
    # pair methods use measures whose document part needs no W_d (identity5), so norms are 1
    ones = np.ones(len(c))
    l1 = lengths[src].astype(np.float64)
    l2 = lengths[dst].astype(np.float64)
    return percent_of_self(get_measure(method.measure), c, s1, l2, l1, ones, ones)


def row_ranges(counts: np.ndarray, budget: int | None = None) -> list[tuple[int, int]]:
    """Consecutive row ranges holding about ``budget`` entries each (default ROW_ENTRIES)."""
    budget = budget or ROW_ENTRIES
    n = len(counts)
    cumulative = np.cumsum(counts)
    cuts: Any = np.searchsorted(cumulative, np.arange(budget, int(cumulative[-1]) + budget, budget), side="right") if n else []
    bounds = np.unique(np.concatenate(([0], np.minimum(np.asarray(cuts, np.int64) + 1, n), [n])))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def select_top(src: np.ndarray, dst: np.ndarray, val: np.ndarray, k: int, n_docs: int) -> tuple[np.ndarray, ...]:
    """Each source's k best entries, ranked by value, ties by document number (= id order).

    Returns (row_ptr, targets, values, truncated): rows in CSR form; ``truncated[d]`` is true
    when document d had more than k candidates.
    """
    order = np.lexsort((dst, -val, src))
    src, dst, val = src[order], dst[order], val[order]
    counts = np.bincount(src, minlength=n_docs)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(src)) - np.repeat(first, counts)
    keep = rank < k
    row_ptr = np.zeros(n_docs + 1, np.int64)
    np.cumsum(np.minimum(counts, k), out=row_ptr[1:])
    return row_ptr, dst[keep].astype(np.uint32), val[keep], counts > k


def kth_largest(val: np.ndarray, starts: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """The k-th largest of ``val[starts[i] : starts[i] + counts[i]]`` for every i (each count ≥ k).

    Rows of similar length are laid out as one matrix (widths rounded up to a power of two,
    padded with −1, below every percentage) and partitioned along its rows in compiled code:
    linear time, where a sort of the entries is not."""
    out = np.empty(len(counts), np.float64)
    width = np.left_shift(1, np.ceil(np.log2(np.maximum(counts, 1))).astype(np.int64))
    for w in np.unique(width).tolist():
        sel = np.flatnonzero(width == w)
        c = counts[sel]
        owner = np.repeat(np.arange(len(sel)), c)
        column = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        matrix = np.full((len(sel), w), -1.0)
        matrix[owner, column] = val[np.repeat(starts[sel], c) + column]
        out[sel] = np.partition(matrix, w - k, axis=1)[:, w - k]
    return out


def select_top_grouped(src: np.ndarray, dst: np.ndarray, val: np.ndarray, k: int, n_rows: int) -> tuple[np.ndarray, ...]:
    """:func:`select_top` of entries grouped by source (``src`` ascending), the same result in
    less time: in every row of more than k entries only those at least as large as its k-th
    largest value (:func:`kth_largest`) can be kept, so only they are sorted (ties included,
    so the order among equal values is still by document number)."""
    counts = np.bincount(src, minlength=n_rows)
    over = np.flatnonzero(counts > k)
    if len(over):
        starts = np.cumsum(counts) - counts
        threshold = np.full(n_rows, -np.inf)
        threshold[over] = kth_largest(val, starts[over], counts[over], k)
        keep = val >= threshold[src]
        src, dst, val = src[keep], dst[keep], val[keep]
    row_ptr, targets, values, _ = select_top(src, dst, val, k, n_rows)
    return row_ptr, targets, values, counts > k


class RowBuilder:
    """The CSR rows of consecutive row ranges, written in place as each range is ranked.

    Targets and values go into arrays allocated once for ``n_docs × top`` entries; the pages
    of an untouched allocation are never resident, so memory is that of the kept entries, held
    once (joining a list of pieces at the end would hold them twice)."""

    def __init__(self, n_docs: int, top: int) -> None:
        self.row_ptr = np.zeros(n_docs + 1, np.int64)
        self.targets = np.empty(n_docs * top, np.uint32)
        self.values = np.empty(n_docs * top, np.float64)
        self.truncated = np.zeros(n_docs, bool)
        self.rows = self.entries = 0

    def add(self, piece: tuple[np.ndarray, ...]) -> None:
        """Append the next rows (CSR: row_ptr, targets, values, truncated)."""
        row_ptr, targets, values, truncated = piece
        r, e, count = self.rows, self.entries, len(targets)
        self.row_ptr[r + 1 : r + len(row_ptr)] = row_ptr[1:] + e
        self.targets[e : e + count] = targets
        self.values[e : e + count] = values
        self.truncated[r : r + len(truncated)] = truncated
        self.rows, self.entries = r + len(row_ptr) - 1, e + count

    def result(self) -> tuple[np.ndarray, ...]:
        """(row_ptr, targets, values, truncated) of the rows added."""
        e = self.entries
        return self.row_ptr[: self.rows + 1], self.targets[:e], self.values[:e], self.truncated[: self.rows]
