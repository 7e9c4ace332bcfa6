"""Exact top-k: the same documents and scores as the full pass, with less work.

Every query term's contribution to any document's final score has an upper bound
(``Measure.final_bound``: for the identity measures the term's weight, since
1/(1 + |f_dt − f_qt|) ≤ 1 and L(q,d) ≤ 1; for cosine x_qt · max_d x_dt/W_d, stored per term at
build time). Terms are read by decreasing bound — for idf-like weights, rarest (shortest
postings) first, Turtle & Flood's MaxScore order (1995) — and once the bounds of the terms not
read yet fall below θ, the k-th best score already certain, no unseen document can enter the top
k: the remaining postings are only probed for the surviving candidates. The bound strategy is
chosen by the measure's norm class (:attr:`Measure.norm_classes`):

- **per term** (:func:`_term_bound_top_k`, the identity measures): candidates are dropped as soon
  as their exact document factor times (partial score + remaining bounds) falls below θ;
- **per document** (:func:`_norm_class_top_k`, cosine on an index with per-document norm classes,
  :mod:`coderiv.index.cosine_bounds`): each document is bounded by Cauchy–Schwarz over the
  classes of the terms not read yet (docs/measures.md "Exact top-k"), as block-max WAND bounds a
  block (Ding & Suel, SIGIR 2011).

**Cosine: the same bits as the full pass.** :func:`coderiv.ranking.kernel.all_scores` adds a
document's contributions term by term in the order of the terms' positions in the store; pruning
reads rarest first, in rounds, and probes, so its sums differ in the last bits. Its answer only
chooses the documents: those that may be in the top k (with a margin far above rounding) are
scored again in the full pass's order and ranked on those scores; when that rescoring would cost
about as much as reading every posting (a thesis-length query, or a floor that keeps many
documents), the query takes one full pass in position order instead.

Reading, probing and bounding go through a passes object (:func:`coderiv.ranking.kernel.passes`:
numpy's, or the compiled loops once the process has loaded them — the same scores, bit for bit).
The constants below change speed only, never the answer; the measurements behind them are in
docs/performance-history.md ("Measurements once in docstrings").
"""

from __future__ import annotations

import time

import numpy as np

from coderiv.index.cosine_bounds import SCALE, class_of
from coderiv.index.index import Index
from coderiv.ranking import compiled_probes
from coderiv.ranking.kernel import CompiledPasses, Passes, PreparedQuery, all_scores, top_k
from coderiv.ranking.kernel import passes as _passes  # (tests force one kind through this name)
from coderiv.ranking.measures import Measure

#: Relative slack so that floating-point rounding never prunes a document tied with the k-th.
SLACK = 1e-9
#: At most this many (term, candidate) pairs are binary-searched at once (bounds memory).
_PAIR_BUDGET = 2_000_000
#: Per-term bounds probe while (candidates × terms × binary-search steps) ≤ this × the postings a
#: scan would read; a rough cost ratio set on the 100K synthetic benchmark (a probe step is a
#: random access and several numpy passes, a scan one sequential pass).
_SEARCH_VS_SCAN = 0.25
#: Cosine: documents whose exact scores are computed each round to raise θ: this many times k of
#: the best partial scores (after the first round's read, their k-th best was within 1.3% of the
#: true θ on whole-document queries of the 100K synthetic collection).
SAMPLE = 2
#: Postings read in the first round (the rounds grow by :data:`GROWTH`).
FIRST_READ = 50_000
#: The postings read each round grow by this factor.
GROWTH = 1.5
#: … and the first round reads at least this share of the query's postings.
FIRST_SHARE = 1 / 8
#: … or every term in at most half the documents, if they hold at most this share.
FIRST_UP_TO = 0.5
#: Documents whose bounds are checked first each round, to skip hopeless full checks.
SPREAD = 4096
#: Rescoring a document in one query term (a search in its postings) costs about this many
#: postings read (a search's steps are dependent, mispredicted loads; a read streams), rounded
#: up since pruning's probes for θ cost as much again; every value from 32 to 512 gave the same
#: time (``benchmarks/bench_rescore_vs_scan.py``).
RESCORE_VS_SCAN = 128.0


