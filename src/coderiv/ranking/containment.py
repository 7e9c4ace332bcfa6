"""Containment search: the share of the query found in each document (SPEC §6 chunk similarity).

The query's overlapping n-word chunks (:func:`coderiv.keys.chunks.ngram_ids`, the same ids the
index's ``chunks`` store holds) are looked up in that store; a document's score is the number
of the query's distinct chunks it contains, and its percentage is

    100 · |chunks of q also in d| / |chunks of q|

— asymmetric, as paper 003 defines it: a document holding a fifth of the query scores 20%
however long it is, and a document wholly inside the query scores only its part of the query.
This finds the sources of *partial* copies, which whole-document measures such as identity5
rank low (a query made of four donors' paragraphs resembles none of them as a whole). The
self-score rule (SPEC §3) holds: the query against itself is 100%, and nothing scores more.

The index needs a ``chunks`` store (``coderiv pairs`` adds one too); :func:`open_with_chunks`
opens an index (one or sharded) and adds the store first if it lacks it, re-reading the indexed
source.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from coderiv.errors import CoderivError
from coderiv.index.builder.stores import open_with_store
from coderiv.index.index import Index
from coderiv.index.reader import IndexReader
from coderiv.keys.chunks import ngram_ids
from coderiv.keys.kinds import StoreSpec, distinct
from coderiv.progress import Progress
from coderiv.ranking.percent import percent
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.results import NO_WORDS, QueryResult
from coderiv.text.analysis import AnalysisSettings

#: Words per chunk (paper 003 and ``coderiv pairs --method chunks`` use 5).
DEFAULT_CHUNK_WORDS = 5


def chunk_store_spec(n: int = DEFAULT_CHUNK_WORDS) -> StoreSpec:
    """The ``chunks`` store of n-word chunks (32-bit ids) a containment search reads."""
    return StoreSpec.create("chunks", n=n)


def open_with_chunks(
    path: str | os.PathLike[str] | None,
    n: int = DEFAULT_CHUNK_WORDS,
    announce: Callable[[str], None] | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> IndexReader:
    """Open the index at ``path`` (one or sharded), first adding its n-word chunk store if it
    has none: :func:`~coderiv.index.reader.open_with_store` with :func:`chunk_store_spec`."""
    return open_with_store(path, chunk_store_spec(n), announce=announce, progress=progress, workers=workers)


def greedy_cover(
    docs: np.ndarray, owner: np.ndarray, n_chunks: int, doc_ids: list[str], top: int
) -> list[tuple[str, int]]:
    """The greedy set cover of a query's chunks: (doc id, gain) pairs, gains decreasing.

    ``docs[i]`` holds query chunk ``owner[i]``; each step picks the document holding most of the
    chunks not yet covered (ties to the lower document number), so a query built from several
    sources names each source once before the next releases of the first.
    """
    remaining = np.ones(n_chunks, bool)
    picked: list[tuple[str, int]] = []
    while len(picked) < top and len(docs):
        gains = np.bincount(docs[remaining[owner]], minlength=len(doc_ids))
        best = int(np.argmax(gains))
        if gains[best] == 0:
            break
        picked.append((doc_ids[best], int(gains[best])))
        remaining[owner[docs == best]] = False
    return picked


@dataclass
class PreparedChunks:
    """A query's distinct chunk ids (sorted) and its length in terms after analysis."""

    keys: np.ndarray
    length: int


class ChunkSearcher(DocumentSearcher[PreparedChunks], Protocol):
    """A containment searcher of either index kind (:class:`ContainmentSearcher`, and
    :class:`~coderiv.ranking.sharded_containment.ShardedContainmentSearcher`) with what the
    evidence report reads beyond ranking: the greedy cover and the chunks' document counts."""

    def cover(self, prepared: PreparedChunks, top: int) -> list[tuple[str, int]]:
        """Up to ``top`` documents that together hold most of the query, with their gains."""
        ...

    def doc_frequencies(self, keys: np.ndarray) -> np.ndarray:
        """Each chunk's number of documents in the collection."""
        ...


