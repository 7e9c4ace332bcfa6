"""All-pairs top-k similarities through the inverted index (SPEC §8; paper 003 §2.2–2.4).

Every document's k most similar documents, never by comparing all N² pairs: each key (chunk id
or term) of the index's postings emits the pairs of documents it contains, the pairs are counted
per block of keys, the blocks' counts are summed, and each document keeps its top k. For the set
methods in one process the counting is a sparse product instead (:func:`incidence`,
:func:`product_rows`): row by row in compiled code, the same counts without sorting pair codes.
With numba (``coderiv[fast]``) a full run in one process counts and ranks each row in one
compiled loop (:mod:`coderiv.pairs.compiled`, every method): the same tables again.

Methods (:data:`METHODS`):

- ``chunks`` (default): chunk similarity of paper 003, 5-word chunks; asymmetric,
  sim(A→B) = |chunks of A also in B| / |chunks of A|; both directions are kept.
- ``resemblance``: Broder's resemblance of 4-word shingles, |S(A)∩S(B)| / |S(A)∪S(B)|.
- ``identity5``: the identity5 measure of SPEC §3 on the terms store, percentage of the row
  document's self-score.

**Boilerplate.** Keys in more than M documents (templates, licence headers, standard phrases)
are skipped, like MOSS's ``-m``; they would make pair counting explode. M defaults to
max(100, 1% of N), well above a family of 10–20 releases. A skipped key is ignored entirely, as
if no document had it: it is left out of the shared counts *and* of each document's own size or
self-score, so that a copy still scores exactly 100% (SPEC §3's self-score rule).

**Exact sums.** Pair weights are integers: 1 per shared key for the set methods, and for
identity5 each term's contribution N/f_t · 1/(1 + |f_dt − f_qt|) in fixed point (units of
2⁻⁴⁰, N taken as 1: N multiplies S(q,d) and S(q,q) alike, so it cancels in the percentage).
Integer sums do not depend on the order of addition, so blocks computed in any order, on one
process or on a Dask cluster, and incremental runs give bit-identical tables.

**Incremental runs** (paper 003 §2.4): after the index changed, only the rows of added or changed
documents, of documents whose effective keys changed (a key crossing M; for identity5 a term
whose f_t changed), and of truncated rows that lost an entry are recomputed; every other row is
updated by merging the fresh pairs into its kept entries (both directions of every affected
pair). The result equals a full recomputation (``tests/test_pairs.py`` checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from coderiv.index.mapped_pages import release_store
from coderiv.index.postings import Postings
from coderiv.keys import chunks  # noqa: F401  (registers the "chunks" key kind)
from coderiv.keys.kinds import TERMS, StoreSpec
from coderiv.progress import Progress
from coderiv.ranking.measures import get_measure, percent_of_self
from coderiv.registry import Registry

if TYPE_CHECKING:
    from coderiv.index.index import Index

DEFAULT_TOP = 100
DEFAULT_METHOD = "chunks"
MIN_MAX_DF = 100
MAX_DF_FRACTION = 0.01
#: Fixed-point unit of identity5 weights (2⁻⁴⁰): sums stay exact integers in int64.
SCALE = float(1 << 40)
#: Pairs emitted per block of keys: bounds the memory of one task (about 16 bytes per pair).
BLOCK_PAIRS = 4_000_000
#: Default memory budget of a whole run (bytes): what the run holds apart from the shared pairs
#: (:func:`fixed_bytes`) is taken off it, and past what is left rows are computed a range of
#: documents at a time (see :func:`document_ranges`).
PAIRS_MEMORY = 4 << 30
#: Bytes a shared pair costs at the peak of a range (block results, their concatenation, the
#: sort, and SharedPairs' two orders): used to turn the budget into pairs.
BYTES_PER_PAIR = 80
#: Shared pairs a range may always hold, however small the budget (a range of one document).
MIN_RANGE_PAIRS = 1_000_000


@dataclass(frozen=True)
class PairMethod:
    """An n-to-n similarity: the index store it reads, and the measure weighting its keys.

    ``measure`` is None for set methods (each shared key counts 1). ``reading`` says what the
    percentage of a row entry (document ``doc_id``, similar document ``similar_id``) means, in
    which direction an asymmetric one goes; ``coderiv similar`` prints it over its table.
    """

    name: str
    store: StoreSpec
    measure: str | None
    description: str
    reading: str = ""


METHODS: Registry[PairMethod] = Registry("pair method")
for _method in (
    PairMethod(
        "chunks", StoreSpec.create("chunks", n=5), None, "chunk similarity, 5-word chunks, asymmetric (paper 003)",
        "percent = how much of doc_id is in similar_id: the share of doc_id's distinct 5-word chunks "
        "also in similar_id (asymmetric: similar_id's own row has the other direction)",
    ),
    PairMethod(
        "identity5", TERMS, "identity5", "identity5 measure on terms (SPEC §3)",
        "percent = similar_id's identity5 score with doc_id as the query, as a share of doc_id's "
        "self-score (asymmetric: similar_id's own row has the other direction)",
    ),
    PairMethod(
        "resemblance", StoreSpec.create("chunks", n=4), None, "resemblance of 4-word shingles (Broder; SPEC §6)",
        "percent = resemblance of doc_id and similar_id, |S(A)∩S(B)| / |S(A)∪S(B)| over 4-word "
        "shingles (symmetric: the same both ways)",
    ),
):
    METHODS.add(_method.name, _method)


def get_method(name: str) -> PairMethod:
    """The pair method called ``name``, or a clear error listing the known ones."""
    return METHODS.get(name)


def default_max_df(n_docs: int) -> int:
    """M, the boilerplate threshold: the larger of 100 and 1% of N."""
    return max(MIN_MAX_DF, math.ceil(MAX_DF_FRACTION * n_docs))


# -- the block kernel (runs on a worker) ------------------------------------------------------

def key_weights(measure: str, f_dt: np.ndarray, f_qt: np.ndarray, f_t: np.ndarray) -> np.ndarray:
    """Fixed-point weight of a term shared by two documents (N = 1, see the module docstring)."""
    term = get_measure(measure).term
    raw = term(f_dt.astype(np.float64), f_qt.astype(np.float64), f_t.astype(np.float64), 1.0)
    return np.rint(raw * SCALE).astype(np.int64)


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


# -- planning the blocks (the key space partition) --------------------------------------------

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
    f = np.asarray(store.ptr[positions + 1] - store.ptr[positions], np.int64)
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
    f = np.asarray(store.ptr[positions + 1] - store.ptr[positions], np.int64)
    ends = _block_ends(f, budget)
    return sum(1 for lo, hi in zip([0, *ends], ends) if hi > lo)


Engine = Callable[[Iterable[BlockTask]], Iterator[tuple[int, np.ndarray, np.ndarray]]]


def serial_engine(tasks: Iterable[BlockTask]) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Run the blocks one after the other in this process."""
    for task in tasks:
        yield task.run()


