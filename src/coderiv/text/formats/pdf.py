"""PDF through pypdfium2 (PDFium, the PDF engine of Chrome; BSD/Apache licences): the text layer
of each page in reading order, then two repairs that matter for finding coderivatives:

- running headers and footers (a line among the first or last two of a page that recurs, digits
  aside, at that edge on more than half of the pages, or on three pages in a row as a chapter's
  running head does) are dropped: a school's thesis template would otherwise make all its
  theses look alike;
- a hyphen at a line end is either hyphenation (``evalu-`` / ``ation`` → ``evaluation``) or a
  compound word that the line broke at (``framework-`` / ``agnostic`` stays
  ``framework-agnostic``); :mod:`coderiv.text.formats.hyphens` decides, on evidence. PDFium
  marks every hyphen at a line end alike (U+FFFE in the text, U+0002 per character, hard or
  soft), so the evidence is the producer's layout where it shows (LibreOffice writes the hyphen
  it adds as a text object of its own; a word's own hyphen is in the word's object), then the
  document's own words. A word broken across a page is mended too (its page footer aside).

Locations: ``page N``. docs/formats.md compares PDFium with pdfminer.six and says why PDFium.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections import Counter
from typing import Any

from coderiv.extras import require
from coderiv.text.formats.base import Extracted, ExtractionError, TextBuilder
from coderiv.text.formats.hyphens import HARD, SAME, SOFT, UNKNOWN, mend_breaks

#: Pages read at most; ``CODERIV_MAX_PAGES`` raises (or lowers) the cap.
DEFAULT_MAX_PAGES = 2000
#: Lines at each end of a page that may be a running header or footer.
EDGE_LINES = 2
#: Consecutive pages on which an edge line marks a chapter's running head or foot.
CHAPTER_RUN = 3
#: Producers known to write the hyphens they add as text objects of their own.
_SEPARATE_HYPHEN_PRODUCERS = ("libreoffice", "openoffice")

_PDFIUM_BREAK = "\ufffe"
_DIGITS = re.compile(r"\d+")


def max_pages() -> int:
    """The page cap: ``CODERIV_MAX_PAGES`` when set to a positive integer, else the default."""
    value = os.environ.get("CODERIV_MAX_PAGES", "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_PAGES


def _edge_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split())).lower()


def _running(edges: list[set[str]]) -> set[str]:
    """Keys at one edge on more than half of the pages, or on :data:`CHAPTER_RUN` pages in a row
    (a chapter's running head: ``Chapter 2: Methods 17``)."""
    total: Counter[str] = Counter(key for keys in edges for key in keys)
    running = {key for key, n in total.items() if n > len(edges) // 2}
    streak: Counter[str] = Counter()
    for keys in edges:
        streak = Counter({key: streak[key] + 1 for key in keys})
        running.update(key for key, n in streak.items() if n >= CHAPTER_RUN)
    return running


def drop_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages (as lists of lines, blank lines dropped) without their running headers and footers:
    a line among the first or last :data:`EDGE_LINES` of a page whose text, digits aside, is at
    that edge on more than half of the pages or on :data:`CHAPTER_RUN` consecutive pages."""
    bodies = [[line for line in lines if line.strip()] for lines in pages]
    if len(bodies) < CHAPTER_RUN:
        return bodies
    running_heads = _running([{_edge_key(line) for line in body[:EDGE_LINES]} for body in bodies])
    running_feet = _running([{_edge_key(line) for line in body[-EDGE_LINES:]} for body in bodies])
    cleaned = []
    for body in bodies:
        top = {i for i, line in enumerate(body[:EDGE_LINES]) if _edge_key(line) in running_heads}
        bottom = {i for i in range(max(len(body) - EDGE_LINES, 0), len(body)) if _edge_key(body[i]) in running_feet}
        cleaned.append([line for i, line in enumerate(body) if i not in top | bottom])
    return cleaned


def _open(pdfium: Any, data: bytes) -> Any:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower() or "security" in message.lower():
            raise ExtractionError("encrypted PDF: needs a password") from None
        raise ExtractionError(f"corrupt PDF ({message.rstrip('.')})") from None


def _handle(pointer: Any) -> int | None:
    return ctypes.cast(pointer, ctypes.c_void_p).value


def _break_kinds(raw: Any, textpage: Any, text: str) -> list[str]:
    """What layout says of each hyphen PDFium marked at a line end (each U+FFFE of ``text``, in
    order): :data:`SOFT` when it is a text object of its own after a word written as one,
    :data:`SAME` when it is in the word's object, :data:`UNKNOWN` when layout cannot tell."""
    positions = [i for i, char in enumerate(text) if char == _PDFIUM_BREAK]
    if not positions:
        return []
    get_object = getattr(raw, "FPDFText_GetTextObject", None)
    if get_object is None or len(text) != raw.FPDFText_CountChars(textpage):  # surrogates shift the indexes
        return [UNKNOWN] * len(positions)
    kinds = []
    for i in positions:
        if i < 2 or raw.FPDFText_GetUnicode(textpage, i) != 2:
            kinds.append(UNKNOWN)
            continue
        mark, before, word = (_handle(get_object(textpage, j)) for j in (i, i - 1, i - 2))
        if mark is None or before is None:
            kinds.append(UNKNOWN)
        elif mark == before:
            kinds.append(SAME)
        else:
            kinds.append(SOFT if before == word else UNKNOWN)
    return kinds


def _lines(text: str, kinds: list[str]) -> list[str]:
    """A page's text as lines, each PDFium break restored as a line ending in its kind's mark."""
    parts = text.replace("\r\n", "\n").replace("\r", "\n").split(_PDFIUM_BREAK)
    return "".join(part + (kinds[i] + "\n" if i < len(kinds) else "") for i, part in enumerate(parts)).split("\n")


def page_lines(data: bytes) -> list[list[str]]:
    """Each page's text layer, as lines, in PDFium's reading order. A line that PDFium found to
    end in a hyphen ends in a break mark instead (:mod:`coderiv.text.formats.hyphens`): the
    hyphens a producer known to write added hyphens apart (LibreOffice) wrote in the word are
    :data:`HARD`; elsewhere layout proves only the added ones."""
    pdfium: Any = require("pypdfium2", "formats", "reading PDF")
    raw: Any = require("pypdfium2.raw", "formats", "reading PDF")
    document = _open(pdfium, data)
    try:
        n_pages = len(document)
        cap = max_pages()
        if n_pages > cap:
            raise ExtractionError(f"{n_pages} pages, over the {cap}-page cap (set CODERIV_MAX_PAGES to raise it)")
        pages = []
        for index in range(n_pages):
            try:
                page = document[index]
                textpage = page.get_textpage()
                text = textpage.get_text_range()
                kinds = _break_kinds(raw, textpage, text)
            except pdfium.PdfiumError as exc:
                raise ExtractionError(f"corrupt PDF (page {index + 1}: {exc})") from None
            textpage.close()
            page.close()
            pages.append(_lines(text, kinds))
        producer = str(_metadata(document).get("Producer", "")).lower()
    finally:
        document.close()
    trusted = producer.startswith(_SEPARATE_HYPHEN_PRODUCERS) or any(line.endswith(SOFT) for lines in pages for line in lines)
    return [[line[:-1] + (HARD if trusted else UNKNOWN) if line.endswith(SAME) else line for line in lines] for lines in pages]


def _metadata(document: Any) -> dict[str, Any]:
    try:
        metadata: dict[str, Any] = document.get_metadata_dict()
    except Exception:  # damaged metadata: no producer to go by
        return {}
    return metadata


def read_pdf(data: bytes) -> Extracted:
    """The visible text of a PDF, page by page, with page locations."""
    pages = page_lines(data)
    if pages and not any(line.strip() for lines in pages for line in lines):
        raise ExtractionError("no text layer: needs OCR")
    builder = TextBuilder()
    for number, text in enumerate(mend_breaks(drop_running_lines(pages)), 1):
        builder.add(text, f"page {number}")
    return Extracted(builder.text(), "pdf", locations=builder.locations())
