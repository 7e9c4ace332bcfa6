"""Which keys a pairs run counts, read a step of the store at a time.

**Boilerplate.** Keys in more than M documents (templates, licence headers, standard phrases)
are skipped, like MOSS's ``-m``; they would make pair counting explode. M defaults to
max(100, 1% of N) (:func:`default_max_df`), well above a family of 10–20 releases. A skipped
key is ignored entirely, as if no document had it: it is left out of the shared counts *and* of
each document's own size or self-score (:func:`key_view`), so that a copy still scores exactly
100% (SPEC §3's self-score rule).

Every pass over a whole store reads about :data:`POSTINGS_STEP` postings at a time
(:func:`key_ranges`) and drops the store's mapped pages after each step, so that it holds one
step's pages, not the whole store's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from coderiv.index.format.postings import Postings
from coderiv.pairs.methods import key_weights
from coderiv.system.mapped_pages import release_store

#: M's floor and its share of N (:func:`default_max_df`).
MIN_MAX_DF = 100
MAX_DF_FRACTION = 0.01
#: Postings read at once by whole-store passes (bounds their memory).
POSTINGS_STEP = 2_000_000


def default_max_df(n_docs: int) -> int:
    """M, the boilerplate threshold: the larger of 100 and 1% of N."""
    return max(MIN_MAX_DF, math.ceil(MAX_DF_FRACTION * n_docs))


@dataclass
class KeyView:
    """A store as one run sees it: M, which keys count, and each document's own size."""

    max_df: int
    used: np.ndarray  # per key: f_t ≤ M
    sizes: np.ndarray  # per document: used keys (set methods) or fixed-point self-sum (identity5)
    skipped_keys: np.ndarray  # the keys with f_t > M (sorted)
    skipped_postings: int


def release_pages(store: Postings) -> None:
    """Drop the store's memory-mapped pages from this process's resident set
    (:func:`~coderiv.system.mapped_pages.release_store`): a pass over the store then holds one
    step's pages, not the whole store's (3.9 GB for the 1M 4-shingle store)."""
    release_store(store)


def key_ranges(store: Postings, step: int | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive key ranges of about ``step`` postings each (default POSTINGS_STEP). The
    store's mapped pages are released after each (:func:`release_pages`), so that a pass over
    the store holds one step's pages, not the whole store's."""
    needles = np.arange(0, store.n_postings, step or POSTINGS_STEP)
    cuts = store.key_of(needles)
    bounds = np.unique(np.concatenate((cuts, [store.n_keys])))
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        yield a, b
        release_pages(store)


def key_freqs(store: Postings) -> np.ndarray:
    """f_t of every key as int32 (half of ``store.doc_freqs``' int64), computed a step at a time
    so that no int64 copy of the whole key space is ever made; arithmetic that can pass 2³¹
    (f·(f−1)/2) casts the keys it reads to int64."""
    f = np.empty(store.n_keys, np.int32 if store.n_docs < (1 << 31) else np.int64)
    step = POSTINGS_STEP
    for a in range(0, len(f), step):
        b = min(len(f), a + step)
        f[a:b] = np.diff(store.offsets_between(a, b + 1))
        release_pages(store)
    return f


def key_view(store: Postings, max_df: int, measure: str | None, f: np.ndarray | None = None) -> KeyView:
    """Which keys a run uses, and the documents' sizes over those keys (``f``: the keys'
    frequencies when the caller has them, :func:`key_freqs`)."""
    f = key_freqs(store) if f is None else f
    used = f <= max_df
    sizes = np.zeros(store.n_docs, np.int64)
    skipped_keys = []
    for a, b in key_ranges(store):
        skipped_keys.append(store.keys_between(a, b)[~used[a:b]])
        keep = np.repeat(used[a:b], f[a:b])
        lo, hi = (int(x) for x in store.offsets_between(a, b + 1)[[0, -1]])
        docs = np.asarray(store.docs[lo:hi])[keep]
        if measure is None:
            sizes += np.bincount(docs, minlength=store.n_docs)
        else:
            vals = np.asarray(store.vals[lo:hi])[keep]
            np.add.at(sizes, docs, key_weights(measure, vals, vals, np.repeat(f[a:b], f[a:b])[keep]))
    skipped = np.concatenate(skipped_keys) if skipped_keys else store.keys_between(0, 0)
    return KeyView(max_df, used, sizes, skipped, int(f[~used].sum()))


def keys_holding(store: Postings, docs_mask: np.ndarray) -> np.ndarray:
    """Per key: does any document of ``docs_mask`` hold it."""
    found = np.zeros(store.n_keys, bool)
    for a, b in key_ranges(store):
        ptr = store.offsets_between(a, b + 1).astype(np.int64)
        hit = docs_mask[np.asarray(store.docs[ptr[0] : ptr[-1]])]
        found[a:b] = np.logical_or.reduceat(hit, ptr[:-1] - ptr[0])
    return found


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
    for a, b in key_ranges(store):
        keep = np.repeat(eligible[a:b], f[a:b])
        lo, hi = (int(x) for x in store.offsets_between(a, b + 1)[[0, -1]])
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
