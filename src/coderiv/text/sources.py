"""Re-reading an indexed collection's documents (for exact passages, passage matching, a
document of the index as a query): the visible texts of the folder or archive recorded in the
index, read on demand and cached. The one place that re-reads sources."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from coderiv.errors import CoderivError, InputError
from coderiv.text.collection import ReadOptions
from coderiv.text.extract import DEFAULT_MARKUP, Markup, document_text
from coderiv.text.extracted_cache import ExtractedCache
from coderiv.text.remote import is_url, iter_source_archive, read_source_member, source_exists, source_is_archive


class DocumentTexts:
    """Visible texts of an indexed collection's documents, read on demand and cached.

    A folder is read file by file; an archive is read in one pass for all the ids asked for
    at once (``preload=True`` reads the whole archive on first use, for evaluations).
    ``markup`` is how the index read reStructuredText and Markdown (its manifest's record);
    ``cache`` is the index's kept texts (:mod:`coderiv.text.extracted_cache`): a document whose
    bytes the index extracted is not rendered again.
    """

    def __init__(
        self, source: str | os.PathLike[str] | None, preload: bool = False, markup: Markup = DEFAULT_MARKUP,
        cache: ExtractedCache | None = None,
    ) -> None:
        if source is None:
            raise CoderivError("the index does not record the folder or archive it was built from; cannot verify")
        self.source: str | Path = str(source) if is_url(source) else Path(source)  # a path or an fsspec URL
        if not source_exists(self.source):
            raise InputError(f"the indexed collection {self.source} is gone; cannot re-read documents to verify")
        self.archive = source_is_archive(self.source)
        self.preload = preload
        self.markup = markup
        self.cache = cache
        self._texts: dict[str, str] = {}

    def get(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """The texts of ``doc_ids`` (an error names a document that is missing)."""
        doc_ids = list(doc_ids)
        wanted = [d for d in doc_ids if d not in self._texts]
        if wanted and self.archive:
            pending = set(wanted)
            for doc in iter_source_archive(self.source, ReadOptions(hidden=True)):  # ids the index holds
                if doc.doc_id in pending:
                    self._texts.setdefault(doc.doc_id, document_text(doc.data, doc.doc_id, self.markup, self.cache))
                    pending.discard(doc.doc_id)
                    if not pending and not self.preload:
                        break
                elif self.preload and doc.doc_id not in self._texts:
                    try:  # documents the index skipped (encrypted, no text layer) are not needed
                        self._texts[doc.doc_id] = document_text(doc.data, doc.doc_id, self.markup, self.cache)
                    except CoderivError:
                        pass
            self.preload = False
        elif wanted:
            for doc_id in wanted:
                self._texts[doc_id] = document_text(read_source_member(self.source, doc_id), doc_id, self.markup, self.cache)
        missing = [d for d in doc_ids if d not in self._texts]
        if missing:
            raise InputError(f"{missing[0]} is no longer in {self.source}; update the index")
        return {d: self._texts[d] for d in doc_ids}

    def text(self, doc_id: str) -> str:
        """The visible text of one document."""
        return self.get([doc_id])[doc_id]
