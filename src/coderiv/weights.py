"""Term weights of the cosine measure (Hoad & Zobel 2003, JASIST 54(3), after Salton's tf·idf):
the pure formulas that both the index writer (which stores W_d per document) and the ranking
measures use. They sit at the bottom layer so that storage can precompute them without knowing
about measures.

- w_t = ln(1 + N / f_t), the inverse document frequency of term t among N documents;
- 1 + ln f, the damped term frequency of a term occurring f ≥ 1 times;
- x_{y,t} = (1 + ln f_{y,t}) · w_t, the component of document (or query) y on term t;
- W_y = sqrt(Σ_t x_{y,t}²), its Euclidean length.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

Array = np.ndarray


def idf_weight(f_t: Array, n_docs: float) -> Array:
    """w_t = ln(1 + N / f_t)."""
    return np.log1p(n_docs / f_t)


def tf_weight(f: Array) -> Array:
    """1 + ln f (f ≥ 1)."""
    return np.asarray(1.0 + np.log(f))


def cosine_weight(f: Array, f_t: Array, n_docs: float) -> Array:
    """x_{y,t} = (1 + ln f_{y,t}) · w_t, the cosine measure's component."""
    return np.asarray(tf_weight(f) * idf_weight(f_t, n_docs))


def document_norms(components: Iterable[tuple[Array, Array]], n_docs: int) -> Array:
    """W_d = sqrt(Σ_t x_dt²) for documents 0 … n_docs−1, from pieces ``(docs, x_dt)`` of the
    postings (one piece, or consecutive key ranges of a large index: the squares add up)."""
    squares = np.zeros(n_docs)
    for docs, x in components:
        squares += np.bincount(np.asarray(docs, np.int64), weights=x * x, minlength=n_docs)
    return np.sqrt(squares)


def posting_norms(docs: Array, f_dt: Array, f_t: Array, n_docs: int) -> Array:
    """W_d from postings given as parallel arrays (document, f_dt, f_t of the posting's term)."""
    x = cosine_weight(np.asarray(f_dt, np.float64), np.asarray(f_t, np.float64), n_docs)
    return document_norms([(docs, x)], n_docs)
