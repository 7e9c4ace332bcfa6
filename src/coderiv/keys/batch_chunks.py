"""Chunk ids of many documents at once, from their term keys, in whole-batch array passes.

:func:`coderiv.keys.chunks.ngram_ids` defines a document's chunk ids (paper 003; SPEC §6): the
n-gram starting at term i has the id ``mix64(Σ_j k_{i+j}·M^(n−1−j)) >> (64 − bits)`` over the
terms' 64-bit keys (wrapping uint64 arithmetic), and a document shorter than n terms has one id,
that of all its terms. Indexing computes it once per document from a list of strings. Here the
term keys of a whole batch of documents (what :func:`coderiv.keys.batch_terms.ascii_term_sequences`
gives) are concatenated and every id is computed in n passes over that one array; a document's
windows never cross into the next (they are taken only where the document has n terms left), and
a short document's one id is the same Horner sum over its k < n terms (leading zeros add nothing
to it). Then each document's distinct ids, sorted (the chunk store's presence keys), come from
one sort of the batch: with ids of at most 32 bits, the document's number is put above the id,
so that one sort of 64-bit integers orders by (document, id).

The loop has a compiled twin (:func:`coderiv.keys.compiled_terms.ngram_ids_of`), used when the
indexing parent has loaded it (:func:`~coderiv.keys.compiled_terms.load_chunks`: a large job with a
chunk store); the same ids (property-tested in ``tests/test_batch_chunks.py``).
"""

from __future__ import annotations

import numpy as np

from coderiv.keys import compiled_terms
from coderiv.keys.chunks import _MULTIPLIER
from coderiv.keys.kinds import distinct, mix64


def _check(n: int, bits: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1 (got {n})")
    if not 1 <= bits <= 64:
        raise ValueError(f"bits must be in 1..64 (got {bits})")


def ids_per_document(lengths: np.ndarray, n: int) -> np.ndarray:
    """How many n-gram ids a document of each length has: L − n + 1, one when 0 < L < n, none
    when empty."""
    lengths = np.asarray(lengths, np.int64)
    return np.where(lengths >= n, lengths - n + 1, np.minimum(lengths, 1))


def numpy_ngram_ids(keys: np.ndarray, lengths: np.ndarray, n: int, bits: int = 32) -> np.ndarray:
    """The n-gram ids of documents whose term keys are concatenated in ``keys`` (document d has
    the next ``lengths[d]``), each document's in text order, one document after the other:
    ``np.concatenate([ngram_ids(terms_d, n, bits) for d])``, in numpy passes."""
    _check(n, bits)
    keys = np.asarray(keys, np.uint64)
    lengths = np.asarray(lengths, np.int64)
    total = len(keys)
    if not total:
        return np.empty(0, np.uint64)
    starts = np.cumsum(lengths) - lengths
    padded = np.zeros(total + n - 1, np.uint64)
    padded[:total] = keys
    acc = np.zeros(total, np.uint64)
    with np.errstate(over="ignore"):
        for j in range(n):  # the window starting at every position (some cross documents)
            acc *= _MULTIPLIER
            acc += padded[j : j + total]
    left = np.repeat(starts + lengths, lengths) - np.arange(total)  # terms left in the document
    emit = left >= n
    short = np.flatnonzero((lengths > 0) & (lengths < n))
    if len(short):  # one id each, of all its terms: Horner over k < n terms
        size = lengths[short]
        with np.errstate(over="ignore"):
            sums = np.zeros(len(short), np.uint64)
            for j in range(n - 1):
                take = j < size
                sums[take] = sums[take] * _MULTIPLIER + keys[starts[short[take]] + j]
        acc[starts[short]] = sums
        emit[starts[short]] = True
    return np.asarray(mix64(acc[emit]) >> np.uint64(64 - bits))


def ngram_ids_of(keys: np.ndarray, lengths: np.ndarray, n: int, bits: int = 32) -> np.ndarray:
    """:func:`numpy_ngram_ids`, by the compiled loop when it is loaded."""
    _check(n, bits)
    if compiled_terms.chunks_loaded():
        return compiled_terms.ngram_ids_of(np.asarray(keys, np.uint64), np.asarray(lengths, np.int64), n, bits)
    return numpy_ngram_ids(keys, lengths, n, bits)


def distinct_per_document(ids: np.ndarray, counts: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(each document's sorted distinct ids, one document after the other; how many each has)
    of ids grouped by document (document d has the next ``counts[d]``): per document what
    :func:`coderiv.keys.kinds.distinct` gives. Ids of at most 32 bits take one sort of
    (document << 32 | id) and come in uint32; wider ones one sort per document, in uint64."""
    counts = np.asarray(counts, np.int64)
    if not len(ids):
        return np.empty(0, np.uint32 if bits <= 32 else np.uint64), np.zeros(len(counts), np.int64)
    if bits <= 32 and len(counts) < 1 << 32:
        combined = np.repeat(np.arange(len(counts), dtype=np.uint64) << np.uint64(32), counts)
        combined |= ids
        combined = distinct(combined)
        owner = (combined >> np.uint64(32)).astype(np.int64)
        return (combined & np.uint64(0xFFFFFFFF)).astype(np.uint32), np.bincount(owner, minlength=len(counts))
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    parts = [distinct(ids[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    return np.concatenate(parts), np.fromiter((len(p) for p in parts), np.int64, len(parts))


def chunk_keys(keys: np.ndarray, lengths: np.ndarray, n: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Every document's chunk store keys (sorted distinct n-gram ids, one document after the
    other; uint32 when ``bits`` ≤ 32) and how many each has, from the documents' concatenated
    term keys: per document, ``presence_keys(ngram_ids(terms, n, bits))[0]``. By two compiled
    loops and one sort when they are loaded (:func:`~coderiv.keys.compiled_terms.chunk_keys_of`)."""
    _check(n, bits)
    lengths = np.asarray(lengths, np.int64)
    if bits <= 32 and len(lengths) < 1 << 32 and compiled_terms.chunks_loaded():
        return compiled_terms.chunk_keys_of(np.asarray(keys, np.uint64), lengths, n, bits)
    ids = ngram_ids_of(keys, lengths, n, bits)
    return distinct_per_document(ids, ids_per_document(lengths, n), bits)
