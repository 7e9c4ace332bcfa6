"""Ranking a sharded index (:mod:`coderiv.index.shards`) exactly as one index would.

A query's terms are looked up in the collection's term table (global f_t); each shard then
scores its own postings with the one kernel and the exact pruning, but with the collection's
f_t and N in every term part (the measure is bound to the global N) and the W_d computed at
build time from global statistics. Each shard returns its exact top k at the global score
floor; the merge keeps the k best, ties by document id, as :func:`~coderiv.ranking.kernel.top_k`
does on one index. Percentages for evaluation are the shards' full passes laid out in the
collection's document order.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import lru_cache

import numpy as np

from coderiv.errors import CoderivError
from coderiv.index.format.shard_set import shard_of
from coderiv.index.shards import ShardedIndex
from coderiv.keys.kinds import term_keys
from coderiv.ranking.fanout import Fanout, ThreadFanout
from coderiv.ranking.fingerprint_search import FingerprintSearcher, PreparedFingerprint
from coderiv.ranking.kernel import PreparedQuery, all_scores, top_k
from coderiv.ranking.measures import DEFAULT_MEASURE, Measure, get_measure, self_score
from coderiv.ranking.percent import meets_threshold, percent, score_floor
from coderiv.ranking.results import EMPTY_FINGERPRINT, Match, QueryResult
from coderiv.ranking.search import ranking_note
from coderiv.ranking.topk import pruned_top_k
from coderiv.text.analysis import AnalysisSettings


def with_collection_size(measure: Measure, n_docs: int) -> Measure:
    """``measure`` with N fixed to the collection's size, whatever the shard passes as N; its
    product parts (cosine's, :attr:`Measure.product`) fixed the same way, so that a shard's
    contribution table is multiplied out as a single index's is."""
    n = float(n_docs)
    unit = measure.unit_bound
    parts = measure.product_parts()

    def term(f_dt: np.ndarray, f_qt: np.ndarray, f_t: np.ndarray, _n: float) -> np.ndarray:
        return measure.term(f_dt, f_qt, f_t, n)

    product = None
    if parts is not None:
        count, weight, query = parts
        product = (term, count, lambda f_t, _n: weight(f_t, n), lambda f_qt, f_t, _n: query(f_qt, f_t, n))
    return dataclasses.replace(
        measure,
        term=term,
        bound=lambda f_qt, f_t, _n, mx: measure.bound(f_qt, f_t, n, mx),
        unit_bound=None if unit is None else (lambda f_qt, f_t, _n, mu: unit(f_qt, f_t, n, mu)),
        product=product,
    )


@lru_cache(maxsize=64)
def _global_measure(name: str, n_docs: int) -> Measure:
    return with_collection_size(get_measure(name), n_docs)


def shard_top_k(
    index: ShardedIndex, shard: int, measure: str, query: PreparedQuery, top: int | None, floor: float
) -> tuple[list[str], np.ndarray]:
    """A fan-out step: the shard's exact top k at the score floor (ids and scores)."""
    ix = index.shards[shard]
    ranked, scores = pruned_top_k(ix, query.in_store(ix.terms), _global_measure(measure, index.n_docs), top, floor)
    return [ix.doc_ids[d] for d in ranked.tolist()], scores


def shard_scores(index: ShardedIndex, shard: int, measure: str, query: PreparedQuery) -> np.ndarray:
    """A fan-out step: every document of the shard's score (full pass), in shard order."""
    return all_scores(index.shards[shard], query.in_store(index.shards[shard].terms), _global_measure(measure, index.n_docs))


class ShardedMeasureSearcher:
    """One ranking measure over a sharded index, as a
    :class:`~coderiv.ranking.protocol.DocumentSearcher`; ``fanout`` runs the shards' steps
    (default: threads of this process)."""

    unit = "terms"

    def __init__(
        self, index: ShardedIndex, measure: str = DEFAULT_MEASURE, settings: AnalysisSettings | None = None,
        fanout: Fanout | None = None,
    ) -> None:
        for shard in index.shards.values():
            if settings is not None:
                shard.check_settings(settings)
        self.index = index
        self.method = measure
        self.measure = get_measure(measure)
        self.fanout = fanout or ThreadFanout(index)
        self.order = sorted(index.shards)

    def _prepare(self, keys: np.ndarray, f_qt: np.ndarray, f_q: int, n_terms: int) -> PreparedQuery:
        order = np.argsort(keys)
        keys, f_qt = keys[order], f_qt[order]
        f_t = self.index.term_frequencies(keys)
        present = f_t > 0
        return PreparedQuery(keys[present], np.zeros(0, np.int64), f_qt[present], f_t[present], f_q, n_terms)

    def prepare(self, text: str) -> PreparedQuery:
        terms = self.index.analyzer.terms(text)
        counts = Counter(terms)
        keys = term_keys(list(counts))
        return self._prepare(np.asarray(keys, np.uint64), np.fromiter(counts.values(), np.int64, len(counts)), len(terms), len(counts))

    def prepare_doc(self, doc_id: str) -> PreparedQuery:
        shard, number = self.index.locate(doc_id)
        keys, vals = shard.terms.doc_keys(number)
        return self._prepare(np.asarray(keys, np.uint64), np.asarray(vals, np.int64), int(shard.doc_lengths[number]), len(keys))

    def _self_score(self, prepared: PreparedQuery) -> float:
        return self_score(self.measure, prepared.f_qt, prepared.f_t, self.index.n_docs, prepared.f_q)

    def percentages(self, prepared: PreparedQuery) -> np.ndarray:
        """Every document's absolute percentage, in the collection's document order."""
        scores = np.zeros(self.index.n_docs)
        for s, part in zip(self.order, self.fanout.map(shard_scores, self.order, self.method, prepared)):
            scores[np.asarray(self.index.numbers[s])] = part
        return percent(scores, self._self_score(prepared))

    def rank(self, prepared: PreparedQuery, top: int | None = 10, *, label: str = "", min_percent: float = 0.0) -> QueryResult:
        own = self._self_score(prepared)
        floor = score_floor(own, min_percent)
        ids: list[str] = []
        scores: list[float] = []
        for shard_ids, shard_scores_ in self.fanout.map(shard_top_k, self.order, self.method, prepared, top, floor):
            ids += shard_ids
            scores += np.asarray(shard_scores_).tolist()
        order = sorted(range(len(ids)), key=ids.__getitem__)  # top_k breaks ties by position: id order
        by_id = np.asarray([scores[i] for i in order], np.float64)
        best = top_k(by_id, top)
        matches = [
            Match(rank=r + 1, percent=float(percent(by_id[i], own)), score=float(by_id[i]), doc_id=ids[order[i]])
            for r, i in enumerate(best.tolist())
        ]
        matched = len(prepared.f_qt)
        note = ranking_note(own, matched, self.method)
        return QueryResult(label, self.method, own, prepared.f_q, matched, prepared.n_terms, matches, note)


@lru_cache(maxsize=256)
def _fingerprint_searcher(index: ShardedIndex, shard: int, store: str, full_query: bool) -> FingerprintSearcher:
    """One shard's fingerprint searcher, kept with the open index (here or on a worker)."""
    return FingerprintSearcher(index.shards[shard], store, full_query)


def shard_minutiae(
    index: ShardedIndex, shard: int, store: str, full_query: bool, prepared: PreparedFingerprint
) -> np.ndarray:
    """A fan-out step: every document of the shard's count of shared minutiae, in shard order."""
    return _fingerprint_searcher(index, shard, store, full_query).scores(prepared)[0]


def shard_minutiae_top(
    index: ShardedIndex, shard: int, store: str, full_query: bool, prepared: PreparedFingerprint,
    top: int | None, min_percent: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fan-out step: the shard's top k by shared minutiae (global document numbers, counts)
    at ``min_percent``, and which of the query's minutiae the shard holds."""
    searcher = _fingerprint_searcher(index, shard, store, full_query)
    scores = searcher.scores(prepared)[0]
    if min_percent > 0:
        scores = np.where(meets_threshold(percent(scores, float(prepared.self_score)), min_percent), scores, 0.0)
    best = top_k(scores, top)
    return np.asarray(index.numbers[shard])[best], scores[best], searcher.postings.lookup(prepared.keys) >= 0


class ShardedFingerprintSearcher:
    """Fingerprint queries over a sharded index: a query's fingerprint depends on the query
    alone, and a document's score (distinct shared minutiae) on its own postings, so each
    shard's counts laid out in the collection's document order are one index's counts, and the
    best of the shards' top k (integer counts, ties by id) are one index's top k.
    rarest-in-collection, whose selection needs the collection's minutia frequencies, is refused."""

    unit = "minutiae"

    def __init__(
        self, index: ShardedIndex, store: str | None = None, full_query: bool = False, settings: AnalysisSettings | None = None,
        fanout: Fanout | None = None,
    ) -> None:
        self.index = index
        self.order = sorted(index.shards)
        first = FingerprintSearcher(index.shards[self.order[0]], store, full_query, settings)
        if first.strategy.needs_collection:
            raise CoderivError(f"{first.spec.name} selects minutiae by collection frequency: not available on a sharded index")
        for s in self.order[1:]:
            FingerprintSearcher(index.shards[s], store, full_query, settings)  # same store and settings in every shard
        self.first = first
        self.store = first.spec.name
        self.full_query = full_query
        self.method = first.method
        self.fanout = fanout or ThreadFanout(index)

    def prepare(self, text: str) -> PreparedFingerprint:
        return self.first.prepare(text)

    def prepare_doc(self, doc_id: str) -> PreparedFingerprint:
        self.index.locate(doc_id)  # a one-line error for an unknown id
        return FingerprintSearcher(self.index.shards[shard_of(doc_id, self.index.k)], self.store, self.full_query).prepare_doc(doc_id)

    def scores(self, prepared: PreparedFingerprint) -> np.ndarray:
        """Every document's count of shared distinct minutiae, in the collection's order."""
        scores = np.zeros(self.index.n_docs)
        parts = self.fanout.map(shard_minutiae, self.order, self.store, self.full_query, prepared)
        for s, part in zip(self.order, parts):
            scores[np.asarray(self.index.numbers[s])] = part
        return scores

    def percentages(self, prepared: PreparedFingerprint) -> np.ndarray:
        return percent(self.scores(prepared), float(prepared.self_score))

    def rank(self, prepared: PreparedFingerprint, top: int | None = 10, *, label: str = "", min_percent: float = 0.0) -> QueryResult:
        own = float(prepared.self_score)
        scores = np.zeros(self.index.n_docs)
        present = np.zeros(len(prepared.keys), bool)
        for numbers, counts, here in self.fanout.map(
            shard_minutiae_top, self.order, self.store, self.full_query, prepared, top, min_percent
        ):
            scores[numbers] = counts
            present |= here
        ids = self.index.doc_ids
        matches = [
            Match(rank=i + 1, percent=float(percent(scores[d], own)), score=float(scores[d]), doc_id=ids[d])
            for i, d in enumerate(top_k(scores, top).tolist())
        ]
        note = EMPTY_FINGERPRINT if own == 0 else None
        return QueryResult(label, self.method, own, prepared.length, int(present.sum()), len(prepared.keys), matches, note)
