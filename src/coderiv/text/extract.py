"""Visible text from raw bytes: decoding with a fallback, and HTML markup removal (SPEC §1).

HTML is parsed with the standard library's HTML parser (a real tokenizer that copes with broken
markup), never with regular expressions: tags, comments, scripts and styles disappear, entities
are decoded, and block elements become line breaks so that sentences and paragraphs survive.
"""

from __future__ import annotations

import html.parser
from dataclasses import dataclass

#: Files larger than this are refused (a thesis is a few MB; a 256 MB "document" is a mistake).
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024

_HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".xml")
_SKIPPED_ELEMENTS = {"script", "style", "template", "noscript", "head"}
_BLOCK_ELEMENTS = {
    "p", "div", "br", "li", "ul", "ol", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5",
    "h6", "pre", "blockquote", "section", "article", "header", "footer", "dd", "dt", "dl", "hr",
    "title", "body", "main", "nav", "aside", "figure", "figcaption", "form",
}


_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13))


@dataclass(frozen=True)
class Decoded:
    """Text decoded from bytes; ``lossy`` is true when undecodable bytes were replaced."""

    text: str
    lossy: bool


def decode(data: bytes) -> Decoded:
    """Decode as UTF-8 (BOM allowed); undecodable bytes become U+FFFD and are reported."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return Decoded(data.decode("utf-8"), False)
    except UnicodeDecodeError:
        return Decoded(data.decode("utf-8", errors="replace"), True)


def looks_binary(data: bytes) -> bool:
    """True for data that is not text: NUL bytes or mostly control characters near the start."""
    head = data[:8192]
    if b"\x00" in head:
        return True
    if not head:
        return False
    control = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return control / len(head) > 0.10


def is_html(name: str, text: str) -> bool:
    """HTML by file suffix, or by a document that starts like one."""
    if name.lower().endswith(_HTML_SUFFIXES):
        return True
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


def visible_text(data: bytes, name: str = "") -> Decoded:
    """Decoded visible text of a document's bytes (HTML stripped when it is HTML)."""
    decoded = decode(data)
    if is_html(name, decoded.text):
        return Decoded(html_to_text(decoded.text), decoded.lossy)
    return decoded
