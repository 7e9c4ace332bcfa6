"""Reading: documents as bytes from folders and tars (:mod:`.collection`), their visible text
(:mod:`.extract`, one reader per format in :mod:`.formats`: PDF, DOCX, ODT, EPUB, RTF, Markdown,
reStructuredText, HTML, text), words after stopping and stemming (:mod:`.analysis`), one query document
(:mod:`.reading`), indexed documents read again (:mod:`.sources`), and the quotations and
bibliography a report leaves out (:mod:`.exclusions`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderiv.lazy_names import lazy_names

if TYPE_CHECKING:
    from coderiv.text.analysis import AnalysisSettings, AnalyzedDocument, Analyzer
    from coderiv.text.collection import RawDocument, iter_collection
    from coderiv.text.exclusions import Span, bibliography_spans, quote_spans
    from coderiv.text.extract import Extracted, Markup, extract, visible_text
    from coderiv.text.reading import QueryDocument, read_query
    from coderiv.text.sources import DocumentTexts

__all__ = [
    "AnalysisSettings", "AnalyzedDocument", "Analyzer", "DocumentTexts", "Extracted", "Markup", "QueryDocument", "RawDocument",
    "Span", "bibliography_spans", "extract", "iter_collection", "quote_spans", "read_query", "visible_text",
]


__getattr__, __dir__ = lazy_names(__name__)  # the names of the TYPE_CHECKING block above
