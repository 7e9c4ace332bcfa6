"""Per-document norm classes: the bound that lets an exact cosine top-k skip most postings of
common terms (issue 16).

A cosine query's 10th best score is typically a few percent of its self-score, earned by
ordinary documents through the common terms both share; a per-term bound (max_d x_dt/W_d,
reached by some very short document) cannot rule such documents out, so the long postings had
to be read in full. Cauchy–Schwarz gives a per-document bound instead: for any set U of terms,

    Σ_{t∈U} x_qt · x_dt / W_d  ≤  ‖q_U‖ · ‖d_U‖ / W_d.

Terms are put in classes by document frequency, one per octave of f_t/N: class c (0 … 7) holds
the terms with N/2^(c+1) < f_t ≤ N/2^c; rarer terms (f_t ≤ N/256) belong to none and are always
read. For every document and class the index stores ``‖d_c‖ / W_d`` (the share of the document's
norm on that class's terms, ≤ 1), rounded **up** to a multiple of 1/255 in one byte, so the
bound stays a bound: 8 bytes a document. The query side ‖q_{U∩c}‖ is computed at query time
over the class's terms not read yet. :mod:`coderiv.ranking.topk` uses it.

The classes are given by f_t limits stored beside the table (a sharded index classifies with
the collection's f_t and N, which its queries use too).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coderiv.errors import CorruptIndexError
from coderiv.index.format.integrity import load_npy
from coderiv.index.format.postings import Postings

#: The files of an index generation (or, prefixed by the shard, of a sharded set's global folder).
NORMS_FILE = "cosine_class_norms.npy"
LIMITS_FILE = "cosine_class_limits.npy"
#: Octaves of f_t/N with a class of their own; terms rarer than N/2^N_CLASSES are read in full.
N_CLASSES = 8
#: Stored values are multiples of 1/SCALE, rounded up.
SCALE = 255


def class_limits(collection_size: int) -> np.ndarray:
    """Ascending f_t limits [N/256, N/128, …, N/2]: a term's class row is
    ``searchsorted(limits, f_t) - 1`` (−1: rarer than every class)."""
    return collection_size / 2.0 ** np.arange(N_CLASSES, 0, -1)


def class_of(limits: np.ndarray, f_t: np.ndarray) -> np.ndarray:
    """Row of the class table for each term of document frequency ``f_t`` (−1: no class)."""
    rows: np.ndarray = np.searchsorted(limits, np.asarray(f_t, np.float64), side="left") - 1
    return rows


def class_norms(
    store: Postings,
    n_docs: int,
    norms: np.ndarray,
    f_t: np.ndarray | None = None,
    collection_size: int | None = None,
    chunk: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(table, limits): ``table[c, d]`` = ceil(255 · ‖d_c‖ / W_d) as uint8, one pass over the
    terms store a key range at a time. ``f_t`` and ``collection_size`` give collection-wide
    statistics when the store holds only a shard, as for :func:`cosine_statistics`."""
    from coderiv.index.builder.cosine_statistics import row_squares  # the build's (and its compiled loops'), not a query's

    size = collection_size or n_docs
    limits = class_limits(size)
    local = np.diff(np.asarray(store.ptr))
    rows = class_of(limits, local if f_t is None else np.asarray(f_t))
    squares = row_squares(store, n_docs, np.where(rows >= 0, rows, N_CLASSES), N_CLASSES + 1, chunk, f_t, collection_size)
    shares = np.sqrt(squares[: N_CLASSES * n_docs].reshape(N_CLASSES, n_docs))
    shares /= np.where(norms > 0, norms, 1.0)
    # one part in 1e9 more before rounding up: rounding in the division never makes it lower
    table = np.minimum(np.ceil(shares * (SCALE * (1 + 1e-9))), SCALE).astype(np.uint8)
    return table, limits


def save_class_norms(folder: Path, table: np.ndarray, limits: np.ndarray, prefix: str = "") -> list[Path]:
    """Write the table and its limits into ``folder`` (names prefixed for a shard's global
    files); returns the paths written."""
    paths = [folder / f"{prefix}{NORMS_FILE}", folder / f"{prefix}{LIMITS_FILE}"]
    np.save(paths[0], table, allow_pickle=False)
    np.save(paths[1], limits, allow_pickle=False)
    return paths


def load_class_norms(folder: Path, prefix: str = "", mmap: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """(table, limits) saved by :func:`save_class_norms`, or None when the index predates them
    (cosine top-k then prunes with the per-term bounds alone)."""
    paths = [folder / f"{prefix}{NORMS_FILE}", folder / f"{prefix}{LIMITS_FILE}"]
    if not paths[0].exists() or not paths[1].exists():
        return None
    try:
        table = load_npy(paths[0], mmap)
        limits = load_npy(paths[1], mmap=False)
    except (OSError, ValueError, EOFError) as exc:
        raise CorruptIndexError(f"index file {paths[0]} is damaged ({exc}); rebuild the index") from exc
    if table.dtype != np.uint8 or table.ndim != 2 or table.shape[0] != len(limits):
        raise CorruptIndexError(f"index file {paths[0]} has an unexpected shape {table.shape}; rebuild the index")
    return table, limits
