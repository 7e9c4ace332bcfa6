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

#: public name -> the module it is imported from on first use (PEP 562): importing one module of
#: the package (``coderiv.index.index``) does not import all of them, so a command's start-up pays only
#: for what it uses
_LAZY: dict[str, str] = {
    "DocumentFacts": "coderiv.index.index",
    "Index": "coderiv.index.index",
    "IndexReader": "coderiv.index.reader",
    "Postings": "coderiv.index.format.postings",
    "UpdateReport": "coderiv.index.builder.generation",
    "open_index": "coderiv.index.reader",
    "open_with_store": "coderiv.index.builder.stores",
    "resolve_index_path": "coderiv.index.index",
}

__all__ = [
    "DocumentFacts", "Index", "IndexReader", "Postings", "UpdateReport", "open_index", "open_with_store",
    "resolve_index_path",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
