"""Words and term keys of ASCII bytes in one compiled pass (numba), when ``coderiv[fast]`` is
installed: the same starts, lengths and keys as the numpy passes of
:mod:`coderiv.keys.batch_terms`, at a fraction of their cost.

The numpy passes touch every byte several times (fold, word edges, a 64-bit product and a
prefix sum per byte, then a few operations per word); this loop touches each byte once:
fold it by the table, extend the current word's sum ``Σ c_j·P^j`` and, at the word's end, mix
the key exactly as :func:`~coderiv.keys.kinds.term_keys` does (wrapping uint64 arithmetic
throughout). numba is optional: without it, or before :func:`load` has compiled the loop, the
numpy passes run (same keys, property-tested in ``tests/test_compiled_terms.py``).

The compiled loop is cached on disk by numba (``cache=True``), so only the first use on a
machine pays for compiling it (a few seconds); loading it from the cache still costs about
0.3 s of CPU (importing numba), what the loop saves on about 50 MB of text. So the indexing
parent calls :func:`load` only for a large job (a full first batch from a source of at least
:data:`LOAD_BYTES`), before it forks its workers, which then inherit the loaded loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coderiv.jit import LazyKernels
from coderiv.jit import available as available  # re-exported: whether numba is installed
from coderiv.keys.chunks import _MULTIPLIER as _NGRAM_MULTIPLIER
from coderiv.keys.kinds import _MULTIPLIER, _SEED

#: Bytes of source from which loading the loop pays for itself (see the module's docstring).
LOAD_BYTES = 64 << 20


def _word_keys(
    data: np.ndarray, fold: np.ndarray, multiplier: np.uint64, seed: np.uint64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The loop :func:`load` compiles (run as plain Python it gives the same, slowly)."""
    n = data.shape[0]
    most = n // 2 + 1
    starts = np.empty(most, np.int64)
    lengths = np.empty(most, np.int64)
    keys = np.empty(most, np.uint64)
    count = 0
    i = 0
    while i < n:
        c = fold[data[i]]
        if c == 0:
            i += 1
            continue
        start = i
        h = np.uint64(0)
        p = np.uint64(1)
        while True:
            h += np.uint64(c) * p
            p *= multiplier
            i += 1
            if i >= n:
                break
            c = fold[data[i]]
            if c == 0:
                break
        length = i - start
        x = h ^ (np.uint64(length) * multiplier) ^ seed
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
        starts[count] = start
        lengths[count] = length
        keys[count] = x
        count += 1
    return starts[:count], lengths[:count], keys[:count]


def _ngram_ids_into(
    keys: np.ndarray, lengths: np.ndarray, n: int, shift: np.uint64, multiplier: np.uint64, out: np.ndarray
) -> None:
    """The chunk ids of documents whose term keys are concatenated in ``keys``, as
    :func:`coderiv.keys.batch_chunks.numpy_ngram_ids` gives them, into ``out`` (uint64, or
    uint32 for ids of at most 32 bits; one a window, :func:`_windows`): for each window of n
    terms inside a document (or a shorter document's all), the Horner sum of its keys, mixed by
    splitmix64's finalizer and shifted right by ``shift``. The sum is rolled from one window to
    the next, ``h' = (h − k_i·M^(n−1))·M + k_(i+n)``, which wrapping uint64 arithmetic keeps
    exact (the loop the kernels compile)."""
    top = np.uint64(1)  # M^(n−1)
    for _ in range(n - 1):
        top *= multiplier
    at = 0
    start = 0
    for d in range(lengths.shape[0]):
        length = lengths[d]
        windows = length - n + 1 if length >= n else min(length, 1)
        h = np.uint64(0)
        for j in range(min(n, length)):
            h = h * multiplier + keys[start + j]
        for i in range(windows):
            if i:
                h = (h - keys[start + i - 1] * top) * multiplier + keys[start + i + n - 1]
            x = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            x = x ^ (x >> np.uint64(31))
            out[at] = x >> shift
            at += 1
        start += length


def _windows(lengths: np.ndarray, n: int) -> np.ndarray:
    """Chunk ids of each document of ``lengths`` terms: a document of n terms or more has one a
    window, a shorter one (not empty) one for all its terms."""
    windows: np.ndarray = np.where(lengths >= n, lengths - n + 1, np.minimum(lengths, 1))
    return windows


