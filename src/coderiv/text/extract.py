"""Visible text from raw bytes (SPEC §1): the one entry point every reading path uses (indexing
workers, query reading, compare, verification, the library). The work is done per format in
:mod:`coderiv.text.formats`; this module keeps the names the rest of coderiv imports."""

from __future__ import annotations

from coderiv.errors import InputError
from coderiv.text.extracted_cache import ExtractedCache, kept_extract
from coderiv.text.formats import DEFAULT_MARKUP, BinaryContentError, Extracted, ExtractionError, Markup, extract
from coderiv.text.formats.html import html_to_text, starts_like_html
from coderiv.text.formats.plain import Decoded, decode, looks_binary
from coderiv.text.formats.registry import declared

__all__ = [
    "EXTRACTION_VERSION",
    "DEFAULT_MARKUP", "MAX_DOCUMENT_BYTES", "BinaryContentError", "Decoded", "Extracted", "ExtractionError", "Markup", "decode",
    "extract",
    "document_text", "html_to_text", "is_html", "looks_binary", "visible_text",
]

#: Bumped whenever a document's bytes may give other text than before; an index built with
#: another version is read again in full by its next update (1: plain text and HTML only). A new
#: reader in ``FORMATS`` (:mod:`coderiv.text.formats.registry`) is such a change: docs/architecture.md,
#: "Adding a format".
EXTRACTION_VERSION = 2

#: Files larger than this are refused (a thesis is a few MB; a 256 MB "document" is a mistake).
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024


def is_html(name: str, text: str) -> bool:
    """HTML by file suffix, or by a document that starts like one."""
    return declared(name).name == "html" or starts_like_html(text)


def visible_text(
    data: bytes, name: str = "", markup: Markup = DEFAULT_MARKUP, cache: ExtractedCache | None = None,
) -> Extracted:
    """The visible text of a document's bytes in any format coderiv reads (see :func:`extract`;
    ``markup``: reStructuredText and Markdown rendered or read as text; ``cache``: an index's
    kept texts, :mod:`coderiv.text.extracted_cache`).
    Bytes that are not text and no known format come back decoded as they are: callers that
    must refuse them test :func:`looks_binary` or call :func:`extract`."""
    try:
        return kept_extract(data, name, markup, cache, EXTRACTION_VERSION)
    except BinaryContentError:
        decoded = decode(data)
        return Extracted(decoded.text, "text", decoded.lossy)


def document_text(data: bytes, name: str, markup: Markup = DEFAULT_MARKUP, cache: ExtractedCache | None = None) -> str:
    """The visible text of a document already indexed (verification, reports, fingerprints), read
    as its index reads markup (through its kept texts, ``cache``), or an :class:`InputError`
    naming it when it can no longer be read (a missing extra propagates)."""
    try:
        return visible_text(data, name, markup, cache).text
    except ExtractionError as exc:
        raise InputError(f"{name}: {exc.reason}") from None
