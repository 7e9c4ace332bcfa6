"""Counting the keys every two documents share, through the inverted index (SPEC §8; paper
003 §2.2–2.3), never by comparing all N² pairs.

**By blocks of keys** (any method, any engine): each key of the postings emits the pairs of
documents it contains, coded a·N + b; the pairs are counted per block of keys
(:func:`count_block`, a :class:`BlockTask` that an :data:`Engine` runs: in this process, or on
Dask), and the blocks' counts are summed (:func:`shared_pairs_of`) into :class:`SharedPairs`.

**By a sparse product** (set methods, one process): the key-document incidence times its
transpose (:func:`incidence`, :func:`product_rows`), row by row in compiled code (scipy): the
same counts without sorting pair codes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from coderiv.index.format.postings import Postings
from coderiv.pairs import row_ranking
from coderiv.pairs.eligibility import eligible_postings
from coderiv.pairs.methods import key_weights
from coderiv.progress import Progress

#: Pairs emitted per block of keys: bounds the memory of one task (about 16 bytes per pair).
BLOCK_PAIRS = 4_000_000


def aggregate(codes: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sum the weights (1 each when None) of equal pair codes: (sorted unique codes, int64 sums)."""
    if len(codes) == 0:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if weights is None:
        sums = np.diff(np.append(starts, len(codes))).astype(np.int64)
    else:
        sums = np.add.reduceat(weights[order].astype(np.int64), starts)
    return codes[starts], sums