def _distinct_in_place(ids: np.ndarray, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each document's distinct ids, its ``windows[d]`` ids sorted in place one document after
    the other, moved to the front (a document's repeats dropped), and how many each has (the
    loop the kernels compile)."""
    counts = np.zeros(windows.shape[0], np.int64)
    k = 0
    at = 0
    for d in range(windows.shape[0]):
        for i in range(at, at + windows[d]):
            if i == at or ids[i] != ids[i - 1]:
                ids[k] = ids[i]
                counts[d] += 1
                k += 1
        at += windows[d]
    return ids[:k], counts


def _warm_up(kernels: dict[str, Any]) -> None:
    """Compile (or load from the cache) the loop for the arrays it gets: bytes and a fold table."""
    kernels["word_keys"](np.frombuffer(b"warm up", np.uint8), np.zeros(256, np.uint8), _MULTIPLIER, _SEED)


def _warm_up_chunks(kernels: dict[str, Any]) -> None:
    """Compile (or load from the cache) the chunk ids' loop for term keys and document lengths."""
    for dtype in (np.uint64, np.uint32):
        ids = np.empty(2, dtype)
        kernels["ngram_ids_into"](np.ones(3, np.uint64), np.array([3], np.int64), 2, np.uint64(32), _NGRAM_MULTIPLIER, ids)
    kernels["distinct_in_place"](ids, np.array([2], np.int64))


_KERNELS = LazyKernels({"word_keys": _word_keys}, _warm_up)
#: the chunk ids' loops, loaded only by jobs that compute chunk ids (:func:`load_chunks`)
_CHUNK_KERNELS = LazyKernels(
    {"ngram_ids_into": _ngram_ids_into, "distinct_in_place": _distinct_in_place}, _warm_up_chunks
)


def load() -> bool:
    """Import numba and compile (or load from numba's cache) the loop; False when numba is
    missing or fails (the numpy passes then run). Call it before forking workers."""
    return _KERNELS.load()


def load_chunks() -> bool:
    """After :func:`load` succeeded, compile (or load) the chunk ids' loop too (a job with a
    chunk store); False otherwise. Call it before forking workers."""
    return _KERNELS.loaded() and _CHUNK_KERNELS.load()


def loaded() -> bool:
    """Whether the compiled loop is ready in this process (see :func:`load`)."""
    return _KERNELS.loaded()


def word_keys(codes: np.ndarray, fold: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, lengths, keys) of the words of ``codes`` (uint8 bytes; a word is a maximal run
    of bytes that ``fold`` maps to non-zero, its code points the folded bytes). Needs
    :func:`load` first."""
    result: tuple[np.ndarray, np.ndarray, np.ndarray] = _KERNELS["word_keys"](codes, fold, _MULTIPLIER, _SEED)
    return result


def ngram_ids_of(keys: np.ndarray, lengths: np.ndarray, n: int, bits: int) -> np.ndarray:
    """:func:`coderiv.keys.batch_chunks.numpy_ngram_ids` in one compiled loop (uint64 ``keys``,
    int64 ``lengths``). Needs :func:`load_chunks` first."""
    ids = np.empty(int(_windows(lengths, n).sum()), np.uint64)
    _CHUNK_KERNELS["ngram_ids_into"](keys, lengths, n, np.uint64(64 - bits), _NGRAM_MULTIPLIER, ids)
    return ids


def chunk_keys_of(keys: np.ndarray, lengths: np.ndarray, n: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`coderiv.keys.batch_chunks.chunk_keys` for ids of at most 32 bits: the ids (one
    compiled loop), each document's sorted on its own, then each document's distinct ids
    (another): (ids uint32, per document how many). Sorting every document's uint32 ids
    apart is faster than one sort of ids tagged with their documents as uint64
    (measured: docs/performance-history.md). Needs :func:`load_chunks` first."""
    windows = _windows(lengths, n)
    ids = np.empty(int(windows.sum()), np.uint32)
    _CHUNK_KERNELS["ngram_ids_into"](keys, lengths, n, np.uint64(64 - bits), _NGRAM_MULTIPLIER, ids)
    at = 0
    for count in windows.tolist():
        if count > 1:
            ids[at : at + count].sort()
        at += count
    result: tuple[np.ndarray, np.ndarray] = _CHUNK_KERNELS["distinct_in_place"](ids, windows)
    return result


def chunks_loaded() -> bool:
    """Whether the chunk ids' loop is ready in this process (see :func:`load`)."""
    return _CHUNK_KERNELS.loaded()
