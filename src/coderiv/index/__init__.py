"""The persistent inverted index: postings arrays (:mod:`.postings`), generations written
atomically with checksums and a lock (:mod:`.storage`), analysis in worker processes
(:mod:`.analysis_workers`), the bounded-memory writer (:mod:`.writer`) and :class:`Index`
(:mod:`.index`: open, inspect, build or update, add a store)."""

from coderiv.index.index import Index, UpdateReport, open_with_store, resolve_index_path
from coderiv.index.postings import Postings

__all__ = ["Index", "Postings", "UpdateReport", "open_with_store", "resolve_index_path"]
