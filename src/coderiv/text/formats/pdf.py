"""PDF through pypdfium2 (PDFium, the PDF engine of Chrome; BSD/Apache licences): the text layer
of each page in reading order, then three repairs that matter for finding coderivatives:

- words hyphenated at a line end are joined (``evalu-`` / ``ation`` → ``evaluation``) when the
  next line goes on in lower case, so a reflowed copy still shares the word;
- running headers and footers (a line among the first or last two of a page that recurs, digits
  aside, at that edge on more than half of the pages, or on three pages in a row as a chapter's
  running head does) are dropped: a school's thesis template would otherwise make all its
  theses look alike;
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
#: Consecutive pages on which an edge line marks a chapter's running head or foot.
CHAPTER_RUN = 3

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
