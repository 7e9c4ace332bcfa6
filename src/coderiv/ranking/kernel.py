"""The one scoring kernel every term-based searcher shares (SPEC §3).

A query is prepared once (its terms looked up: positions, f_qt, f_t, f_q). Scoring gathers the
postings of its terms, evaluates the measure's term part on each posting, sums per document
(``np.bincount``) and applies the document part once per document. The full ranking pass
(:func:`all_scores`), exact top-k pruning (:mod:`coderiv.ranking.pruning`) and passage matching
(:mod:`coderiv.ranking.passage_windows`, over a store of 50-word windows) all go through
:func:`term_contributions` and :func:`document_scores`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from coderiv.index.format.postings import Postings
from coderiv.index.index import Index
from coderiv.keys.kinds import term_keys
from coderiv.ranking.measures import Measure


@dataclass
class PreparedQuery:
    """A query's terms looked up in the index: positions, f_qt, f_t and f_q."""

    positions: np.ndarray  # positions in the terms store of query terms present in the collection
    f_qt: np.ndarray
    f_t: np.ndarray
    f_q: int
    n_terms: int

    @property
    def length(self) -> int:
        """The query's length after analysis (f_q), as fingerprint queries name it too."""
        return self.f_q

    @classmethod
    def from_terms(cls, index: Index, terms: list[str]) -> PreparedQuery:
        counts = Counter(terms)
        keys = term_keys(list(counts))
        f_qt = np.fromiter(counts.values(), np.int64, len(counts))
        store = index.terms
        pos = store.lookup(keys)
        present = pos >= 0
        positions = pos[present]
        order = np.argsort(positions)
        positions = positions[order]
        return cls(
            positions=positions,
            f_qt=f_qt[present][order],
            f_t=store.doc_freqs_at(positions),
            f_q=len(terms),
            n_terms=len(counts),
        )


