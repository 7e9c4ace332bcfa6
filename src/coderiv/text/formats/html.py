"""HTML and XHTML: the text a reader sees (SPEC §1).

HTML is parsed with the standard library's HTML parser (a real tokenizer that copes with broken
markup), never with regular expressions: tags, comments, scripts and styles disappear, entities
are decoded, and block elements become line breaks so that sentences and paragraphs survive.
Markdown, reStructuredText and EPUB chapters reach their text through this reader too.
"""

from __future__ import annotations

import html.parser

from coderiv.text.formats.base import Extracted
from coderiv.text.formats.plain import decode

_SKIPPED_ELEMENTS = {"script", "style", "template", "noscript", "head"}
_BLOCK_ELEMENTS = {
    "p", "div", "br", "li", "ul", "ol", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5",
    "h6", "pre", "blockquote", "section", "article", "header", "footer", "dd", "dt", "dl", "hr",
    "title", "body", "main", "nav", "aside", "figure", "figcaption", "form",
}


def starts_like_html(text: str) -> bool:
    """A document that opens like an HTML page, whatever its name."""
    start = text.lstrip()[:200].lower()
    return start.startswith("<!doctype html") or start.startswith("<html")


class _VisibleText(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_ELEMENTS:
            self._skip_depth += 1
        elif tag in _BLOCK_ELEMENTS:
            self.parts.append("\n\n" if tag == "p" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_ELEMENTS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK_ELEMENTS:
            self.parts.append("\n\n" if tag == "p" else "\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_ELEMENTS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """The text a reader sees in an HTML/XML page: no tags, comments, scripts or styles."""
    parser = _VisibleText()
    parser.feed(markup)
    parser.close()
    return "".join(parser.parts)


def read_html(data: bytes) -> Extracted:
    """The visible text of an HTML page."""
    decoded = decode(data)
    return Extracted(html_to_text(decoded.text), "html", decoded.lossy)
