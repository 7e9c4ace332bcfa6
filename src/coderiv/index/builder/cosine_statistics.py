"""The cosine statistics of a written terms store (Hoad & Zobel 2003; :mod:`coderiv.weights`):
W_d for every document, each term's largest x_dt / W_d (the bound that lets cosine queries
prune, :mod:`coderiv.ranking.topk`), and the per-class sums of squares behind the norm
classes of :mod:`~coderiv.index.cosine_bounds`.

Each is a pass over the store a key range at a time (about :data:`CHUNK_POSTINGS` postings):
x_dt = (1 + ln f_dt) · w_t from per-key weights and a table over the few distinct f_dt values,
so no logarithm is taken per posting, and its square added per range as ``np.bincount`` adds,
each range's sums then added to the total. The compiled loops of
:mod:`~coderiv.index.builder.compiled_writer` (numba, ``coderiv[fast]``) make the same additions in the
same order when loaded: the same bits.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from coderiv.index.builder import compiled_writer
from coderiv.index.format.postings import Postings
from coderiv.weights import document_norms, idf_weight, tf_weight

#: Postings of a key range a pass holds at once (as the writer's ranges, 8 bytes a posting a
#: copy). The ranges also fix the order of W_d's additions: another value may change its last bits.
CHUNK_POSTINGS = 16_000_000


def _cosine_tables(
    store: Postings, n_docs: int, f_t: np.ndarray | None = None, collection_size: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(postings per key, w_t per key, the table of 1 + ln f over the values 1 … max)."""
    f_t_all = np.diff(np.asarray(store.ptr))
    weights = idf_weight((f_t_all if f_t is None else np.asarray(f_t)).astype(np.float64), collection_size or n_docs)
    tf_table = tf_weight(np.arange(1, int(np.max(store.maxvals, initial=1)) + 1, dtype=np.float64))
    return f_t_all, weights, tf_table


def _chunk_ends(ptr: np.ndarray, chunk: int) -> list[int]:
    """The end key of each consecutive key range of about ``chunk`` postings (at least one key)."""
    ends, key = [], 0
    while key < len(ptr) - 1:
        key = max(int(np.searchsorted(ptr, ptr[key] + chunk, side="right")) - 1, key + 1)
        ends.append(key)
    return ends


def _cosine_components(
    store: Postings, n_docs: int, chunk: int, f_t: np.ndarray | None = None, collection_size: int | None = None
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """(first key, end key, documents, x_dt) for consecutive key ranges of about ``chunk``
    postings: x_dt = (1 + ln f_dt) · w_t from per-key weights and a table over the few distinct
    f_dt values, so no logarithm is taken per posting. ``f_t`` and ``collection_size`` give
    collection-wide statistics when the store holds only a shard (default: the store's own)."""
    ptr = np.asarray(store.ptr)
    f_t_all, weights, tf_table = _cosine_tables(store, n_docs, f_t, collection_size)
    key = 0
    for end in _chunk_ends(ptr, chunk):
        lo, hi = int(ptr[key]), int(ptr[end])
        x = tf_table[np.asarray(store.vals[lo:hi]).astype(np.int64) - 1] * np.repeat(weights[key:end], f_t_all[key:end])
        yield key, end, np.asarray(store.docs[lo:hi]), x
        key = end


def cosine_statistics(
    store: Postings, n_docs: int, chunk: int | None = None, f_t: np.ndarray | None = None, collection_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """W_d for every document and, for every term, max_d x_dt / W_d (cosine, and the bound
    that lets cosine queries prune): two passes over the terms store, a key range at a time
    (or the compiled loops of :mod:`~coderiv.index.builder.compiled_writer`, same bits, when loaded).
    A shard passes the collection's ``f_t`` (per key of its store) and ``collection_size`` N."""
    chunk = chunk or CHUNK_POSTINGS
    ptr = np.asarray(store.ptr)
    _, weights, tf_table = _cosine_tables(store, n_docs, f_t, collection_size)
    compiled = compiled_writer.cosine_passes(store.docs, store.vals, ptr, weights, tf_table, np.array(_chunk_ends(ptr, chunk)), n_docs)
    if compiled is not None:
        return compiled
    components = _cosine_components(store, n_docs, chunk, f_t, collection_size)
    norms = document_norms(((docs, x) for _, _, docs, x in components), n_docs)
    max_unit = np.zeros(store.n_keys)
    for key, end, docs, x in _cosine_components(store, n_docs, chunk, f_t, collection_size):
        starts = ptr[key:end] - ptr[key]
        max_unit[key:end] = np.maximum.reduceat(x / norms[docs], starts)
    return norms, max_unit


def row_squares(
    store: Postings, n_docs: int, key_rows: np.ndarray, n_rows: int, chunk: int | None = None,
    f_t: np.ndarray | None = None, collection_size: int | None = None,
) -> np.ndarray:
    """Σ_t x_dt² per (row of the key, document), flat at ``row · n_docs + document``: one pass
    over the store a key range at a time (``np.bincount`` per range, the sums then added), or
    the compiled loop (same bits) when loaded. :func:`~coderiv.index.cosine_bounds.class_norms`
    gives each key its class as its row."""
    chunk = chunk or CHUNK_POSTINGS
    ptr = np.asarray(store.ptr)
    f_t_all, weights, tf_table = _cosine_tables(store, n_docs, f_t, collection_size)
    ends = np.array(_chunk_ends(ptr, chunk), np.int64)
    compiled = compiled_writer.row_squares(store.docs, store.vals, ptr, weights, tf_table, ends, key_rows, n_rows, n_docs)
    if compiled is not None:
        return compiled
    squares = np.zeros(n_rows * n_docs)
    for key, end, docs, x in _cosine_components(store, n_docs, chunk, f_t, collection_size):
        row = np.repeat(np.asarray(key_rows[key:end], np.int64), f_t_all[key:end])
        squares += np.bincount(row * n_docs + docs.astype(np.int64), weights=x * x, minlength=len(squares))
    return squares
