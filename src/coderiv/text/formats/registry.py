"""Which reader reads a document: chosen by the file's extension, checked against the content's
magic bytes. When the two disagree the content wins and the document carries a note saying so
(a ``.pdf`` that is really an HTML page is read as HTML, and reported)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from coderiv.registry import Registry
from coderiv.text.formats.base import Extracted, ExtractionError
from coderiv.text.formats.docx import read_docx
from coderiv.text.formats.epub import read_epub
from coderiv.text.formats.html import read_html, starts_like_html
from coderiv.text.formats.markdown import read_markdown
from coderiv.text.formats.markup import DEFAULT_MARKUP, Markup
from coderiv.text.formats.odt import read_odt
from coderiv.text.formats.pdf import read_pdf
from coderiv.text.formats.plain import decode, looks_binary, read_plain, read_source
from coderiv.text.formats.rst import read_rst
from coderiv.text.formats.rtf import read_rtf
from coderiv.text.formats.ziparchive import ZIP_ERRORS, open_zip, read_member

#: The magic bytes of a ZIP file; which container it is (docx, odt, epub) its members show.
ZIP_MAGIC = b"PK\x03\x04"
#: Most bytes the sniffer inflates from a ``mimetype`` member (a real one is under 100 bytes).
MAX_MIMETYPE_BYTES = 4096
#: How much of the content the magic-bytes sniffs see.
HEAD_BYTES = 1024


@dataclass(frozen=True)
class Format:
    """A document format: its name, the extensions that declare it, its reader, whether its
    content is binary (a container recognised by magic bytes) rather than text, whether it is
    lightweight markup, readable as plain text too (:class:`~.markup.Markup`), and its optional
    sniff: ``magic`` tells from the content's first :data:`HEAD_BYTES` whether they are this
    format; ``container``, for a ZIP container, from the ZIP's member names and ``mimetype``
    member. A format with neither is known by its extension alone."""

    name: str
    suffixes: tuple[str, ...]
    read: Callable[[bytes], Extracted]
    binary: bool = False
    markup: bool = False
    magic: Callable[[bytes], bool] | None = None
    container: Callable[[frozenset[str], bytes], bool] | None = None

    def reader(self, markup: Markup = DEFAULT_MARKUP) -> Callable[[bytes], Extracted]:
        """The reader under the ``markup`` choice: markup read as text is decoded as it is
        (its format still named, e.g. ``rst``)."""
        if self.markup and markup is Markup.TEXT:
            return functools.partial(read_source, fmt=self.name)
        return self.read


def _pdf_magic(head: bytes) -> bool:
    return head.lstrip(b"\x00\t\r\n ").startswith(b"%PDF-")


def _rtf_magic(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf")


def _html_magic(head: bytes) -> bool:
    # an HTML start needs a "<" byte (in UTF-8, UTF-16 and UTF-32 alike): most heads skip the decoding
    return b"<" in head and not looks_binary(head) and starts_like_html(decode(head).text)


_ODF_TEXT = b"application/vnd.oasis.opendocument.text"

#: Every format read, by name; sniffed in this order. A new one: docs/architecture.md, "Adding a
#: format" (and ``EXTRACTION_VERSION`` in :mod:`coderiv.text.extract`).
FORMATS: Registry[Format] = Registry("document format")
for _format in (
    Format("pdf", (".pdf",), read_pdf, binary=True, magic=_pdf_magic),
    Format("docx", (".docx", ".docm", ".dotx"), read_docx, binary=True, container=lambda names, _: "word/document.xml" in names),
    Format("odt", (".odt", ".ott"), read_odt, binary=True, container=lambda _, mimetype: mimetype.startswith(_ODF_TEXT)),
    Format("epub", (".epub",), read_epub, binary=True, container=lambda _, mimetype: mimetype == b"application/epub+zip"),
    Format("rtf", (".rtf",), read_rtf, magic=_rtf_magic),
    Format("markdown", (".md", ".markdown", ".mdown", ".mkd"), read_markdown, markup=True),
    Format("rst", (".rst", ".rest"), read_rst, markup=True),
    Format("html", (".html", ".htm", ".xhtml", ".xml"), read_html, magic=_html_magic),
    Format("text", (), read_plain),
):
    FORMATS.add(_format.name, _format)
_BY_SUFFIX = {suffix: f for f in FORMATS.values() for suffix in f.suffixes}


def declared(name: str) -> Format:
    """The format a file's extension declares (plain text for any other extension)."""
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:].lower(), FORMATS["text"]) if dot > name.rfind("/") else FORMATS["text"]


def _zip_kind(data: bytes) -> str | ExtractionError | None:
    """The container a ZIP is (``docx``, ``odt``, ``epub``), ``None`` for another or a broken
    one, or the refusal of a hostile one: its ``mimetype`` member is read through
    :func:`read_member` with a :data:`MAX_MIMETYPE_BYTES` cap, checked before it is inflated."""
    try:
        archive = open_zip(data, "ZIP")
        infos = {info.filename: info for info in archive.infolist()}
    except ExtractionError as exc:  # a broken ZIP is no container we know; a huge directory is refused
        return None if exc.reason.startswith("corrupt") else exc
    except ZIP_ERRORS:
        return None
    with archive:
        try:
            mimetype = read_member(data, infos["mimetype"], "ZIP", MAX_MIMETYPE_BYTES).strip() if "mimetype" in infos else b""
        except ExtractionError as exc:  # too big, or bigger than it declares: refused either way
            return exc
    names = frozenset(infos)
    return next((f.name for f in FORMATS.values() if f.container is not None and f.container(names, mimetype)), None)


def _sniff(data: bytes) -> tuple[str | None, ExtractionError | None]:
    head = data[:HEAD_BYTES]
    if head.startswith(ZIP_MAGIC):
        kind = _zip_kind(data)
        if isinstance(kind, ExtractionError):
            return "zip", kind
        return kind or "zip", None
    return next((f.name for f in FORMATS.values() if f.magic is not None and f.magic(head)), None), None


def sniff(data: bytes) -> str | None:
    """The format the content's magic bytes show, or ``None`` when they show none we read
    (text formats other than RTF and HTML have no magic: the extension decides). A hostile
    ZIP (a ``mimetype`` bomb) sniffs as ``zip``: :func:`choose` refuses it."""
    return _sniff(data)[0]


def _refusal(error: ExtractionError) -> Format:
    def refuse(data: bytes) -> Extracted:
        raise ExtractionError(error.reason)

    return Format("zip", (), refuse, binary=True)


def choose(name: str, data: bytes) -> tuple[Format, str | None]:
    """The reader for a document, and a note when its content is not what its name declares
    (a hostile ZIP gets a reader that refuses it with one line)."""
    claimed = declared(name)
    found, refused = _sniff(data)
    if refused is not None:
        return _refusal(refused), None
    if found == claimed.name or (found is None and not claimed.binary):
        return claimed, None
    if found is not None and found in FORMATS:
        # an unknown extension declares nothing, and HTML in a .txt has always been read as HTML
        quiet = claimed.name == "text" and (found == "html" or not name.lower().endswith(".txt"))
        return FORMATS[found], None if quiet else _note(found, claimed.name)
    if found == "zip":
        return claimed, None  # a ZIP that is no container we know: the claimed reader says why
    if claimed.binary and not looks_binary(data):
        actual = "html" if starts_like_html(decode(data[:HEAD_BYTES]).text) else "text"
        return FORMATS[actual], _note(actual, claimed.name)
    return claimed, None


def _note(found: str, claimed: str) -> str:
    return f"content is {found.upper()}, not {claimed.upper()}: read as {found.upper()}"
