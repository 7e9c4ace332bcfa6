"""Exact top-k by MaxScore-style pruning: the same answer as the full pass, less work.

(Cosine, on an index with per-document norm classes, takes
:func:`coderiv.ranking.cosine_pruning.norm_class_top_k` instead: bounds per document by
Cauchy–Schwarz, see docs/measures.md "Exact top-k", and the full pass's scores to the bit. Both read, probe and
bound through a passes object: numpy's, or the compiled loops of
:mod:`coderiv.ranking.compiled_probes` once the process has loaded them — the same scores, bit
for bit.)

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

import time

import numpy as np

from coderiv.index.format.postings import Postings
from coderiv.index.index import Index
from coderiv.ranking import compiled_probes
from coderiv.ranking.cosine_pruning import document_factor, full_pass_top_k, norm_class_top_k, scans_at_once
from coderiv.ranking.kernel import PreparedQuery, all_scores, contribution_table, term_contributions, top_k
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
    if not len(prepared.positions) or (k is None and floor <= 0):
        return _full_pass(index, prepared, measure, k, floor)
    classes = getattr(index, "cosine_classes", None)
    passes = _passes(index, prepared, measure)
    start = time.process_time()
    if measure.norm_classes and classes is not None and scans_at_once(k, floor, prepared.f_t, passes.scan_share):
        found = full_pass_top_k(passes, document_factor(passes), k, floor)  # (no bounds needed)
    else:
        maxvals = index.terms.maxvals_at(prepared.positions).astype(np.float64)
        max_unit = np.asarray(index.term_max_unit[prepared.positions], np.float64)
        f_t, f_qt = prepared.f_t.astype(np.float64), prepared.f_qt.astype(np.float64)
        bounds = measure.final_bound(f_qt, f_t, float(n), maxvals, max_unit)
        if bounds is None:
            return _full_pass(index, prepared, measure, k, floor)
        if measure.norm_classes and classes is not None:
            found = norm_class_top_k(passes, k, floor, bounds, classes)
        else:
            found = _term_bound_top_k(passes, k, floor, bounds)
    if not isinstance(passes, _CompiledPasses):
        compiled_probes.note_numpy_work(time.process_time() - start)
    return found


def _full_pass(index: Index, prepared: PreparedQuery, measure: Measure, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The top k above ``floor`` by numpy's full pass (:func:`coderiv.ranking.kernel.all_scores`)."""
    scores = all_scores(index, prepared, measure)
    scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]


