"""The persistent inverted index: postings arrays (:mod:`.postings`), generations written
atomically with checksums and a lock (:mod:`.storage`), analysis in worker processes
(:mod:`.analysis_workers`, their results handed back through :mod:`.shared_slots`), the
bounded-memory writer (:mod:`.writer`, its files sent to disk as they grow by
:mod:`.early_writeback`), :class:`Index`
(:mod:`.index`: open, inspect, build or update, add a store), sharded indexes (:mod:`.shards`)
and the one interface both implement (:mod:`.reader`: :class:`IndexReader`, :func:`open_index`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderiv.lazy_names import lazy_names

if TYPE_CHECKING:
    from coderiv.index.builder.generation import UpdateReport
    from coderiv.index.builder.stores import open_with_store
    from coderiv.index.format.postings import Postings
    from coderiv.index.index import DocumentFacts, Index, resolve_index_path
    from coderiv.index.reader import IndexReader, open_index

__all__ = [
    "DocumentFacts", "Index", "IndexReader", "Postings", "UpdateReport", "open_index", "open_with_store",
    "resolve_index_path",
]


__getattr__, __dir__ = lazy_names(__name__)  # the names of the TYPE_CHECKING block above
