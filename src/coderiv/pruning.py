"""Exact top-k by MaxScore-style pruning: the same answer as the full pass, less work.

Every measure's term part has an upper bound per query term (``Measure.bound``; for the identity
measures the term's weight, since 1/(1 + |f_dt − f_qt|) ≤ 1) and its document part one over all
documents (``Measure.doc_bound``; L(q,d) ≤ 1). Terms are taken by decreasing bound, which for
idf-like weights means rarest (shortest postings) first. Once the bounds of the terms not yet
read, times the document bound, fall below θ — the k-th best score already certain — no unseen
document can enter the top k. The remaining long postings are then only probed, by binary
search, for the surviving candidates, which are dropped as soon as their exact document factor
times (partial score + remaining bounds) falls below θ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .scoring import Measure

if TYPE_CHECKING:
    from .index import Index
    from .query import PreparedQuery

#: Relative slack so that floating-point rounding never prunes a document tied with the k-th.
_SLACK = 1e-9


def _kth_largest(values: np.ndarray, k: int | None) -> float:
    if k is None or len(values) < k:
        return 0.0
    return float(np.partition(values, len(values) - k)[len(values) - k])


def pruned_top_k(
    index: Index, prepared: PreparedQuery, measure: Measure, k: int | None, floor: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Document numbers and raw scores of the exact top k (ties by document number) among the
    documents scoring at least ``floor`` (``k=None``: all of them).

    A floor — "everything above 10%" — is the strongest pruning there is: θ starts at it.
    """
    from .query import all_scores, term_contributions, top_k

    n = index.n_docs
    store = index.terms
    if measure.doc_bound is None or len(prepared.positions) == 0 or (k is None and floor <= 0):
        scores = all_scores(index, prepared, measure)
        scores[scores < floor] = 0.0
        ranked = top_k(scores, k)
        return ranked, scores[ranked]

    f_t = prepared.f_t.astype(np.float64)
    f_qt = prepared.f_qt.astype(np.float64)
    maxvals = np.asarray(store.maxvals[prepared.positions], np.float64)
    bounds = measure.bound(f_qt, f_t, float(n), maxvals) * measure.doc_bound
    order = np.argsort(-bounds, kind="stable")
    tail = np.concatenate((np.cumsum(bounds[order][::-1])[::-1], [0.0]))  # tail[i] = Σ bounds[order[i:]]
    lengths = np.asarray(index.doc_lengths, np.float64)
    norms = np.asarray(index.doc_norms)
    f_q = float(prepared.f_q)

    partial = np.zeros(n)
    touched = np.zeros(n, bool)
    theta = floor
    done = 0
    step = 4
    # Phase 1: read whole postings, rarest first, until unseen documents cannot reach θ.
    while done < len(order):
        batch = order[done : done + step]
        docs, contributions = term_contributions(index, prepared, measure, batch)
        partial += np.bincount(docs, weights=contributions, minlength=n)
        touched[docs] = True
        done += len(batch)
        step *= 2
        seen = np.flatnonzero(touched)
        lower = partial[seen] * measure.doc(lengths[seen], f_q, norms[seen])
        theta = max(floor, _kth_largest(lower, k))
        if tail[done] < theta * (1 - _SLACK):
            break

    candidates = np.flatnonzero(touched)
    factor = measure.doc(lengths[candidates], f_q, norms[candidates])
    # Phase 2: probe the remaining (long, low-weight) postings for the surviving candidates.
    for i in range(done, len(order)):
        keep = factor * (partial[candidates] + tail[i]) >= theta * (1 - _SLACK)
        candidates, factor = candidates[keep], factor[keep]
        pos = prepared.positions[order[i]]
        lo, hi = int(store.ptr[pos]), int(store.ptr[pos + 1])
        docs = store.docs[lo:hi]
        at = np.searchsorted(docs, candidates)
        hit = at < len(docs)
        hit[hit] = docs[at[hit]] == candidates[hit]
        if hit.any():
            found = candidates[hit]
            term = order[i]
            vals = np.asarray(store.vals[lo:hi][at[hit]], np.float64)
            partial[found] += measure.term(vals, np.full(len(found), f_qt[term]), np.full(len(found), f_t[term]), float(n))
            theta = max(theta, _kth_largest(partial[candidates] * factor, k))
    scores = np.zeros(n)
    scores[candidates] = partial[candidates] * factor
    scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]