def _term_bound_top_k(passes: _NumpyPasses, k: int | None, floor: float, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact top k by per-term bounds (the module's docstring)."""
    index, prepared, measure = passes.index, passes.prepared, passes.measure
    n = index.n_docs
    store = index.terms
    f_t = prepared.f_t.astype(np.float64)
    f_qt = prepared.f_qt.astype(np.float64)
    maxvals = store.maxvals_at(prepared.positions).astype(np.float64)
    # A candidate's bound is the smaller of its exact document factor × (partial + the term
    # parts' bounds) and partial × factor + the whole contributions' bounds.
    term_bounds = measure.bound(f_qt, f_t, float(n), maxvals)
    order = np.argsort(-bounds, kind="stable")
    tail = np.concatenate((np.cumsum(bounds[order][::-1])[::-1], [0.0]))  # tail[i] = Σ bounds[order[i:]]
    term_tail = np.concatenate((np.cumsum(term_bounds[order][::-1])[::-1], [0.0]))
    # every document's factor once (a document's bound needs it each round)
    factors = measure.doc(np.asarray(index.doc_lengths, np.float64), float(prepared.f_q), np.asarray(index.doc_norms))

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
        passes.read(batch, partial, touched)
        done += len(batch)
        budget *= 2
        # the k-th best certain score (untouched documents: 0, which changes no k-th best ≥ 0)
        theta = max(floor, _kth_largest(partial * factors, k))

    candidates = np.flatnonzero(touched)
    factor = factors[candidates]
    # Phase 2: probe the remaining (long, low-weight) postings for the surviving candidates, a
    # group of terms at a time (numpy: one vectorized binary search over every pair).
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
        postings = int(prepared.f_t[terms].sum())
        searches = len(candidates) * len(terms) * max(1, int(np.log2(max(postings / len(terms), 2))))
        if searches > _SEARCH_VS_SCAN * postings:
            # loose bounds left many candidates: streaming these postings is cheaper than probing
            passes.read(terms, partial)
        else:
            partial[candidates] += passes.probe_many(candidates, terms)
        theta = max(theta, _kth_largest(partial[candidates] * factor, k))
    scores = np.zeros(n)
    scores[candidates] = partial[candidates] * factor
    scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]


#: A probe (one compiled binary search) costs about this many postings read; set on the 20K and
#: 100K synthetic benchmarks. It changes speed only, never the answer.
_PROBE_VS_SCAN = 16.0
#: The same for the compiled loops (:mod:`coderiv.ranking.compiled_probes`): a galloping search
#: against a read of ~1.6 ns a posting when it was set (the read now takes ~0.6 ns on long
#: documents, so a probe costs relatively more; not measured again).
_COMPILED_PROBE_VS_SCAN = 16.0
#: Cosine takes the full pass at once when rescoring k documents in every term would cost this
#: share of reading every posting: pruning must first read the rare terms (a third of the
#: postings or more on whole-document queries) and probe, so it cannot win by less. numpy's
#: full pass costs ~10 ns a posting: at 100K synthetic documents pruning a whole-document top 20
#: took 35 ms of CPU a query against 65 ms for the full pass (26 Nov 2026).
_SCAN_SHARE = 0.5
#: The same with the compiled loops, whose read takes ~0.6 ns a posting: there the full pass
#: stopped losing at 100K synthetic documents, where rescoring a whole-document query's top 20
#: would cost 1/13–1/6.5 of its read: 8.0–8.3 ms of CPU a query against 9.6–10.7 ms pruned (top
#: 10: 7.8–8.1 against 8.2–8.4; at 20K 1.19–1.23 against 1.31; runs A B A B, 26 Nov 2026).
_COMPILED_SCAN_SHARE = 1 / 16
#: From this many documents on, probes loop over terms with compiled searches (a fixed cost per
#: term, less per document) instead of one vectorized binary search over every pair.
_LOOP_FROM = 100


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


def _probe_sums(index: Index, prepared: PreparedQuery, measure: Measure, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Σ over query terms ``terms`` of each document's contribution (``docs`` ascending), found
    by search in their postings (0 where a document lacks a term)."""
    store, n = index.terms, float(index.n_docs)
    if not len(docs) or not len(terms):
        return np.zeros(len(docs))
    positions = prepared.positions[terms]
    if len(docs) >= _LOOP_FROM:
        term, doc, at = _locate(store, positions, np.asarray(docs, np.int64))
    else:  # few documents: one vectorized binary search over every pair beats a loop over terms
        pair_term = np.repeat(np.arange(len(terms)), len(docs))
        found = store.docs.search(*store.pointers(positions), np.tile(docs, len(terms)), pair_term)
        hit = np.flatnonzero(found >= 0)
        term, doc, at = pair_term[hit], hit % len(docs), found[hit]
    term = terms[term]
    f_dt = np.asarray(store.vals.take(at), np.float64)
    contributions = measure.term(f_dt, prepared.f_qt[term].astype(np.float64), prepared.f_t[term].astype(np.float64), n)
    sums: np.ndarray = np.bincount(doc, weights=contributions, minlength=len(docs))
    return sums


class _NumpyPasses:
    """Reading, probing and bounding with numpy (no compiled code needed)."""

    @property
    def probe_cost(self) -> float:
        """What a probe costs, in postings read."""
        return _PROBE_VS_SCAN

    @property
    def scan_share(self) -> float:
        """Cosine takes the full pass at once when rescoring k documents would cost this share
        of reading every posting (:func:`coderiv.ranking.cosine_pruning.scans_at_once`)."""
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
        """Σ over query terms ``terms`` of each document's contribution (``docs`` ascending)."""
        return _probe_sums(self.index, self.prepared, self.measure, docs, terms)

    def probe_many(self, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
        """:meth:`probe` for many documents (thousands) in a few terms: numpy's one vectorized
        binary search over every (term, document) pair."""
        store, prepared = self.index.terms, self.prepared
        positions = prepared.positions[terms]
        pair_term = np.repeat(np.arange(len(terms)), len(docs))
        at = store.docs.search(*store.pointers(positions), np.tile(docs, len(terms)), pair_term)
        hit = np.flatnonzero(at >= 0)
        if not len(hit):
            return np.zeros(len(docs))
        term = terms[pair_term[hit]]
        f_dt = np.asarray(store.vals.take(at[hit]), np.float64)
        f_qt, f_t = prepared.f_qt[term].astype(np.float64), prepared.f_t[term].astype(np.float64)
        contributions = self.measure.term(f_dt, f_qt, f_t, float(self.index.n_docs))
        sums: np.ndarray = np.bincount(hit % len(docs), weights=contributions, minlength=len(docs))
        return sums

    def above(self, lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray, theta: float, step: int) -> np.ndarray:
        """Documents (every ``step``-th) with lower + constant + Σ_c weights[c]·table[c] ≥ θ."""
        upper = _document_bounds(slice(0, len(lower), step), lower, constant, table, weights)
        return np.flatnonzero(upper >= theta) * step


class _CompiledPasses(_NumpyPasses):
    """The same passes in compiled loops (:mod:`coderiv.ranking.compiled_probes`)."""

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
        sums = np.zeros(len(partial))
        mark = np.zeros(0, bool) if touched is None else touched
        self.store.check_ranges(self.starts[terms], self.ends[terms])
        compiled_probes.accumulate(*self.arrays, self.starts[terms], self.ends[terms], self.offsets[terms], self.table, sums, mark)
        partial += sums

    def sums(self, terms: np.ndarray) -> np.ndarray:
        sums = np.zeros(self.index.n_docs)
        self.store.check_ranges(self.starts[terms], self.ends[terms])
        compiled_probes.accumulate(
            *self.arrays, self.starts[terms], self.ends[terms], self.offsets[terms], self.table, sums, np.zeros(0, bool)
        )
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


def _passes(index: Index, prepared: PreparedQuery, measure: Measure) -> _NumpyPasses:
    """The compiled passes once they are loaded (see :func:`compiled_probes.note_numpy_work`),
    else numpy's."""
    if compiled_probes.loaded():
        return _CompiledPasses(index, prepared, measure)
    return _NumpyPasses(index, prepared, measure)


def _document_bounds(docs: slice, lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """lower + constant + Σ_c weights[c] · table[c] for ``docs``, one class row at a time (no
    float copy of the whole table)."""
    upper: np.ndarray = lower[docs] + constant
    for c in np.flatnonzero(weights).tolist():
        upper += weights[c] * table[c, docs]
    return upper
