"""PDF through pypdfium2 (PDFium, the PDF engine of Chrome; BSD/Apache licences): the text layer
of each page in reading order, then three repairs that matter for finding coderivatives:

- words hyphenated at a line end are joined (``evalu-`` / ``ation`` → ``evaluation``) when the
  next line goes on in lower case, so a reflowed copy still shares the word;
- running headers and footers (a line among the first or last two of a page that recurs, digits
  aside, on more than half of the pages) are dropped: a school's thesis template would otherwise
  make all its theses look alike;
- PDFium itself joins a line that ends in a hyphen to the next and marks the join with U+FFFE:
  the marker is dropped before a lower-case letter and becomes a hyphen before anything else
  (``Anglo-`` / ``Saxon`` stays ``Anglo-Saxon``); soft hyphens are removed.

Locations: ``page N``. docs/formats.md compares PDFium with pdfminer.six and says why PDFium.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any

from coderiv.extras import require
from coderiv.text.formats.base import Extracted, ExtractionError, TextBuilder

#: Pages read at most; ``CODERIV_MAX_PAGES`` raises (or lowers) the cap.
DEFAULT_MAX_PAGES = 2000
#: Lines at each end of a page that may be a running header or footer.
EDGE_LINES = 2

_HYPHENATED = re.compile(r"([^\W\d_])(?:[-\u2010\u00ad\x02]\n|\ufffe\n?)[ \t]*([^\W\d_])")
_JOIN_MARK = "\ufffe"
_DIGITS = re.compile(r"\d+")


def max_pages() -> int:
    """The page cap: ``CODERIV_MAX_PAGES`` when set to a positive integer, else the default."""
    value = os.environ.get("CODERIV_MAX_PAGES", "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_PAGES


def join_hyphenated(text: str) -> str:
    """Join words broken by a hyphen at a line end (or at PDFium's join mark) when the next line
    continues in lower case; otherwise keep a plain hyphen and the break."""

    def join(m: re.Match[str]) -> str:
        if m.group(2).islower():
            return m.group(1) + m.group(2)
        return m.group(0).replace(_JOIN_MARK, "-")

    return _HYPHENATED.sub(join, text).replace(_JOIN_MARK, "-")


def _edge_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split())).lower()


def drop_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages (as lists of lines) without the header and footer lines repeated on most pages."""
    if len(pages) < 3:
        return pages
    heads: Counter[str] = Counter()
    feet: Counter[str] = Counter()
    for lines in pages:
        body = [line for line in lines if line.strip()]
        heads.update({_edge_key(line) for line in body[:EDGE_LINES]})
        feet.update({_edge_key(line) for line in body[-EDGE_LINES:]})
    quorum = len(pages) // 2 + 1
    running_heads = {key for key, n in heads.items() if n >= quorum}
    running_feet = {key for key, n in feet.items() if n >= quorum}
    cleaned = []
    for lines in pages:
        body = [line for line in lines if line.strip()]
        top = [i for i, line in enumerate(body[:EDGE_LINES]) if _edge_key(line) in running_heads]
        bottom_start = max(len(body) - EDGE_LINES, 0)
        bottom = [i for i in range(bottom_start, len(body)) if _edge_key(body[i]) in running_feet]
        drop = set(top) | set(bottom)
        cleaned.append([line for i, line in enumerate(body) if i not in drop])
    return cleaned


def _open(pdfium: Any, data: bytes) -> Any:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower() or "security" in message.lower():
            raise ExtractionError("encrypted PDF: needs a password") from None
        raise ExtractionError(f"corrupt PDF ({message.rstrip('.')})") from None


def page_lines(data: bytes) -> list[list[str]]:
    """Each page's text layer, as lines, in PDFium's reading order."""
    pdfium: Any = require("pypdfium2", "formats", "reading PDF")
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
            except pdfium.PdfiumError as exc:
                raise ExtractionError(f"corrupt PDF (page {index + 1}: {exc})") from None
            textpage.close()
            page.close()
            pages.append(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        return pages
    finally:
        document.close()


def read_pdf(data: bytes) -> Extracted:
    """The visible text of a PDF, page by page, with page locations."""
    pages = page_lines(data)
    if pages and not any(line.strip() for lines in pages for line in lines):
        raise ExtractionError("no text layer: needs OCR")
    builder = TextBuilder()
    for number, lines in enumerate(drop_running_lines(pages), 1):
        builder.add(join_hyphenated("\n".join(lines)).replace("\u00ad", ""), f"page {number}")
    return Extracted(builder.text(), "pdf", locations=builder.locations())
