"""Exact cosine top-k with per-document bounds, returning the full pass's scores bit for bit.

Cosine, on an index with per-document norm classes (:mod:`coderiv.index.cosine_bounds`), bounds
each document by Cauchy–Schwarz over the classes of the terms not read yet (docs/measures.md
"Exact top-k"). Terms are read rarest first (Turtle & Flood's MaxScore order, 1995; the bound
per document rather than per term, as block-max WAND bounds a block: Ding & Suel, SIGIR 2011).

**The same bits as the full pass.** :func:`coderiv.ranking.kernel.all_scores` adds a document's
contributions term by term in the order of the terms' positions in the store; pruning reads
rarest first, in rounds, and probes, so its sums differ from the full pass's in the last bits.
Its answer is therefore only used to choose the documents: those that may be in the top k
(with a margin far above rounding) are scored again in the full pass's order — every query term,
by position, from zero — and ranked on those scores. When that rescoring would cost about as
much as reading every posting (a thesis-length query: thousands of terms; or a floor that keeps
many documents), the query takes one full pass in position order instead, which is the full
pass. Either way the scores and the ranking are the full pass's, to the bit.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from coderiv.index.cosine_bounds import SCALE, class_of
from coderiv.index.index import Index
from coderiv.ranking.kernel import PreparedQuery, top_k
from coderiv.ranking.measures import Measure

#: Relative slack so that floating-point rounding never prunes a document tied with the k-th.
SLACK = 1e-9
#: Documents whose exact scores are computed each round to raise θ: this many times k of the
#: best partial scores (after the first round's read, their k-th best was within 1.3% of the
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
#: postings read: 28–88 measured with the compiled loops on the 3,000 long-document and
#: 20,000-document synthetic collections (a search's steps are dependent, mispredicted loads; a
#: read streams), rounded up since pruning's probes for θ cost as much again (at 20K and 3K long
#: documents the full pass took 1.7 and 4.2 ms of CPU a query, pruning 3.0 and 12.0 ms). Speed
#: only, never the answer. Re-measured on 26 Nov 2026 (``benchmarks/bench_rescore_vs_scan.py``,
#: cosine top-20, 20K short and 2,500 long documents, queries of 20, 100 and 400 words and whole
#: documents): every value from 32 to 512 gives the same time, 8 up to 2.1× more at 20K.
RESCORE_VS_SCAN = 128.0


class Passes(Protocol):
    """Reading and probing postings (:mod:`coderiv.ranking.pruning`: numpy's or compiled)."""

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

    def above(self, lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray, theta: float, step: int) -> np.ndarray: ...


def norm_class_top_k(
    passes: Passes, k: int | None, floor: float, bounds: np.ndarray, classes: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Document numbers and scores of the exact top k (ties by document number) among the
    documents scoring at least ``floor`` (``k=None``: all of them): the full pass's, bit for bit.

    Terms are read rarest first. After each round every document d has an upper bound,
    partial_d / W_d + Σ_c ‖q_c‖ · ‖d_c‖/W_d over the classes' unread terms (+ the per-term
    bounds of unread terms of no class); θ is the k-th best exact score of a few promising
    documents (probed). Once probing the documents whose bound reaches θ costs less than
    reading the rest, they are probed and the rest of the postings is never read; the few that
    may be in the top k are then rescored in the full pass's order (:func:`rescored_top_k`).
    """
    index, prepared, measure = passes.index, passes.prepared, passes.measure
    n = index.n_docs
    f_t = prepared.f_t.astype(np.float64)
    factor = document_factor(passes)
    total = float(f_t.sum())
    if scans_at_once(k, floor, prepared.f_t, passes.scan_share):
        return full_pass_top_k(passes, factor, k, floor)
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
            passes.read(batch, partial)
            done += len(batch)
            budget *= GROWTH
        rest = order[done:]
        lower = partial * factor
        if k is not None and len(rest):
            sample = np.setdiff1d(_best(lower, SAMPLE * k), scored)  # sorted
            exact = np.concatenate((exact, (partial[sample] + passes.probe(sample, rest)) * factor[sample]))
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
        affordable = min(left, budget) / (max(len(rest), 1) * passes.probe_cost)
        if len(rest):
            # the bounds of evenly spread documents first: when far too many reach θ, read on
            step = max(1, n // SPREAD)
            above = len(passes.above(lower, constant, table, weights, reach, step))
            if above * step > 2 * affordable + SPREAD / 64:
                continue
        must = passes.above(lower, constant, table, weights, reach, 1)
        if not len(rest) or len(must) <= affordable:
            break
    approximate = (partial[must] + passes.probe(must, rest)) * factor[must]
    return rescored_top_k(passes, factor, _near_top(must, approximate, k, floor), k, floor, total)


def scans_at_once(k: int | None, floor: float, f_t: np.ndarray, share: float) -> bool:
    """Whether the query takes the full pass at once: every document is wanted (no k, no
    floor), or rescoring k documents in every term would cost at least ``share`` of reading
    every posting (the passes' ``scan_share``: pruning must first read the rare terms and probe,
    so it cannot win by less; a thesis-length query of thousands of terms takes the full pass,
    and with the compiled loops a whole-document query up to ~100K short documents)."""
    if k is None:
        return floor <= 0
    return k * len(f_t) * RESCORE_VS_SCAN >= share * float(np.sum(f_t, dtype=np.float64))


def document_factor(passes: Passes) -> np.ndarray:
    """Every document's factor (cosine: 1/W_d) for the query of ``passes``."""
    index = passes.index
    factor: np.ndarray = passes.measure.doc(
        np.asarray(index.doc_lengths, np.float64), float(passes.prepared.f_q), np.asarray(index.doc_norms)
    )
    return factor


def _near_top(docs: np.ndarray, scores: np.ndarray, k: int | None, floor: float) -> np.ndarray:
    """The documents of ``docs`` (ascending) whose ``scores`` (exact up to rounding) may put
    them in the top k above ``floor``: within :data:`SLACK` of the k-th best or of the floor."""
    cut = max(floor, _kth_largest(scores, k)) * (1 - SLACK)
    keep: np.ndarray = docs[(scores >= cut) & (scores > 0)]
    return keep


def rescored_top_k(
    passes: Passes, factor: np.ndarray, docs: np.ndarray, k: int | None, floor: float, total: float
) -> tuple[np.ndarray, np.ndarray]:
    """The top k of ``docs`` (ascending) above ``floor``, scored in the full pass's order: every
    query term by position, from zero, as ``np.bincount`` adds them (the full pass itself when
    that costs less than rescoring ``docs``)."""
    n_terms = len(passes.prepared.positions)
    if len(docs) * n_terms * RESCORE_VS_SCAN >= total:
        return full_pass_top_k(passes, factor, k, floor)
    scores = np.zeros(passes.index.n_docs)
    scores[docs] = passes.probe(docs, np.arange(n_terms)) * factor[docs]
    return _ranked(scores, k, floor)


def full_pass_top_k(passes: Passes, factor: np.ndarray, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """The full pass (:func:`coderiv.ranking.kernel.all_scores`) through ``passes``: every query
    term read in position order into sums from zero, times the document factor."""
    scores = passes.sums(np.arange(len(passes.prepared.positions)))
    scores *= factor
    return _ranked(scores, k, floor)


def _ranked(scores: np.ndarray, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    if floor > 0:
        scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]


def _kth_largest(values: np.ndarray, k: int | None) -> float:
    if k is None or len(values) < k:
        return 0.0
    return float(np.partition(values, len(values) - k)[len(values) - k])


def _best(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` largest values (any order among them)."""
    if count >= len(values):
        return np.arange(len(values))
    return np.argpartition(values, len(values) - count)[len(values) - count :]