def count_block(
    lens: np.ndarray,
    docs: np.ndarray,
    vals: np.ndarray | None,
    n_docs: int,
    measure: str | None = None,
    rows: np.ndarray | None = None,
    within: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of documents sharing the keys of one block, with their summed weights.

    ``lens[i]`` documents of key i follow each other in ``docs`` (ascending); ``vals`` are their
    values (f_dt), needed only with a ``measure``. A pair (a, b), a < b, is coded a·N + b. With
    ``rows`` (a boolean mask over documents) only pairs with an end in ``rows`` are kept; with
    ``within`` (another mask: the document range being computed) only pairs with an end in it.
    """
    lens = np.asarray(lens, np.int64)
    starts = np.concatenate(([0], np.cumsum(lens)[:-1])) if len(lens) else lens
    pieces: list[tuple[np.ndarray, np.ndarray | None]] = []
    for f in np.unique(lens):
        f = int(f)
        if f < 2:
            continue
        keys = np.flatnonzero(lens == f)
        a, b = np.triu_indices(f, 1)
        step = max(1, BLOCK_PAIRS // len(a))
        for lo in range(0, len(keys), step):
            at = starts[keys[lo : lo + step], None] + np.arange(f)
            matrix = docs[at]
            first, second = matrix[:, a].ravel(), matrix[:, b].ravel()
            keep = None if rows is None else rows[first] | rows[second]
            if within is not None:
                near = within[first] | within[second]
                keep = near if keep is None else keep & near
            weights = None
            if measure is not None:
                assert vals is not None  # a weighted method reads the values
                values = vals[at]
                weights = key_weights(measure, values[:, b].ravel(), values[:, a].ravel(), np.full(first.size, f))
                weights = weights if keep is None else weights[keep]
            if keep is not None:
                first, second = first[keep], second[keep]
            codes = first.astype(np.uint64) * np.uint64(n_docs) + second.astype(np.uint64)
            pieces.append(aggregate(codes, weights))
    if not pieces:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    return aggregate(np.concatenate([c for c, _ in pieces]), np.concatenate([w for _, w in pieces]))


@dataclass(frozen=True)
class BlockTask:
    """One part of the key space: its keys' postings, ready for :func:`count_block`."""

    number: int
    lens: np.ndarray
    docs: np.ndarray
    vals: np.ndarray | None
    n_docs: int
    measure: str | None
    rows: np.ndarray | None
    within: np.ndarray | None = None

    def run(self) -> tuple[int, np.ndarray, np.ndarray]:
        codes, sums = count_block(self.lens, self.docs, self.vals, self.n_docs, self.measure, self.rows, self.within)
        return self.number, codes, sums


def plan_blocks(
    store: Postings,
    positions: np.ndarray,
    measure: str | None,
    rows: np.ndarray | None,
    budget: int | None = None,
    within: np.ndarray | None = None,
    first_number: int = 0,
) -> Iterator[BlockTask]:
    """Cut the keys at ``positions`` (ascending) into consecutive blocks of about ``budget`` pairs
    (default :data:`BLOCK_PAIRS`), numbered from ``first_number``; :func:`block_count` of them."""
    f = store.doc_freqs_at(positions)
    lo = 0
    for number, hi in enumerate(_block_ends(f, budget), first_number):
        if hi <= lo:
            continue
        docs, vals, _ = store.gather(positions[lo:hi])
        yield BlockTask(
            number, f[lo:hi], np.asarray(docs, np.uint32),
            None if measure is None else np.asarray(vals), store.n_docs, measure, rows, within,
        )
        lo = hi


def _block_ends(f: np.ndarray, budget: int | None) -> list[int]:
    """End positions of the blocks of keys with document frequencies ``f`` (one block per
    ``budget`` pairs; an end not beyond the previous one makes no block)."""
    budget = budget or BLOCK_PAIRS
    work = np.cumsum(f * (f - 1) // 2 + 1)
    bounds: Any = np.searchsorted(work, np.arange(budget, int(work[-1]) + budget, budget), side="right") if len(work) else []
    return [int(hi) for hi in np.unique(np.append(bounds, len(f)))]


def block_count(store: Postings, positions: np.ndarray, budget: int | None = None) -> int:
    """How many blocks :func:`plan_blocks` cuts (the total of the progress of a pairs run)."""
    f = store.doc_freqs_at(positions)
    ends = _block_ends(f, budget)
    return sum(1 for lo, hi in zip([0, *ends], ends) if hi > lo)


Engine = Callable[[Iterable[BlockTask]], Iterator[tuple[int, np.ndarray, np.ndarray]]]


def serial_engine(tasks: Iterable[BlockTask]) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Run the blocks one after the other in this process."""
    for task in tasks:
        yield task.run()


@dataclass
class SharedPairs:
    """Summed weights of unordered pairs, readable row by row in both directions.

    ``first < second``, sorted by (first, second); ``by_second`` orders them by second, so
    the entries of rows r0…r1 are two slices, and the top-k never holds every directed entry
    of the collection in memory at once.
    """

    first: np.ndarray
    second: np.ndarray
    shared: np.ndarray
    by_second: np.ndarray
    second_sorted: np.ndarray

    @classmethod
    def from_codes(cls, codes: np.ndarray, shared: np.ndarray, n: int) -> SharedPairs:
        first = (codes // np.uint64(n)).astype(np.uint32)
        second = (codes % np.uint64(n)).astype(np.uint32)
        by_second = np.argsort(second, kind="stable")
        return cls(first, second, shared, by_second, second[by_second])

    def row_counts(self, n: int) -> np.ndarray:
        return np.bincount(self.first, minlength=n) + np.bincount(self.second, minlength=n)

    def rows(self, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, shared) of the directed entries whose source is in r0…r1−1."""
        f0, f1 = np.searchsorted(self.first, [r0, r1])
        b0, b1 = np.searchsorted(self.second_sorted, [r0, r1])
        back = self.by_second[b0:b1]
        return (
            np.concatenate((self.first[f0:f1], self.second[back])),
            np.concatenate((self.second[f0:f1], self.first[back])),
            np.concatenate((self.shared[f0:f1], self.shared[back])),
        )


def shared_pairs_of(
    results: Iterable[tuple[int, np.ndarray, np.ndarray]], n: int, progress: Progress | None
) -> tuple[SharedPairs, int]:
    """Sum the blocks' counts (in block order) into shared pairs; also the number of blocks."""
    collected = []
    for number, codes, sums in results:
        collected.append((number, codes, sums))
        if progress is not None:
            progress.advance(1)
    collected.sort(key=lambda r: r[0])
    codes, shared = aggregate(
        np.concatenate([r[1] for r in collected]) if collected else np.empty(0, np.uint64),
        np.concatenate([r[2] for r in collected]) if collected else None,
    )
    count = len(collected)
    del collected
    return SharedPairs.from_codes(codes, shared, n), count


def incidence(store: Postings, eligible: np.ndarray, f: np.ndarray) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """The 0/1 incidence of the ``eligible`` keys (mask over keys; ``f``: their frequencies) and
    the documents, both ways: (keys × documents, documents × keys), int32 counts in CSR.

    The first is the eligible keys' postings as they are (CSR over keys); the second, its
    transpose, gives each document's keys. Their product, documents × documents, holds at (a, b)
    the number of eligible keys a and b share: scipy computes it row by row in compiled code
    with a dense accumulator (Gustavson's algorithm), the per-document count the block sorts
    reach by sorting pair codes. Memory: about 16 bytes per posting of an eligible key."""
    indptr, docs = eligible_postings(store, eligible, f)
    keys_docs = sparse.csr_matrix((np.ones(len(docs), np.int32), docs, indptr), shape=(len(indptr) - 1, store.n_docs))
    return keys_docs, keys_docs.T.tocsr()


def product_ranges(docs_keys: sparse.csr_matrix, f_eligible: np.ndarray, budget: int | None = None) -> list[tuple[int, int]]:
    """Consecutive document ranges whose product rows hold about ``budget`` entries each
    (at most :data:`~coderiv.pairs.row_ranking.ROW_ENTRIES`): a document's row has at most 1 + Σ (f_t − 1) over its keys."""
    budget = min(budget or row_ranking.ROW_ENTRIES, row_ranking.ROW_ENTRIES)
    bound = docs_keys @ (f_eligible.astype(np.int64) - 1) + 1
    return row_ranking.row_ranges(np.asarray(bound, np.int64), budget)


def product_rows(
    docs_keys: sparse.csr_matrix, keys_docs: sparse.csr_matrix, r0: int, r1: int, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src, dst, shared) of the directed entries of documents r0…r1−1: every other document
    sharing an eligible key with the source, grouped by source (ascending). With ``rows`` (a mask
    over documents, the rows an incremental run recomputes) only entries with an end in ``rows``."""
    counts = (docs_keys[r0:r1] @ keys_docs).tocsr()
    src = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(counts.indptr))
    dst = counts.indices
    keep = dst != src
    if rows is not None:
        keep &= rows[src] | rows[dst]
    return src[keep], dst[keep].astype(np.uint32), counts.data[keep].astype(np.int64)