class ContainmentSearcher:
    """Ranks an index's documents by the share of the query's chunks each contains
    (a :class:`coderiv.ranking.protocol.DocumentSearcher`)."""

    unit = "chunks"

    def __init__(self, index: Index, n: int = DEFAULT_CHUNK_WORDS, settings: AnalysisSettings | None = None) -> None:
        if settings is not None:
            index.check_settings(settings)
        self.index = index
        self.spec = chunk_store_spec(n)
        if self.spec.name not in index.specs:
            raise CoderivError(
                f"the index at {index.root} has no {self.spec.name} store; 'coderiv report', "
                "'coderiv query --method containment' or 'coderiv pairs' add it"
            )
        self.n = n
        self.bits = int(self.spec.param_dict["bits"])
        self.store = index.store(self.spec.name)
        self.method = f"containment:n={n}"

    def prepare_terms(self, terms: list[str]) -> PreparedChunks:
        """The distinct chunk ids of an analysed query."""
        return PreparedChunks(distinct(ngram_ids(terms, self.n, self.bits)), len(terms))

    def prepare(self, text: str) -> PreparedChunks:
        return self.prepare_terms(self.index.analyzer.terms(text))

    def prepare_doc(self, doc_id: str) -> PreparedChunks:
        """A document of the index as the query: its stored chunk ids."""
        number = self.index.doc_numbers.get(doc_id)
        if number is None:
            raise CoderivError(f"no document {doc_id!r} in the index")
        keys, _ = self.store.doc_keys(number)
        return PreparedChunks(np.asarray(keys), int(self.index.doc_lengths[number]))

    def present(self, prepared: PreparedChunks) -> np.ndarray:
        """Store positions of the query's chunks that occur in the collection (ascending)."""
        pos = self.store.lookup(prepared.keys)
        return np.sort(pos[pos >= 0])

    def doc_frequencies(self, keys: np.ndarray) -> np.ndarray:
        """Each chunk's number of documents (0 where no document has it)."""
        pos = self.store.lookup(keys)
        return np.where(pos >= 0, self.store.doc_freqs_at(np.maximum(pos, 0)), 0)

    def scores(self, prepared: PreparedChunks) -> tuple[np.ndarray, float]:
        """Every document's count of the query's distinct chunks, and the self-score |chunks of q|."""
        pos = self.present(prepared)
        if len(pos) == 0:
            return np.zeros(self.index.n_docs), float(len(prepared.keys))
        docs, _, _ = self.store.gather(pos)
        return np.bincount(docs, minlength=self.index.n_docs).astype(np.float64), float(len(prepared.keys))

    def cover(self, prepared: PreparedChunks, top: int) -> list[tuple[str, int]]:
        """Up to ``top`` documents that together hold most of the query, greedily: each one
        holds the most query chunks that no document picked before it holds (its *gain*).

        A ranked list of a query built from several sources can be filled by the seven releases
        of one of them; the cover names each source once and then the next one.
        Returns (doc id, gain) pairs, gains decreasing, ties to the lower document number.
        """
        pos = self.present(prepared)
        if len(pos) == 0 or top < 1:
            return []
        docs, _, owner = self.store.gather(pos)
        return greedy_cover(docs.astype(np.int64), owner, len(pos), self.index.doc_ids, top)

    def percentages(self, prepared: PreparedChunks) -> np.ndarray:
        """Every document's share of the query, 100 · shared chunks / query chunks."""
        scores, own = self.scores(prepared)
        return percent(scores, own)

    def rank(self, prepared: PreparedChunks, top: int | None = 10, *, label: str = "", min_percent: float = 0.0) -> QueryResult:
        """The documents holding most of the query (``top=None``: every one holding some),
        at or above ``min_percent``."""
        scores, own = self.scores(prepared)
        return QueryResult.ranked(
            scores, own, self.index.doc_ids, top, min_percent, label=label, method=self.method, query_length=prepared.length,
            matched=len(self.present(prepared)), query_terms=len(prepared.keys), empty=NO_WORDS,
        )
