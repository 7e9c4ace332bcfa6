"""Containment (the share of a query's n-word chunks each document holds, SPEC §6) over a
sharded index, exactly as over one index: a document's count of shared chunks depends on its
own postings only, a chunk's document frequency is the sum of the shards', and the greedy
cover runs once over every shard's (document, chunk) pairs numbered collection-wide.

Every shard needs the chunk store; :func:`~coderiv.ranking.containment.open_with_chunks`
(``ShardedIndex.with_store``) rebuilds the set with it (atomically, from the recorded source)
when it lacks one.
"""

from __future__ import annotations

import numpy as np

from coderiv.index.format.shard_set import shard_of
from coderiv.index.shards import ShardedIndex
from coderiv.ranking.containment import (
    DEFAULT_CHUNK_WORDS,
    ContainmentSearcher,
    PreparedChunks,
    greedy_cover,
)
from coderiv.ranking.fanout import Fanout, ThreadFanout
from coderiv.ranking.percent import percent
from coderiv.ranking.results import NO_WORDS, QueryResult
from coderiv.text.analysis import AnalysisSettings


def _searcher(index: ShardedIndex, shard: int, n: int) -> ContainmentSearcher:
    return ContainmentSearcher(index.shards[shard], n)


def shard_chunk_counts(index: ShardedIndex, shard: int, n: int, keys: np.ndarray) -> np.ndarray:
    """A fan-out step: each document of the shard's count of the query's distinct chunks."""
    return _searcher(index, shard, n).scores(PreparedChunks(keys, 0))[0]


def shard_chunk_pairs(index: ShardedIndex, shard: int, n: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A fan-out step: every (document, chunk) pair of the shard among the query's chunks, as
    global document numbers and indexes into ``keys``."""
    store = _searcher(index, shard, n).store
    pos = store.lookup(keys)
    held = np.flatnonzero(pos >= 0)
    held = held[np.argsort(pos[held], kind="stable")]
    docs, _, owner = store.gather(pos[held])
    return np.asarray(index.numbers[shard])[np.asarray(docs, np.int64)], held[owner]


def shard_chunk_frequencies(index: ShardedIndex, shard: int, n: int, keys: np.ndarray) -> np.ndarray:
    """A fan-out step: each chunk's number of documents in the shard (0 where absent)."""
    return _searcher(index, shard, n).doc_frequencies(keys)


class ShardedContainmentSearcher:
    """:class:`~coderiv.ranking.containment.ContainmentSearcher` over a sharded index."""

    unit = "chunks"

    def __init__(
        self, index: ShardedIndex, n: int = DEFAULT_CHUNK_WORDS, settings: AnalysisSettings | None = None,
        fanout: Fanout | None = None,
    ) -> None:
        self.index = index
        self.order = sorted(index.shards)
        self.first = ContainmentSearcher(index.shards[self.order[0]], n, settings)
        for s in self.order[1:]:
            ContainmentSearcher(index.shards[s], n, settings)  # every shard has the store and the settings
        self.n = n
        self.method = self.first.method
        self.fanout = fanout or ThreadFanout(index)

    def prepare_terms(self, terms: list[str]) -> PreparedChunks:
        return self.first.prepare_terms(terms)

    def prepare(self, text: str) -> PreparedChunks:
        return self.first.prepare(text)

    def prepare_doc(self, doc_id: str) -> PreparedChunks:
        self.index.locate(doc_id)  # a one-line error for an unknown id
        return ContainmentSearcher(self.index.shards[shard_of(doc_id, self.index.k)], self.n).prepare_doc(doc_id)

    def doc_frequencies(self, keys: np.ndarray) -> np.ndarray:
        """Each chunk's number of documents in the whole collection."""
        return np.asarray(np.sum(self.fanout.map(shard_chunk_frequencies, self.order, self.n, keys), axis=0), np.int64)

    def scores(self, prepared: PreparedChunks) -> tuple[np.ndarray, float]:
        scores = np.zeros(self.index.n_docs)
        for s, part in zip(self.order, self.fanout.map(shard_chunk_counts, self.order, self.n, prepared.keys)):
            scores[np.asarray(self.index.numbers[s])] = part
        return scores, float(len(prepared.keys))

    def cover(self, prepared: PreparedChunks, top: int) -> list[tuple[str, int]]:
        """As :meth:`ContainmentSearcher.cover`: gains decreasing, ties to the lower number."""
        if top < 1:
            return []
        pairs = self.fanout.map(shard_chunk_pairs, self.order, self.n, prepared.keys)
        docs = np.concatenate([d for d, _ in pairs] + [np.zeros(0, np.int64)])
        owner = np.concatenate([o for _, o in pairs] + [np.zeros(0, np.int64)])
        return greedy_cover(docs, owner, len(prepared.keys), self.index.doc_ids, top)

    def percentages(self, prepared: PreparedChunks) -> np.ndarray:
        scores, own = self.scores(prepared)
        return percent(scores, own)

    def rank(self, prepared: PreparedChunks, top: int | None = 10, *, label: str = "", min_percent: float = 0.0) -> QueryResult:
        scores, own = self.scores(prepared)
        return QueryResult.ranked(
            scores, own, self.index.doc_ids, top, min_percent, label=label, method=self.method, query_length=prepared.length,
            matched=int((self.doc_frequencies(prepared.keys) > 0).sum()), query_terms=len(prepared.keys), empty=NO_WORDS,
        )
