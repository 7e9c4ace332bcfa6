"""Documents as people hold them: PDF, DOCX, ODT, RTF, EPUB, Markdown, reStructuredText, HTML
and plain text, each read by its own module into an :class:`Extracted` text with a map from
offsets back to pages or paragraphs. :func:`extract` is the one entry point; the readers of the
binary formats (PDF, DOCX, ODT, EPUB) and of RTF need ``coderiv[formats]``; Markdown and
reStructuredText are read by core dependencies (markdown-it-py, docutils)."""

from __future__ import annotations

from coderiv.text.formats.base import Extracted, ExtractionError, LocationMap
from coderiv.text.formats.markup import DEFAULT_MARKUP, Markup
from coderiv.text.formats.plain import looks_binary
from coderiv.text.formats.registry import FORMATS, Format, choose, declared, sniff

__all__ = [
    "DEFAULT_MARKUP", "FORMATS", "BinaryContentError", "Extracted", "ExtractionError", "Format", "LocationMap", "Markup", "choose",
    "declared", "extract", "sniff",
]


class BinaryContentError(ExtractionError):
    """Bytes that are no format we read and not text either (an image, an executable)."""

    def __init__(self) -> None:
        super().__init__("binary")


def extract(data: bytes, name: str = "", markup: Markup = DEFAULT_MARKUP) -> Extracted:
    """The visible text of a document's bytes, read as the format its name declares unless its
    magic bytes show another (then ``note`` says so); reStructuredText and Markdown rendered or
    read as text by ``markup`` (:class:`Markup`). Raises :class:`ExtractionError` (with a
    short ``reason``) for a document that cannot be read, :class:`BinaryContentError` for
    non-text bytes, and ``MissingExtraError`` when the format needs ``coderiv[formats]``."""
    fmt, note = choose(name, data)
    if not fmt.binary and looks_binary(data):
        raise BinaryContentError()
    extracted = fmt.reader(markup)(data)
    if note is None:
        return extracted
    return Extracted(extracted.text, extracted.format, extracted.lossy, extracted.locations, note)