# -- counting by a sparse product (set methods, one process) ----------------------------------

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


def eligible_postings(store: Postings, eligible: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The postings of the ``eligible`` keys (mask over keys; ``f``: every key's frequency) as
    CSR lists: (key_ptr int64, docs int32), key i's documents ``docs[key_ptr[i]:key_ptr[i+1]]``
    ascending. Read a step of the store at a time (:func:`key_ranges`)."""
    key_ptr, docs, _ = eligible_lists(store, eligible, f, False)
    return key_ptr, docs


def eligible_lists(
    store: Postings, eligible: np.ndarray, f: np.ndarray, values: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`eligible_postings` and, with ``values``, the postings' values (f_dt) aligned with
    the documents (else an empty array)."""
    docs_pieces, vals_pieces = [], []
    ptr = np.asarray(store.ptr)
    for a, b in key_ranges(store):
        keep = np.repeat(eligible[a:b], f[a:b])
        lo, hi = int(ptr[a]), int(ptr[b])
        docs_pieces.append(np.asarray(store.docs[lo:hi])[keep].astype(np.int32))
        if values:
            vals_pieces.append(np.asarray(store.vals[lo:hi])[keep])
    docs = np.concatenate(docs_pieces) if docs_pieces else np.empty(0, np.int32)
    del docs_pieces
    vals = np.concatenate(vals_pieces) if vals_pieces else np.empty(0, np.uint8)
    del vals_pieces
    lens = f[eligible]
    indptr = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=indptr[1:])
    return indptr, docs, vals


def product_ranges(docs_keys: sparse.csr_matrix, f_eligible: np.ndarray, budget: int | None = None) -> list[tuple[int, int]]:
    """Consecutive document ranges whose product rows hold about ``budget`` entries each
    (at most :data:`ROW_ENTRIES`): a document's row has at most 1 + Σ (f_t − 1) over its keys."""
    budget = min(budget or ROW_ENTRIES, ROW_ENTRIES)
    bound = docs_keys @ (f_eligible.astype(np.int64) - 1) + 1
    return row_ranges(np.asarray(bound, np.int64), budget)


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


# -- from shared weights to ranked rows -------------------------------------------------------

@dataclass
class KeyView:
    """A store as one run sees it: M, which keys count, and each document's own size."""

    max_df: int
    used: np.ndarray  # per key: f_t ≤ M
    sizes: np.ndarray  # per document: used keys (set methods) or fixed-point self-sum (identity5)
    skipped_keys: np.ndarray  # the keys with f_t > M (sorted)
    skipped_postings: int


#: Postings read at once by whole-store passes (bounds their memory).
POSTINGS_STEP = 8_000_000


def release_pages(store: Postings) -> None:
    """Drop the store's memory-mapped pages from this process's resident set
    (:func:`~coderiv.index.mapped_pages.release_store`): a pass over the store then holds one
    step's pages, not the whole store's (3.9 GB for the 1M 4-shingle store)."""
    release_store(store)


def key_ranges(store: Postings, step: int | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive key ranges of about ``step`` postings each (default POSTINGS_STEP). The
    store's mapped pages are released after each (:func:`release_pages`), so that a pass over
    the store holds one step's pages, not the whole store's."""
    ptr = np.asarray(store.ptr)
    cuts = np.searchsorted(ptr, np.arange(0, int(ptr[-1]), step or POSTINGS_STEP), side="right") - 1
    bounds = np.unique(np.concatenate((cuts, [len(ptr) - 1])))
    del ptr
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        yield a, b
        release_pages(store)


def key_freqs(store: Postings) -> np.ndarray:
    """f_t of every key as int32 (half of ``store.doc_freqs``' int64), computed a step at a time
    so that no int64 copy of the whole key space is ever made; arithmetic that can pass 2³¹
    (f·(f−1)/2) casts the keys it reads to int64."""
    ptr = store.ptr
    f = np.empty(len(ptr) - 1, np.int32 if store.n_docs < (1 << 31) else np.int64)
    step = POSTINGS_STEP
    for a in range(0, len(f), step):
        b = min(len(f), a + step)
        f[a:b] = np.diff(np.asarray(ptr[a : b + 1]))
        release_pages(store)
    return f


def fixed_bytes(store: Postings, n_docs: int, top: int, eligible_keys: int, eligible_postings: int | None = None) -> int:
    """Bytes a run holds apart from its shared pairs: per key f_t (4), the used, eligible and
    range masks (3) and the memory-mapped ``ptr`` pages it reads (8); per eligible key its
    position and frequency in the plan (16, twice while a range's are found); the postings'
    memory-mapped pages (2 + 1 a posting); the larger of the working sets of a whole-store pass
    and of one block (never held together); the kept rows (top entries of every document
    as targets and values, written in place by :class:`RowBuilder`) and one row range's
    ranked entries; and the interpreter with numpy (150 MB).

    With ``eligible_postings`` (the sparse product of the set methods, :func:`incidence`) the
    plan and blocks are replaced by the incidence both ways: 16 bytes per eligible posting and
    16 per eligible key (both index pointers), while it is built from the pieces of the
    whole-store pass (4 more bytes a posting)."""
    keys = len(store.ptr) - 1
    postings = 3 * store.n_postings
    if eligible_postings is None:
        per_key = 15 * keys + 32 * eligible_keys
        passes = max(24 * POSTINGS_STEP, 60 * BLOCK_PAIRS)
    else:
        per_key = 15 * keys + 16 * eligible_keys
        passes = 24 * POSTINGS_STEP + 20 * eligible_postings
    rows = 12 * n_docs * top + 40 * n_docs + 24 * ROW_ENTRIES
    return per_key + postings + passes + rows + (150 << 20)


def range_pairs(memory: int, fixed: int) -> int:
    """Shared pairs one document range may hold: what ``memory`` leaves after ``fixed`` bytes,
    at :data:`BYTES_PER_PAIR` each, never fewer than :data:`MIN_RANGE_PAIRS`."""
    return max(MIN_RANGE_PAIRS, (memory - fixed) // BYTES_PER_PAIR)


def key_view(store: Postings, max_df: int, measure: str | None, f: np.ndarray | None = None) -> KeyView:
    """Which keys a run uses, and the documents' sizes over those keys (``f``: the keys'
    frequencies when the caller has them, :func:`key_freqs`)."""
    f = key_freqs(store) if f is None else f
    used = f <= max_df
    sizes = np.zeros(store.n_docs, np.int64)
    skipped_keys = []
    for a, b in key_ranges(store):
        skipped_keys.append(np.asarray(store.keys[a:b])[~used[a:b]])
        keep = np.repeat(used[a:b], f[a:b])
        lo, hi = int(store.ptr[a]), int(store.ptr[b])
        docs = np.asarray(store.docs[lo:hi])[keep]
        if measure is None:
            sizes += np.bincount(docs, minlength=store.n_docs)
        else:
            vals = np.asarray(store.vals[lo:hi])[keep]
            np.add.at(sizes, docs, key_weights(measure, vals, vals, np.repeat(f[a:b], f[a:b])[keep]))
    skipped = np.concatenate(skipped_keys) if skipped_keys else np.empty(0, np.asarray(store.keys).dtype)
    return KeyView(max_df, used, sizes, skipped, int(f[~used].sum()))


def document_ranges(
    store: Postings, eligible: np.ndarray, max_pairs: int, step: int | None = None, f: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """Consecutive document ranges whose rows can be computed within ``max_pairs`` shared pairs.

    A document's pairs are at most Σ (f_t − 1) over its eligible keys, so a range's shared
    pairs are at most the sum of its documents' bounds; ranges are cut on that sum. One range
    (every document) when the whole collection's bound fits, as in the unbounded run.
    """
    n = store.n_docs
    f = key_freqs(store) if f is None else f
    f_used = f[eligible].astype(np.int64)
    if int((f_used * (f_used - 1) // 2).sum()) <= max_pairs:
        return [(0, n)]
    del f_used
    bound = np.zeros(n)
    ptr = np.asarray(store.ptr)
    for a, b in key_ranges(store, step):
        partners = np.repeat(np.where(eligible[a:b], f[a:b] - 1, 0), f[a:b])
        bound += np.bincount(np.asarray(store.docs[ptr[a] : ptr[b]]), weights=partners, minlength=n)
    cuts: list[int] = [0]
    total = np.cumsum(bound)
    while cuts[-1] < n:
        base = total[cuts[-1] - 1] if cuts[-1] else 0.0
        cuts.append(min(n, max(int(np.searchsorted(total, base + max_pairs, side="right")), cuts[-1] + 1)))
    return list(zip(cuts[:-1], cuts[1:]))


def keys_holding(store: Postings, docs_mask: np.ndarray) -> np.ndarray:
    """Per key: does any document of ``docs_mask`` hold it."""
    found = np.zeros(len(store.keys), bool)
    ptr = np.asarray(store.ptr)
    for a, b in key_ranges(store):
        hit = docs_mask[np.asarray(store.docs[ptr[a] : ptr[b]])]
        found[a:b] = np.logical_or.reduceat(hit, ptr[a:b] - ptr[a])
    return found


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
    if method.name == "resemblance":
        return np.asarray(100.0 * c / (s1 + sizes[dst].astype(np.float64) - c))
    if method.measure is None:
        return np.asarray(100.0 * c / s1)
    assert lengths is not None
    # pair methods use measures whose document part needs no W_d (identity5), so norms are 1
    ones = np.ones(len(c))
    l1 = lengths[src].astype(np.float64)
    l2 = lengths[dst].astype(np.float64)
    return percent_of_self(get_measure(method.measure), c, s1, l2, l1, ones, ones)


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


#: Directed entries ranked at once when building rows (bounds the top-k's memory).
ROW_ENTRIES = 8_000_000


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


# -- the run --------------------------------------------------------------------------------

@dataclass
class RunReport:
    """What a ``pairs`` run did."""

    method: str
    mode: str  # "full", "incremental" or "unchanged"
    documents: int
    recomputed_rows: int
    blocks: int
    shared_pairs: int
    max_df: int
    skipped_keys: int
    skipped_postings: int
    reason: str = ""


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


def _docs_with_keys(store: Postings, keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the documents holding any of ``keys`` (keys absent from the store ignored)."""
    mask = np.zeros(store.n_docs, bool)
    pos = store.lookup(keys)
    pos = pos[pos >= 0]
    if len(pos):
        docs, _, _ = store.gather(pos)
        mask[np.asarray(docs)] = True
    return mask


@dataclass
class IncrementalPlan:
    """Which rows an incremental run recomputes, and the kept entries of the others."""

    rows: np.ndarray  # mask over new documents: rows recomputed from scratch
    kept_src: np.ndarray
    kept_dst: np.ndarray
    kept_val: np.ndarray
    kept_truncated: np.ndarray  # per new document: its old row was truncated
    reason: str = ""
    unchanged: bool = False

    def merge(self, src: np.ndarray, dst: np.ndarray, val: np.ndarray, k: int, r0: int, r1: int) -> tuple[np.ndarray, ...]:
        """Rows r0…r1−1: recomputed ones from fresh entries; the others from kept + fresh ones."""
        lo, hi = np.searchsorted(self.kept_src, [r0, r1])  # kept entries are in row order
        all_src = np.concatenate((src, self.kept_src[lo:hi])).astype(np.int64) - r0
        all_dst = np.concatenate((dst, self.kept_dst[lo:hi]))
        all_val = np.concatenate((val, self.kept_val[lo:hi]))
        # an entry may be both kept and fresh (an unchanged pair found again): keep one
        pair = all_src.astype(np.uint64) * np.uint64(1 << 32) + all_dst.astype(np.uint64)
        _, first = np.unique(pair, return_index=True)
        row_ptr, targets, values, truncated = select_top(all_src[first], all_dst[first], all_val[first], k, r1 - r0)
        return row_ptr, targets, values, truncated | (self.kept_truncated[r0:r1] & ~self.rows[r0:r1])


def plan_incremental(
    old_ids: list[str],
    old_sha: list[str],
    old_rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    old_skipped: np.ndarray,
    old_df: tuple[np.ndarray, np.ndarray] | None,
    index: Index,
    store: Postings,
    view: KeyView,
    measure: str | None,
) -> IncrementalPlan:
    """Compare the old table's documents and keys with the index's, and plan the update."""
    n = index.n_docs
    new_number = index.doc_numbers
    new_sha = index.doc_sha256
    old_to_new = np.full(len(old_ids), -1, np.int64)
    unchanged = np.zeros(n, bool)
    for i, (doc_id, sha) in enumerate(zip(old_ids, old_sha)):
        j = new_number.get(doc_id)
        if j is not None and new_sha[j] == sha:
            old_to_new[i] = j
            unchanged[j] = True
    dirty = ~unchanged  # added or changed documents
    # documents whose effective keys changed: a key crossed M ...
    dirty |= _docs_with_keys(store, np.setxor1d(old_skipped, view.skipped_keys))
    if measure is not None and old_df is not None:  # ... or (identity5) a used term's f_t changed
        stored = store.lookup(old_df[0])
        f_old = np.ones(len(store.keys), np.int64)
        f_old[stored[stored >= 0]] = old_df[1][stored >= 0]
        changed = (store.doc_freqs != f_old) & view.used
        f = store.doc_freqs
        for a, b in key_ranges(store):
            keep = np.repeat(changed[a:b], f[a:b])
            dirty[np.asarray(store.docs[int(store.ptr[a]) : int(store.ptr[b])])[keep]] = True

    row_ptr, targets, values, truncated = old_rows
    lengths = np.diff(row_ptr)
    src = old_to_new[np.repeat(np.arange(len(old_ids)), lengths)]
    dst = old_to_new[np.asarray(targets, np.int64)]
    live = (src >= 0) & (dst >= 0)
    live[live] &= ~dirty[src[live]] & ~dirty[dst[live]]
    dropped = np.zeros(n, np.int64)
    np.add.at(dropped, src[(src >= 0) & ~live], 1)
    kept_truncated = np.zeros(n, bool)
    kept_truncated[old_to_new[old_to_new >= 0]] = np.asarray(truncated)[old_to_new >= 0]
    rows = dirty | (kept_truncated & (dropped > 0))  # a truncated row that lost an entry
    live[live] &= ~rows[src[live]]
    kept_ids = sum(1 for doc_id in old_ids if doc_id in new_number)
    changed_docs = kept_ids - int(unchanged.sum())
    reason = (
        f"{n - kept_ids} added, {changed_docs} changed, {len(old_ids) - kept_ids} removed; "
        f"{int(rows.sum())} rows recomputed"
    )
    return IncrementalPlan(
        rows=rows,
        kept_src=src[live],
        kept_dst=dst[live],
        kept_val=np.asarray(values)[live],
        kept_truncated=kept_truncated,
        reason=reason,
    )
