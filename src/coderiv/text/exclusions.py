"""Parts of a query that a similarity report should not count: quotations and the bibliography.

An examiner does not count a properly quoted passage or a reference list as plagiarism, so the
report (:mod:`coderiv.report`) finds them in the query's visible text and leaves their words
out of every share. Each finder returns :class:`Span` records (character offsets into the text).

- **Quotations** (:func:`quote_spans`): text between straight double quotes ``"…"``,
  typographic ones ``“…”``, German ``„…“`` and ``»…«``, French ``«…»``; Markdown block quotes
  (lines starting with ``>``); in reStructuredText, block quotes (a paragraph indented deeper
  than the text of the paragraph before it, unless that one opens a literal block with ``::``
  or is a directive such as ``.. note::``: their indented bodies are code or content). A
  quotation never runs over a blank line, so a stray quote mark cannot swallow a document.
  HTML ``<blockquote>`` is not seen: the query's visible text no longer holds the markup.
- **The bibliography** (:func:`bibliography_spans`): from a line holding only a heading such as
  References, Bibliography, Works Cited, Literatur, Bibliographie, Referências (the list, in
  several languages, is ``data/bibliography_headings.txt``) to the end of its section: the next
  Markdown heading of the same or a higher level, or an appendix heading, or the end of the text.

The other exclusions (template text, passages common to many documents, small matches) need an
index or other documents and live in :mod:`coderiv.report.exclusions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from coderiv.text.analysis import WORD_RE

#: Exclusion kinds, in the order a word excluded for several reasons is attributed.
KINDS = ("quote", "bibliography", "template", "common", "small")


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of a text excluded for ``kind`` (one of :data:`KINDS`), with a
    reason a reader understands."""

    start: int
    end: int
    kind: str
    reason: str


_NO_BLANK_LINE = r"(?:[^{close}\n]|\n(?![ \t]*\n))"
_QUOTE_PAIRS = (('"', '"'), ("“", "”"), ("„", "“”"), ("«", "»"), ("»", "«"))
_QUOTE_RES = tuple(
    re.compile(re.escape(open_) + _NO_BLANK_LINE.format(close=re.escape(close)) + "+?" + "[" + re.escape(close) + "]")
    for open_, close in _QUOTE_PAIRS
)
_MARKDOWN_QUOTE = re.compile(r"^[ \t]{0,3}>.*(?:\n[ \t]{0,3}>.*)*", re.MULTILINE)


def quote_spans(text: str, rest: bool = False) -> list[Span]:
    """Quotations of ``text`` (module docstring), sorted, not overlapping one another;
    ``rest``: the text is reStructuredText, whose indented paragraphs are block quotes."""
    found: list[Span] = []
    for pattern in _QUOTE_RES:
        found += [Span(m.start(), m.end(), "quote", "quoted text") for m in pattern.finditer(text)]
    found += [Span(m.start(), m.end(), "quote", "block quote") for m in _MARKDOWN_QUOTE.finditer(text)]
    if rest:
        found += _indented_quotes(text)
    return merge_spans(found)


def is_restructuredtext(name: str) -> bool:
    """Whether a document's name says reStructuredText (``.rst``, ``.rest``)."""
    return name.lower().endswith((".rst", ".rest"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


_LIST_MARKER = re.compile(r"[ \t]*(?:[-*+•]|\d+[.)]|#\.|\(?[A-Za-z0-9]{1,3}\))[ \t]+")


def _text_indent(line: str) -> int:
    """Where the text of a paragraph's first line begins (after a list marker, if any)."""
    marker = _LIST_MARKER.match(line)
    return marker.end() if marker else _indent(line)


def _indented_quotes(text: str) -> list[Span]:
    """reST block quotes: paragraphs indented deeper than the text of the paragraph before
    them, unless that one opens a literal block (``::``) or is a directive (``.. name::``),
    whose indented body is code or the directive's content, not a quotation."""
    spans: list[Span] = []
    paragraphs = [(m.start(), m.end(), m.group()) for m in re.finditer(r"(?:^[ \t]*\S.*(?:\n|$))+", text, re.MULTILINE)]
    opener = None
    for (_, _, before), (start, end, para) in zip(paragraphs, paragraphs[1:]):
        first = before.splitlines()[0]
        if before.rstrip().endswith("::") or first.lstrip().startswith(".."):
            opener = _indent(first)  # everything indented deeper belongs to this block
        lines = [line for line in para.splitlines() if line.strip()]
        indent = min(_indent(line) for line in lines)
        if opener is not None and indent > opener:
            continue
        opener = None
        if indent > _text_indent(first):
            spans.append(Span(start + indent, end, "quote", "block quote"))
    return spans


@lru_cache(maxsize=1)
def bibliography_headings() -> tuple[str, ...]:
    """The headings that open a bibliography (``data/bibliography_headings.txt``), casefolded."""
    data = resources.files("coderiv").joinpath("data/bibliography_headings.txt").read_text("utf-8")
    return tuple(line.strip().casefold() for line in data.splitlines() if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def _heading_re() -> re.Pattern[str]:
    names = "|".join(re.escape(h).replace(r"\ ", r"\s+") for h in sorted(bibliography_headings(), key=len, reverse=True))
    return re.compile(
        rf"^[ \t]*(?P<marks>#{{1,6}})?[ \t]*(?:[0-9A-Z]{{1,3}}(?:\.[0-9]{{1,3}})*\.?[ \t]+)?(?:{names})[ \t]*:?[ \t]*$",
        re.MULTILINE | re.IGNORECASE,
    )


_SECTION_END = re.compile(
    r"^[ \t]*(?P<marks>#{1,6})[ \t]+\S.*$|^[ \t]*(?:appendix|appendices|anhang|annexe?s?|apéndices?|apêndices?|anexos?)\b.*$",
    re.MULTILINE | re.IGNORECASE,
)


def bibliography_spans(text: str) -> list[Span]:
    """Bibliographies of ``text``: each from its heading to the end of its section."""
    spans: list[Span] = []
    position = 0
    while True:
        heading = _heading_re().search(text, position)
        if heading is None:
            return spans
        level = len(heading.group("marks") or "") or 6
        end = len(text)
        for stop in _SECTION_END.finditer(text, heading.end()):
            marks = stop.group("marks")
            if marks is None or len(marks) <= level:
                end = stop.start()
                break
        name = " ".join(heading.group().strip(" \t#:").split())
        spans.append(Span(heading.start(), end, "bibliography", f"bibliography ({name})"))
        position = max(end, heading.end() + 1)


def merge_spans(spans: list[Span]) -> list[Span]:
    """Spans sorted by start, overlapping ones of the same kind joined (the first one's reason)."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and span.kind == out[-1].kind and span.start <= out[-1].end:
            last = out[-1]
            out[-1] = Span(last.start, max(last.end, span.end), last.kind, last.reason)
        else:
            out.append(span)
    return out


def word_bounds(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the words of ``text`` (:data:`coderiv.text.analysis.WORD_RE`, every
    word, stopwords included: what a reader counts)."""
    bounds = np.array([m.span() for m in WORD_RE.finditer(text)], np.int64).reshape(-1, 2)
    return bounds[:, 0].copy(), bounds[:, 1].copy()
