"""Exact top-k by MaxScore-style pruning: the same answer as the full pass, less work.

Every query term's contribution to any document's final score has an upper bound
(``Measure.final_bound``: for the identity measures the term's weight, since
1/(1 + |f_dt − f_qt|) ≤ 1 and L(q,d) ≤ 1; for cosine x_qt · max_d x_dt/W_d, stored per term at
build time). Terms are taken by decreasing bound, which for idf-like weights means rarest
(shortest postings) first. Once the bounds of the terms not yet read fall below θ — the k-th
best score already certain — no unseen document can enter the top k. The remaining long postings are then only probed, by binary
search, for the surviving candidates, which are dropped as soon as their exact document factor
times (partial score + remaining bounds) falls below θ.
"""

from __future__ import annotations

import numpy as np

from coderiv.index.index import Index
from coderiv.ranking.kernel import PreparedQuery, all_scores, term_contributions, top_k
from coderiv.ranking.measures import Measure

#: Relative slack so that floating-point rounding never prunes a document tied with the k-th.
_SLACK = 1e-9
#: At most this many (term, candidate) pairs are binary-searched at once (bounds memory).
_PAIR_BUDGET = 2_000_000
#: Probe while (candidates × terms × binary-search steps) ≤ this × the postings a scan would read;
#: a rough cost ratio set on the 100K synthetic benchmark (a probe step is a random access and
#: several numpy passes, a scan one sequential pass). It changes speed only, never the answer.
_SEARCH_VS_SCAN = 0.25


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
    n = index.n_docs
    store = index.terms
    f_t = prepared.f_t.astype(np.float64)
    f_qt = prepared.f_qt.astype(np.float64)
    maxvals = np.asarray(store.maxvals[prepared.positions], np.float64)
    max_unit = np.asarray(index.term_max_unit[prepared.positions], np.float64)
    bounds = measure.final_bound(f_qt, f_t, float(n), maxvals, max_unit) if len(prepared.positions) else None
    if bounds is None or (k is None and floor <= 0):
        scores = all_scores(index, prepared, measure)
        scores[scores < floor] = 0.0
        ranked = top_k(scores, k)
        return ranked, scores[ranked]

    # A candidate's bound is the smaller of its exact document factor × (partial + the term
    # parts' bounds) and partial × factor + the whole contributions' bounds.
    term_bounds = measure.bound(f_qt, f_t, float(n), maxvals)
    order = np.argsort(-bounds, kind="stable")
    tail = np.concatenate((np.cumsum(bounds[order][::-1])[::-1], [0.0]))  # tail[i] = Σ bounds[order[i:]]
    term_tail = np.concatenate((np.cumsum(term_bounds[order][::-1])[::-1], [0.0]))
    lengths = np.asarray(index.doc_lengths, np.float64)
    norms = np.asarray(index.doc_norms)
    f_q = float(prepared.f_q)

    partial = np.zeros(n)
    touched = np.zeros(n, bool)
    theta = floor
    done = 0
    lengths_read = np.concatenate(([0], np.cumsum(f_t[order])))  # postings read after i terms
    budget = 50_000.0
    # Phase 1: read whole postings, rarest first, until unseen documents cannot reach θ. Each
    # round reads the terms the current θ still requires, at most ``budget`` postings of them.
    while done < len(order):
        needed = int(np.argmax(tail < theta * (1 - _SLACK))) if tail[-1] < theta * (1 - _SLACK) else len(order)
        if needed <= done:
            break
        end = int(np.searchsorted(lengths_read, lengths_read[done] + budget, side="right")) - 1
        batch = order[done : min(needed, max(end, done + 1))]
        docs, contributions = term_contributions(index, prepared, measure, batch)
        partial += np.bincount(docs, weights=contributions, minlength=n)
        touched[docs] = True
        done += len(batch)
        budget *= 2
        seen = np.flatnonzero(touched)
        lower = partial[seen] * measure.doc(lengths[seen], f_q, norms[seen])
        theta = max(floor, _kth_largest(lower, k))

    candidates = np.flatnonzero(touched)
    factor = measure.doc(lengths[candidates], f_q, norms[candidates])
    # Phase 2: probe the remaining (long, low-weight) postings for the surviving candidates, a
    # group of terms at a time, with one vectorized binary search over every (term, candidate).
    ptr, all_vals = np.asarray(store.ptr), store.vals
    i, group = done, 4
    while i < len(order) and len(candidates):
        upper = np.minimum(factor * (partial[candidates] + term_tail[i]), factor * partial[candidates] + tail[i])
        keep = upper >= theta * (1 - _SLACK)
        candidates, factor = candidates[keep], factor[keep]
        terms = order[i : i + max(1, min(group, _PAIR_BUDGET // len(candidates)))] if len(candidates) else order[i:i]
        if not len(terms):
            break
        i += len(terms)
        group *= 2
        positions = prepared.positions[terms]
        postings = int((ptr[positions + 1] - ptr[positions]).sum())
        searches = len(candidates) * len(terms) * max(1, int(np.log2(max(postings / len(terms), 2))))
        if searches > _SEARCH_VS_SCAN * postings:
            # loose bounds left many candidates: streaming these postings is cheaper than probing
            docs, contributions = term_contributions(index, prepared, measure, terms)
            partial += np.bincount(docs, weights=contributions, minlength=n)
        else:
            pair_term = np.repeat(np.arange(len(terms)), len(candidates))
            pair_doc = np.tile(candidates, len(terms))
            at = store.docs.search(ptr[positions], ptr[positions + 1], pair_doc, pair_term)
            hit = np.flatnonzero(at >= 0)
            if not len(hit):
                continue
            term = terms[pair_term[hit]]
            contributions = measure.term(np.asarray(all_vals.take(at[hit]), np.float64), f_qt[term], f_t[term], float(n))
            local = np.tile(np.arange(len(candidates)), len(terms))[hit]
            partial[candidates] += np.bincount(local, weights=contributions, minlength=len(candidates))
        theta = max(theta, _kth_largest(partial[candidates] * factor, k))
    scores = np.zeros(n)
    scores[candidates] = partial[candidates] * factor
    scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]
