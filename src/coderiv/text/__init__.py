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

#: public name -> the module it is imported from on first use (PEP 562): importing one module of
#: the package (``coderiv.text.analysis``) does not import all of them, so a command's start-up pays only
#: for what it uses
_LAZY: dict[str, str] = {
    "AnalysisSettings": "coderiv.text.analysis",
    "AnalyzedDocument": "coderiv.text.analysis",
    "Analyzer": "coderiv.text.analysis",
    "DocumentTexts": "coderiv.text.sources",
    "Extracted": "coderiv.text.extract",
    "Markup": "coderiv.text.extract",
    "QueryDocument": "coderiv.text.reading",
    "RawDocument": "coderiv.text.collection",
    "Span": "coderiv.text.exclusions",
    "bibliography_spans": "coderiv.text.exclusions",
    "extract": "coderiv.text.extract",
    "iter_collection": "coderiv.text.collection",
    "quote_spans": "coderiv.text.exclusions",
    "read_query": "coderiv.text.reading",
    "visible_text": "coderiv.text.extract",
}

__all__ = [
    "AnalysisSettings", "AnalyzedDocument", "Analyzer", "DocumentTexts", "Extracted", "Markup", "QueryDocument", "RawDocument",
    "Span", "bibliography_spans", "extract", "iter_collection", "quote_spans", "read_query", "visible_text",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
