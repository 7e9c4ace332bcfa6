"""A pairs run's memory budget (``coderiv pairs --memory``): what a run holds whatever the pairs
(:func:`fixed_bytes`) is taken off the budget, and past what is left the rows are computed a
range of documents at a time (:func:`document_ranges`), each range holding at most
:func:`range_pairs` shared pairs.
"""

from __future__ import annotations

import numpy as np

from coderiv.index.format.postings import Postings
from coderiv.pairs import counting, eligibility, row_ranking
from coderiv.pairs.eligibility import key_freqs, key_ranges

#: Default memory budget of a whole run (bytes): what the run holds apart from the shared pairs
#: (:func:`fixed_bytes`) is taken off it, and past what is left rows are computed a range of
#: documents at a time (see :func:`document_ranges`).
PAIRS_MEMORY = 4 << 30

#: Bytes a shared pair costs at the peak of a range (block results, their concatenation, the
#: sort, and SharedPairs' two orders): used to turn the budget into pairs.
BYTES_PER_PAIR = 80

#: Shared pairs a range may always hold, however small the budget (a range of one document).
MIN_RANGE_PAIRS = 1_000_000


def fixed_bytes(store: Postings, n_docs: int, top: int, eligible_keys: int, eligible_postings: int | None = None) -> int:
    """Bytes a run holds apart from its shared pairs: per key f_t (4), the used, eligible and
    range masks (3) and the memory-mapped ``ptr`` pages it reads (8); per eligible key its
    position and frequency in the plan (16, twice while a range's are found); the postings'
    memory-mapped pages (2 + 1 a posting); the larger of the working sets of a whole-store pass
    and of one block (never held together); the kept rows (top entries of every document
    as targets and values, written in place by :class:`~coderiv.pairs.row_ranking.RowBuilder`)
    and one row range's ranked entries; and the interpreter with numpy (150 MB).

    With ``eligible_postings`` (the sparse product of the set methods, :func:`~coderiv.pairs.counting.incidence`) the
    plan and blocks are replaced by the incidence both ways: 16 bytes per eligible posting and
    16 per eligible key (both index pointers), while it is built from the pieces of the
    whole-store pass (4 more bytes a posting)."""
    keys = store.n_keys
    postings = 3 * store.n_postings
    if eligible_postings is None:
        per_key = 15 * keys + 32 * eligible_keys
        passes = max(24 * eligibility.POSTINGS_STEP, 60 * counting.BLOCK_PAIRS)
    else:
        per_key = 15 * keys + 16 * eligible_keys
        passes = 24 * eligibility.POSTINGS_STEP + 20 * eligible_postings
    rows = 12 * n_docs * top + 40 * n_docs + 24 * row_ranking.ROW_ENTRIES
    return per_key + postings + passes + rows + (150 << 20)


def range_pairs(memory: int, fixed: int) -> int:
    """Shared pairs one document range may hold: what ``memory`` leaves after ``fixed`` bytes,
    at :data:`BYTES_PER_PAIR` each, never fewer than :data:`MIN_RANGE_PAIRS`."""
    return max(MIN_RANGE_PAIRS, (memory - fixed) // BYTES_PER_PAIR)


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
    for a, b in key_ranges(store, step):
        partners = np.repeat(np.where(eligible[a:b], f[a:b] - 1, 0), f[a:b])
        lo, hi = (int(x) for x in store.offsets_between(a, b + 1)[[0, -1]])
        bound += np.bincount(np.asarray(store.docs[lo:hi]), weights=partners, minlength=n)
    cuts: list[int] = [0]
    total = np.cumsum(bound)
    while cuts[-1] < n:
        base = total[cuts[-1] - 1] if cuts[-1] else 0.0
        cuts.append(min(n, max(int(np.searchsorted(total, base + max_pairs, side="right")), cuts[-1] + 1)))
    return list(zip(cuts[:-1], cuts[1:]))
