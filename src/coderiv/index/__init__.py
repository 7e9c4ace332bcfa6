"""The persistent inverted index: postings arrays (:mod:`.postings`), generations written
atomically with checksums and a lock (:mod:`.storage`), analysis in worker processes
(:mod:`.analysis_workers`), the bounded-memory writer (:mod:`.writer`), :class:`Index`
(:mod:`.index`: open, inspect, build or update, add a store), sharded indexes (:mod:`.shards`)
and the one interface both implement (:mod:`.reader`: :class:`IndexReader`, :func:`open_index`)."""

from coderiv.index.index import DocumentFacts, Index, UpdateReport, resolve_index_path
from coderiv.index.postings import Postings
from coderiv.index.reader import IndexReader, open_index, open_with_store

__all__ = [
    "DocumentFacts", "Index", "IndexReader", "Postings", "UpdateReport", "open_index", "open_with_store",
    "resolve_index_path",
]
