"""The one scoring kernel every term-based searcher shares (SPEC §3).

A query is prepared once (its terms looked up: positions, f_qt, f_t, f_q). Scoring gathers the
postings of its terms, evaluates the measure's term part on each posting, sums per document
(``np.bincount``) and applies the document part once per document. The full ranking pass
(:func:`all_scores`), exact top-k (:mod:`coderiv.ranking.topk`) and passage matching
(:mod:`coderiv.ranking.passage_windows`, over a store of 50-word windows) all go through
:func:`term_contributions` and :func:`document_scores`.

Top-k reads postings, probes documents in them and bounds documents through a passes object
(:func:`passes`): numpy's (:class:`NumpyPasses`), or the compiled loops of
:mod:`coderiv.ranking.compiled_probes` once the process has loaded them
(:class:`CompiledPasses`), which add in the same order: the same scores, bit for bit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from coderiv.index.format.postings import Postings
from coderiv.index.index import Index
from coderiv.keys.kinds import term_keys
from coderiv.ranking import compiled_probes
from coderiv.ranking.measures import Measure


@dataclass
class PreparedQuery:
    """A query's terms present in the collection: their keys (ascending), f_qt, f_t (the
    collection's), f_q, and their positions in the terms store of the index that scores them.

    A query of a sharded index (:mod:`coderiv.ranking.sharded`) has no positions (an empty
    array) until a shard looks its keys up in its own store (:meth:`in_store`), keeping the
    collection's f_t."""

    keys: np.ndarray
    positions: np.ndarray
    f_qt: np.ndarray
    f_t: np.ndarray
    f_q: int
    n_terms: int

    @property
    def length(self) -> int:
        """The query's length after analysis (f_q), as fingerprint queries name it too."""
        return self.f_q

    def in_store(self, store: Postings) -> PreparedQuery:
        """The query as the index of terms store ``store`` scores it: the terms it holds, at
        their positions there, with this query's f_t."""
        pos = store.lookup(self.keys)
        here = pos >= 0
        return PreparedQuery(self.keys[here], pos[here], self.f_qt[here], self.f_t[here], self.f_q, self.n_terms)

    @classmethod
    def from_terms(cls, index: Index, terms: list[str]) -> PreparedQuery:
        counts = Counter(terms)
        keys = np.asarray(term_keys(list(counts)), np.uint64)
        f_qt = np.fromiter(counts.values(), np.int64, len(counts))
        store = index.terms
        pos = store.lookup(keys)
        present = pos >= 0
        positions = pos[present]
        order = np.argsort(positions)
        positions = positions[order]
        return cls(
            keys=keys[present][order],
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




#: A probe (one compiled binary search) costs about this many postings read; set on the 20K and
#: 100K synthetic benchmarks. It changes speed only, never the answer.
_PROBE_VS_SCAN = 16.0
#: The same for the compiled loops (a galloping search against a read of a posting; see
#: docs/performance-history.md, "Measurements once in docstrings").
_COMPILED_PROBE_VS_SCAN = 16.0
#: Cosine takes the full pass at once when rescoring k documents in every term would cost this
#: share of reading every posting (:func:`coderiv.ranking.topk.scans_at_once`): pruning must
#: first read the rare terms (a third of the postings or more on whole-document queries) and
#: probe, so it cannot win by less.
_SCAN_SHARE = 0.5
#: The same with the compiled loops, whose read costs a fraction of numpy's: there the full pass
#: stops losing at about 100K short documents on whole-document queries.
_COMPILED_SCAN_SHARE = 1 / 16
#: From this many documents on, probes loop over terms with compiled searches (a fixed cost per
#: term, less per document) instead of one vectorized binary search over every pair.
_LOOP_FROM = 100


class Passes(Protocol):
    """Reading and probing a query's postings for top-k (:class:`NumpyPasses` or
    :class:`CompiledPasses`)."""

    index: Index
    prepared: PreparedQuery
    measure: Measure

    @property
    def probe_cost(self) -> float: ...

    @property
    def scan_share(self) -> float: ...

    def read(self, terms: np.ndarray, partial: np.ndarray, touched: np.ndarray | None = None) -> None: ...

    def sums(self, terms: np.ndarray) -> np.ndarray: ...

    def probe(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray: ...

    def probe_many(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray: ...

    def above(self, lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray, theta: float, step: int) -> np.ndarray: ...


def _locate(store: Postings, positions: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(term index, document index, posting) of every (key at ``positions[i]``, ``docs[j]``) pair
    that has a posting; ``docs`` ascending. One ``np.searchsorted`` (compiled) per key and run of
    high bits: for the few hundred documents probed in a long list, several times cheaper than the
    vectorized binary search (a numpy pass per step)."""
    key_starts, key_ends = store.pointers(positions)
    store.check_ranges(key_starts, key_ends)  # the searches below read these postings unchecked
    low, run_at, run_high, _ = store.unchecked_arrays()
    cast = run_at.dtype.type
    high_of = docs >> 16
    splits = np.searchsorted(high_of, np.arange(int(high_of[-1]) + 2)) if len(docs) else np.zeros(1, np.int64)
    terms, found, at = [], [], []
    for i, (lo, hi) in enumerate(zip(key_starts.tolist(), key_ends.tolist())):
        first = int(np.searchsorted(run_at, cast(lo), side="right")) - 1
        last = int(np.searchsorted(run_at, cast(hi), side="left"))
        for run in range(first, last):
            high = int(run_high[run])
            if high + 1 >= len(splits):
                continue
            a, b = int(splits[high]), int(splits[high + 1])
            if a == b:
                continue
            start, end = max(int(run_at[run]), lo), min(int(run_at[run + 1]), hi)
            segment = low[start:end]
            wanted = (docs[a:b] & 0xFFFF).astype(segment.dtype)
            where = np.searchsorted(segment, wanted)
            hit = where < len(segment)
            hit[hit] = segment[where[hit]] == wanted[hit]
            index = np.flatnonzero(hit)
            terms.append(np.full(len(index), i))
            found.append(index + a)
            at.append(where[index] + start)
    if not terms:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    return np.concatenate(terms), np.concatenate(found), np.concatenate(at)


class NumpyPasses:
    """Reading, probing and bounding with numpy (no compiled code needed)."""

    @property
    def probe_cost(self) -> float:
        """What a probe costs, in postings read."""
        return _PROBE_VS_SCAN

    @property
    def scan_share(self) -> float:
        """Cosine takes the full pass at once when rescoring k documents would cost this share
        of reading every posting (:func:`coderiv.ranking.topk.scans_at_once`)."""
        return _SCAN_SHARE

    def __init__(self, index: Index, prepared: PreparedQuery, measure: Measure) -> None:
        self.index, self.prepared, self.measure = index, prepared, measure

    def read(self, terms: np.ndarray, partial: np.ndarray, touched: np.ndarray | None = None) -> None:
        """Add the contributions of every posting of query terms ``terms`` to ``partial`` (and
        mark its document in ``touched``)."""
        docs, contributions = term_contributions(self.index, self.prepared, self.measure, terms)
        partial += np.bincount(docs, weights=contributions, minlength=len(partial))
        if touched is not None:
            touched[docs] = True

    def sums(self, terms: np.ndarray) -> np.ndarray:
        """Every document's sum of the contributions of query terms ``terms``, from zero, added
        in the order of the terms (the bits :meth:`read` gives into zeros)."""
        docs, contributions = term_contributions(self.index, self.prepared, self.measure, terms)
        sums: np.ndarray = np.bincount(docs, weights=contributions, minlength=self.index.n_docs)
        return sums

    def probe(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
        """Σ over query terms ``terms`` of each document's contribution (``docs`` ascending; 0
        where a document lacks a term), found by search in their postings."""
        if not len(docs) or not len(terms):
            return np.zeros(len(docs))
        if len(docs) < _LOOP_FROM:  # few documents: one vectorized binary search over every pair beats a loop over terms
            return self.probe_many(docs, terms)
        store, prepared = self.index.terms, self.prepared
        term, doc, at = _locate(store, prepared.positions[terms], np.asarray(docs, np.int64))
        return self._summed(terms[term], doc, at, len(docs))

    def probe_many(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
        """:meth:`probe` for many documents (thousands) in a few terms: numpy's one vectorized
        binary search over every (term, document) pair."""
        store = self.index.terms
        pair_term = np.repeat(np.arange(len(terms)), len(docs))
        at = store.docs.search(*store.pointers(self.prepared.positions[terms]), np.tile(docs, len(terms)), pair_term)
        hit = np.flatnonzero(at >= 0)
        return self._summed(terms[pair_term[hit]], hit % len(docs), at[hit], len(docs))

    def _summed(self, term: np.ndarray, doc: np.ndarray, at: np.ndarray, n_docs: int) -> np.ndarray:
        """Per document (``doc``: indexes among ``n_docs``), the contributions of the postings
        ``at`` of query terms ``term``."""
        if not len(at):
            return np.zeros(n_docs)
        prepared = self.prepared
        f_dt = np.asarray(self.index.terms.vals.take(at), np.float64)
        f_qt, f_t = prepared.f_qt[term].astype(np.float64), prepared.f_t[term].astype(np.float64)
        contributions = self.measure.term(f_dt, f_qt, f_t, float(self.index.n_docs))
        sums: np.ndarray = np.bincount(doc, weights=contributions, minlength=n_docs)
        return sums

    def above(self, lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray, theta: float, step: int) -> np.ndarray:
        """Documents (every ``step``-th) with lower + constant + Σ_c weights[c]·table[c] ≥ θ, one
        class row at a time (no float copy of the whole table)."""
        upper: np.ndarray = lower[::step] + constant
        for c in np.flatnonzero(weights).tolist():
            upper += weights[c] * table[c, ::step]
        return np.flatnonzero(upper >= theta) * step


class CompiledPasses(NumpyPasses):
    """The same passes in compiled loops (:mod:`coderiv.ranking.compiled_probes`), adding in the
    same order as numpy's."""

    @property
    def probe_cost(self) -> float:
        return _COMPILED_PROBE_VS_SCAN

    @property
    def scan_share(self) -> float:
        return _COMPILED_SCAN_SHARE

    def __init__(self, index: Index, prepared: PreparedQuery, measure: Measure) -> None:
        super().__init__(index, prepared, measure)
        store = self.store = index.terms
        starts, ends = store.pointers(prepared.positions)
        self.starts, self.ends = starts.astype(np.int64), ends.astype(np.int64)
        self.table, self.offsets = contribution_table(
            store, prepared.positions, prepared.f_qt, prepared.f_t, index.n_docs, measure, compiled_probes.fill_products
        )
        values = store.vals
        # the loops read postings unchecked: read() and probe() check the blocks of their terms first
        low, run_at, run_high, vals = store.unchecked_arrays()
        run_at = np.asarray(run_at)
        if run_at.dtype.itemsize < 4:  # a small index: the loops' usual type, not a compilation of their own
            run_at = run_at.astype(np.uint32)
        self.arrays = (
            np.asarray(low), run_at, np.asarray(run_high), np.asarray(vals),
            np.asarray(values.over_at, np.int64), np.asarray(values.over_val, np.int64),
        )

    def read(self, terms: np.ndarray, partial: np.ndarray, touched: np.ndarray | None = None) -> None:
        # summed apart, then added, in the order of numpy's bincount: the same bits as numpy's
        # passes, so that a score never depends on whether this process loaded the loops
        partial += self._accumulated(terms, len(partial), np.zeros(0, bool) if touched is None else touched)

    def sums(self, terms: np.ndarray) -> np.ndarray:
        return self._accumulated(terms, self.index.n_docs, np.zeros(0, bool))

    def _accumulated(self, terms: np.ndarray, n_docs: int, touched: np.ndarray) -> np.ndarray:
        sums = np.zeros(n_docs)
        self.store.check_ranges(self.starts[terms], self.ends[terms])
        compiled_probes.accumulate(*self.arrays, self.starts[terms], self.ends[terms], self.offsets[terms], self.table, sums, touched)
        return sums

    def probe(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
        sums = np.zeros(len(docs))
        if len(docs) and len(terms):
            self.store.check_ranges(self.starts[terms], self.ends[terms])  # the probes' searches may touch any of them
            compiled_probes.probe(
                *self.arrays, self.starts[terms], self.ends[terms], self.offsets[terms], self.table, np.asarray(docs, np.int64), sums
            )
        return sums

    def probe_many(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
        return self.probe(docs, terms)

    def above(self, lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray, theta: float, step: int) -> np.ndarray:
        return compiled_probes.above(lower, constant, np.asarray(table), weights, theta, step)


def passes(index: Index, prepared: PreparedQuery, measure: Measure) -> NumpyPasses:
    """The compiled passes once they are loaded (see :func:`compiled_probes.note_numpy_work`),
    else numpy's."""
    if compiled_probes.loaded():
        return CompiledPasses(index, prepared, measure)
    return NumpyPasses(index, prepared, measure)