def term_contributions(index: Index, prepared: PreparedQuery, measure: Measure, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(docs, contributions) of the postings of query terms ``which`` (indexes into prepared)."""
    positions = prepared.positions[which]
    return store_contributions(index.terms, positions, prepared.f_qt[which], prepared.f_t[which], index.n_docs, measure)


def store_contributions(
    store: Postings, positions: np.ndarray, f_qt: np.ndarray, f_t: np.ndarray, n_docs: int, measure: Measure
) -> tuple[np.ndarray, np.ndarray]:
    """(docs, contributions) of the postings at ``positions`` of ``store``, for query terms with
    counts ``f_qt`` and document frequencies ``f_t`` among ``n_docs`` documents.

    A term's contribution depends only on its f_dt, a small integer, so the measure's term part
    is evaluated once per (term, possible f_dt) into a table, and each posting just looks its
    value up: one table lookup per posting instead of several float passes.
    """
    docs, vals, lengths = store.slices(positions)
    table, offsets = contribution_table(store, positions, f_qt, f_t, n_docs, measure)
    return docs, table[np.repeat(offsets, lengths) + vals]


#: Fills a product measure's table: ``table[offsets[i] + v] = (per_count[v] · weight[i]) ·
#: query[i]`` for v < widths[i] (:func:`fill_products`, or its compiled twin).
ProductFill = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


def contribution_table(
    store: Postings, positions: np.ndarray, f_qt: np.ndarray, f_t: np.ndarray, n_docs: int, measure: Measure,
    fill: ProductFill | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(table, offsets): the term part of query term i with a document's count f_dt is
    ``table[offsets[i] + f_dt]``, for every f_dt up to the key's largest (``maxvals``; the entry
    of f_dt = 0, never read, holds the value at 1).

    A measure whose term part is a product (``Measure.product_parts``: cosine) has its parts evaluated
    once per count and once per term, and the entries multiplied out by ``fill`` (numpy's
    :func:`fill_products` unless a compiled one is given); any other is evaluated entry by entry.
    The bits are the term part's either way.
    """
    widths = store.maxvals_at(positions).astype(np.int64) + 1
    ends = np.cumsum(widths)
    offsets: np.ndarray = ends - widths
    if not len(widths):
        return np.zeros(0), offsets
    f_qt, f_t = np.asarray(f_qt, np.float64), np.asarray(f_t, np.float64)
    product = measure.product_parts()
    if product is not None:
        count, weight, query = product
        per_count = np.asarray(count(np.maximum(np.arange(int(widths.max()), dtype=np.float64), 1.0)), np.float64)
        table = np.empty(int(ends[-1]))
        weights = np.asarray(weight(f_t, float(n_docs)), np.float64)
        (fill or fill_products)(per_count, weights, np.asarray(query(f_qt, f_t, float(n_docs)), np.float64), offsets, widths, table)
        return table, offsets
    row = _rows(ends)
    f_dt = np.arange(len(row), dtype=np.float64) - offsets.astype(np.float64)[row]
    f_dt[offsets] = 1.0  # f_dt = 0 is never read: the value at 1 keeps every formula finite
    table = measure.term(f_dt, f_qt[row], f_t[row], float(n_docs))
    return table, offsets


def _rows(ends: np.ndarray) -> np.ndarray:
    """The row of every entry of rows ending at ``ends`` (ascending, each row non-empty), by a
    cumulative sum of the rows' starts: an ``np.repeat`` with per-row counts costs twice as much
    at a thesis-length query's ~20,000 entries."""
    row = np.zeros(int(ends[-1]), np.intp)
    row[ends[:-1]] = 1
    np.cumsum(row, out=row)
    return row


def fill_products(
    per_count: np.ndarray, weight: np.ndarray, query: np.ndarray, offsets: np.ndarray, widths: np.ndarray, table: np.ndarray
) -> None:
    """table[offsets[i] + v] = (per_count[v] · weight[i]) · query[i] for every v < widths[i]."""
    row = _rows(offsets + widths)
    table[:] = (per_count[np.arange(len(row)) - offsets[row]] * weight[row]) * query[row]


def all_scores(index: Index, prepared: PreparedQuery, measure: Measure) -> np.ndarray:
    """S(q,d) for every document (zeros where no term is shared): the full vectorized pass."""
    n = index.n_docs
    if len(prepared.positions) == 0:
        return np.zeros(n)
    docs, contributions = term_contributions(index, prepared, measure, np.arange(len(prepared.positions)))
    return document_scores(measure, docs, contributions, prepared.f_q, index.doc_lengths, index.doc_norms)


def document_scores(
    measure: Measure, docs: np.ndarray, contributions: np.ndarray, f_q: int, lengths: np.ndarray, norms: np.ndarray
) -> np.ndarray:
    """S(q,d) for every document: the contributions summed per document, times the document part
    (zeros where nothing is shared). ``lengths`` and ``norms`` are every document's f_d and W_d."""
    n = len(lengths)
    sums = np.bincount(docs, weights=contributions, minlength=n)
    touched = np.flatnonzero(sums)
    scores = np.zeros(n)
    f_d = np.asarray(lengths, np.float64)[touched]
    scores[touched] = sums[touched] * measure.doc(f_d, float(f_q), np.asarray(norms)[touched])
    return scores


def _near_kth(scores: np.ndarray, positive: np.ndarray, k: int | None) -> np.ndarray | None:
    """The positive scores that may tie with the k-th best (within 1e-11 of the best below it:
    a 12-digit key rounds by at most 1e-12 of the best), or None to take every positive score
    (no k, at most k of them, fewer than a quarter of the scores, or one not finite). At 100K
    documents, where nearly every document shares a term with a whole-document query, keys for
    all of them cost a ninth of the query's CPU (and the page faults of three temporaries the
    size of the collection); with few positive scores (pruning's candidates) taking them all is
    cheaper than a partition of every score."""
    n = len(scores)
    if k is None or not 0 < k < n:
        return None
    count = int(np.count_nonzero(positive))
    if count <= k or count * 4 < n:
        return None
    top = scores.max()  # (NaN if any is)
    if not (np.isfinite(top) and top > 0):
        return None
    kth_value = np.partition(scores, n - k)[n - k]
    cut = kth_value - top * 1e-11
    if not cut > 0:
        return None
    near: np.ndarray = np.flatnonzero(scores >= cut)
    return near


def top_k(scores: np.ndarray, k: int | None) -> np.ndarray:
    """Document numbers of the k best scores, ties broken by document id (= number) ascending.

    Scores equal to 12 significant digits count as tied: summing the same contributions in
    another order (pruned or full pass, another machine) must not reorder equal documents.
    """
    positive = scores > 0
    candidates = _near_kth(scores, positive, k)
    if candidates is None:
        candidates = np.flatnonzero(positive)
    if not len(candidates):
        return candidates
    values = scores[candidates]
    key = np.round(values / values.max() * 1e12)
    if k is not None and len(candidates) > k:
        # keep everything tied with the k-th best so that the tie-break is by id, not by chance
        kth = np.partition(key, len(key) - k)[len(key) - k]
        keep = key >= kth
        candidates, key = candidates[keep], key[keep]
    ranked = candidates[np.lexsort((candidates, -key))]
    return ranked if k is None else ranked[:k]