def pruned_top_k(
    index: Index, prepared: PreparedQuery, measure: Measure, k: int | None, floor: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Document numbers and raw scores of the exact top k (ties by document number) among the
    documents scoring at least ``floor`` (``k=None``: all of them).

    A floor — "everything above 10%" — is the strongest pruning there is: θ starts at it.
    """
    if not len(prepared.positions) or (k is None and floor <= 0):
        return _full_pass(index, prepared, measure, k, floor)
    classes = index.cosine_classes if measure.norm_classes else None
    reader = _passes(index, prepared, measure)
    start = time.process_time()
    if classes is not None and scans_at_once(k, floor, prepared.f_t, reader.scan_share):
        found = full_pass_top_k(reader, document_factor(reader), k, floor)  # (no bounds needed)
    else:
        maxvals = index.terms.maxvals_at(prepared.positions).astype(np.float64)
        max_unit = np.asarray(index.term_max_unit[prepared.positions], np.float64)
        f_t, f_qt = prepared.f_t.astype(np.float64), prepared.f_qt.astype(np.float64)
        bounds = measure.final_bound(f_qt, f_t, float(index.n_docs), maxvals, max_unit)
        if bounds is None:
            return _full_pass(index, prepared, measure, k, floor)
        if classes is not None:
            found = _norm_class_top_k(reader, k, floor, bounds, classes)
        else:
            found = _term_bound_top_k(reader, k, floor, bounds)
    if not isinstance(reader, CompiledPasses):
        compiled_probes.note_numpy_work(time.process_time() - start)
    return found


def _full_pass(index: Index, prepared: PreparedQuery, measure: Measure, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The top k above ``floor`` by numpy's full pass (:func:`coderiv.ranking.kernel.all_scores`)."""
    return _ranked(all_scores(index, prepared, measure), k, floor)


def _term_bound_top_k(reader: Passes, k: int | None, floor: float, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact top k by per-term bounds (the module's docstring)."""
    index, prepared, measure = reader.index, reader.prepared, reader.measure
    n = index.n_docs
    f_t = prepared.f_t.astype(np.float64)
    f_qt = prepared.f_qt.astype(np.float64)
    maxvals = index.terms.maxvals_at(prepared.positions).astype(np.float64)
    # A candidate's bound is the smaller of its exact document factor × (partial + the term
    # parts' bounds) and partial × factor + the whole contributions' bounds.
    term_bounds = measure.bound(f_qt, f_t, float(n), maxvals)
    order = np.argsort(-bounds, kind="stable")
    tail = np.concatenate((np.cumsum(bounds[order][::-1])[::-1], [0.0]))  # tail[i] = Σ bounds[order[i:]]
    term_tail = np.concatenate((np.cumsum(term_bounds[order][::-1])[::-1], [0.0]))
    factors = document_factor(reader)  # every document's factor once (a bound needs it each round)

    partial = np.zeros(n)
    touched = np.zeros(n, bool)
    theta = floor
    done = 0
    lengths_read = np.concatenate(([0], np.cumsum(f_t[order])))  # postings read after i terms
    budget = 50_000.0
    # Phase 1: read whole postings, rarest first, until unseen documents cannot reach θ. Each
    # round reads the terms the current θ still requires, at most ``budget`` postings of them.
    while done < len(order):
        needed = int(np.argmax(tail < theta * (1 - SLACK))) if tail[-1] < theta * (1 - SLACK) else len(order)
        if needed <= done:
            break
        end = int(np.searchsorted(lengths_read, lengths_read[done] + budget, side="right")) - 1
        batch = order[done : min(needed, max(end, done + 1))]
        reader.read(batch, partial, touched)
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
        keep = upper >= theta * (1 - SLACK)
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
            reader.read(terms, partial)
        else:
            partial[candidates] += reader.probe_many(candidates, terms)
        theta = max(theta, _kth_largest(partial[candidates] * factor, k))
    scores = np.zeros(n)
    scores[candidates] = partial[candidates] * factor
    return _ranked(scores, k, floor)


def _norm_class_top_k(
    reader: Passes, k: int | None, floor: float, bounds: np.ndarray, classes: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top k by per-document bounds (cosine), the full pass's scores bit for bit.

    Terms are read rarest first. After each round every document d has an upper bound,
    partial_d / W_d + Σ_c ‖q_c‖ · ‖d_c‖/W_d over the classes' unread terms (+ the per-term
    bounds of unread terms of no class); θ is the k-th best exact score of a few promising
    documents (probed). Once probing the documents whose bound reaches θ costs less than
    reading the rest, they are probed and the rest of the postings is never read; the few that
    may be in the top k are then rescored in the full pass's order (:func:`_rescored_top_k`).
    """
    index, prepared, measure = reader.index, reader.prepared, reader.measure
    n = index.n_docs
    f_t = prepared.f_t.astype(np.float64)
    factor = document_factor(reader)
    total = float(f_t.sum())
    table, limits = classes
    f_qt = prepared.f_qt.astype(np.float64)
    x_q2 = measure.term(f_qt, f_qt, f_t, float(n))  # x_qt²: the term part with d := q
    row = class_of(limits, f_t)
    order = np.argsort(f_t, kind="stable")  # rarest first
    read_after = np.concatenate(([0], np.cumsum(f_t[order])))  # postings read after i terms
    partial = np.zeros(n)
    theta, done = floor, 0
    # the first round reads every term in at most half the documents when they hold at most half
    # the postings: on whole-document queries of the 100K synthetic collection their bounds then
    # leave 120–470 documents, and the long postings of the terms in more than half are only probed
    sparse = float(read_after[int(np.sum(f_t <= n / 2))])
    budget = max(float(FIRST_READ), read_after[-1] * FIRST_SHARE, sparse if sparse <= read_after[-1] * FIRST_UP_TO else 0.0)
    scored = np.zeros(0, np.int64)  # documents whose exact scores are known …
    exact = np.zeros(0)  # … and those scores
    while True:
        end = int(np.searchsorted(read_after, read_after[done] + budget, side="right")) - 1
        batch = order[done : max(end, done + 1)]
        if len(batch):
            reader.read(batch, partial)
            done += len(batch)
            budget *= GROWTH
        rest = order[done:]
        lower = partial * factor
        if k is not None and len(rest):
            sample = np.setdiff1d(_best(lower, SAMPLE * k), scored)  # sorted
            exact = np.concatenate((exact, (partial[sample] + reader.probe(sample, rest)) * factor[sample]))
            scored = np.concatenate((scored, sample))
            theta = max(theta, _kth_largest(exact, k))
        classed = rest[row[rest] >= 0]
        norms_q = np.sqrt(np.bincount(row[classed], weights=x_q2[classed], minlength=len(table)))
        weights = norms_q / SCALE
        constant = float(bounds[rest[row[rest] < 0]].sum())  # unread terms of no class
        reach = theta * (1 - SLACK)

        # Probing a document costs about ``probe_cost`` postings per unread term. Stop when
        # probing now costs less than the next round's reading (which would shrink the set).
        left = float(read_after[-1] - read_after[done])
        affordable = min(left, budget) / (max(len(rest), 1) * reader.probe_cost)
        if len(rest):
            # the bounds of evenly spread documents first: when far too many reach θ, read on
            step = max(1, n // SPREAD)
            above = len(reader.above(lower, constant, table, weights, reach, step))
            if above * step > 2 * affordable + SPREAD / 64:
                continue
        must = reader.above(lower, constant, table, weights, reach, 1)
        if not len(rest) or len(must) <= affordable:
            break
    approximate = (partial[must] + reader.probe(must, rest)) * factor[must]
    return _rescored_top_k(reader, factor, _near_top(must, approximate, k, floor), k, floor, total)


def scans_at_once(k: int | None, floor: float, f_t: np.ndarray, share: float) -> bool:
    """Whether a cosine query takes the full pass at once: every document is wanted (no k, no
    floor), or rescoring k documents in every term would cost at least ``share`` of reading
    every posting (the passes' ``scan_share``: pruning must first read the rare terms and probe,
    so it cannot win by less; a thesis-length query of thousands of terms takes the full pass,
    and with the compiled loops a whole-document query up to ~100K short documents)."""
    if k is None:
        return floor <= 0
    return k * len(f_t) * RESCORE_VS_SCAN >= share * float(np.sum(f_t, dtype=np.float64))


def document_factor(reader: Passes) -> np.ndarray:
    """Every document's factor (cosine: 1/W_d) for the query of ``reader``."""
    index = reader.index
    factor: np.ndarray = reader.measure.doc(
        np.asarray(index.doc_lengths, np.float64), float(reader.prepared.f_q), np.asarray(index.doc_norms)
    )
    return factor


def _near_top(docs: np.ndarray, scores: np.ndarray, k: int | None, floor: float) -> np.ndarray:
    """The documents of ``docs`` (ascending) whose ``scores`` (exact up to rounding) may put
    them in the top k above ``floor``: within :data:`SLACK` of the k-th best or of the floor."""
    cut = max(floor, _kth_largest(scores, k)) * (1 - SLACK)
    keep: np.ndarray = docs[(scores >= cut) & (scores > 0)]
    return keep


def _rescored_top_k(
    reader: Passes, factor: np.ndarray, docs: np.ndarray, k: int | None, floor: float, total: float
) -> tuple[np.ndarray, np.ndarray]:
    """The top k of ``docs`` (ascending) above ``floor``, scored in the full pass's order: every
    query term by position, from zero, as ``np.bincount`` adds them (the full pass itself when
    that costs less than rescoring ``docs``)."""
    n_terms = len(reader.prepared.positions)
    if len(docs) * n_terms * RESCORE_VS_SCAN >= total:
        return full_pass_top_k(reader, factor, k, floor)
    scores = np.zeros(reader.index.n_docs)
    scores[docs] = reader.probe(docs, np.arange(n_terms)) * factor[docs]
    return _ranked(scores, k, floor)


def full_pass_top_k(reader: Passes, factor: np.ndarray, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The full pass (:func:`coderiv.ranking.kernel.all_scores`) through ``reader``: every query
    term read in position order into sums from zero, times the document factor."""
    scores = reader.sums(np.arange(len(reader.prepared.positions)))
    scores *= factor
    return _ranked(scores, k, floor)


def _ranked(scores: np.ndarray, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The top k of ``scores`` (changed in place: those below ``floor`` set to 0)."""
    if floor > 0:
        scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]


def _kth_largest(values: np.ndarray, k: int | None) -> float:
    """The k-th largest of ``values``, 0 when there are fewer (or no k)."""
    if k is None or len(values) < k:
        return 0.0
    return float(np.partition(values, len(values) - k)[len(values) - k])


def _best(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` largest values (any order among them)."""
    if count >= len(values):
        return np.arange(len(values))
    return np.argpartition(values, len(values) - count)[len(values) - count :]
