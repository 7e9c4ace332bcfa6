"""The texts plagiarism cases are made of and evaluated against: the visible texts of the
index's documents (or of a folder or archive given instead), read only for the documents asked
for, in one pass over an archive per request (:class:`coderiv.text.sources.DocumentTexts`).

Both ``coderiv generate`` and ``coderiv evaluate --plagiarism`` read through here, so a case and
its donors are the same text the index was built from (reStructuredText rendered, HTML
stripped), and neither extracts the whole collection (issue 28: 191 s for 20 cases before)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from coderiv.errors import CoderivError
from coderiv.text.collection import iter_collection
from coderiv.text.extract import DEFAULT_MARKUP, Markup
from coderiv.text.sources import DocumentTexts


@dataclass
class DonorTexts:
    """The documents of ``source`` by id, and their texts read on demand."""

    source: str
    doc_ids: list[str]
    reader: DocumentTexts
    read: int = 0  # documents whose text was asked for so far

    def __call__(self, doc_ids: list[str]) -> dict[str, str]:
        """The texts of ``doc_ids``; a document that cannot be read is left out."""
        self.read += len(doc_ids)
        try:
            return self.reader.get(doc_ids)
        except CoderivError:  # one unreadable document: read the others one by one
            out = {}
            for doc_id in doc_ids:
                try:
                    out[doc_id] = self.reader.text(doc_id)
                except CoderivError:
                    continue
            return out


def donor_texts(
    collection: str | os.PathLike[str] | None, index_dir: str | os.PathLike[str] | None, markup: Markup | None = None
) -> DonorTexts:
    """The texts of ``collection`` (a folder or archive; its file names listed without reading
    them as text; markup read by ``markup``, rendered when None) or, if None, of the documents
    of the index at ``index_dir`` (read as the index read them; another ``markup`` is refused)."""
    if collection is not None:
        ids = sorted(doc.doc_id for doc in iter_collection(collection))
        return DonorTexts(str(collection), ids, DocumentTexts(collection, markup=markup or DEFAULT_MARKUP))
    from coderiv.index.reader import open_index

    index = open_index(index_dir)
    index.markup.agree(markup)
    if index.source is None:
        raise CoderivError("the index does not record the folder or archive it was built from: give the collection")
    return DonorTexts(str(index.source), list(index.doc_ids), index.source_texts())
