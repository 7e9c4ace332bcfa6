"""Reading: documents as bytes from folders and tars (:mod:`.collection`), their visible text
(:mod:`.extract`, one reader per format in :mod:`.formats`: PDF, DOCX, ODT, EPUB, RTF, Markdown,
reStructuredText, HTML, text), words after stopping and stemming (:mod:`.analysis`), one query document
(:mod:`.reading`), and indexed documents read again (:mod:`.sources`)."""

from coderiv.text.analysis import AnalysisSettings, AnalyzedDocument, Analyzer
from coderiv.text.collection import RawDocument, iter_collection
from coderiv.text.extract import Extracted, extract, visible_text
from coderiv.text.reading import QueryDocument, read_query
from coderiv.text.sources import DocumentTexts

__all__ = [
    "AnalysisSettings", "AnalyzedDocument", "Analyzer", "DocumentTexts", "Extracted", "QueryDocument", "RawDocument",
    "extract", "iter_collection", "read_query", "visible_text",
]
