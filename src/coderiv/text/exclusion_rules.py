"""Which quotations and bibliographies a report leaves out of its figure: only those that look
like one (issue 24: "exclusions that cannot hide copying").

:mod:`coderiv.text.exclusions` finds every stretch between quotation marks and every section
under a heading such as "References". Excluding all of them lets a plagiarist hide a copied page
by putting it between quotation marks or under a "References" heading, so the report keeps only:

- **A quotation that looks like one** (:func:`cited_quotes`): at most :data:`MAX_QUOTE_WORDS`
  words (:data:`MAX_BLOCK_QUOTE_WORDS` for a block quote; APA sets a block quote from 40 words,
  so 60 inline and 200 in a block leave room for honest quoting and none for a page), and
  *attributed*: a citation right after it (``(Smith 2004)``, ``(Smith, 2004, p. 3)``,
  ``[12]``, ``— Author``) in the same paragraph, or a reporting phrase or citation just
  before it, in its paragraph or ending the paragraph that introduces it (``as Smith (2004)
  writes:``, ``according to``, ``he said``), with no sentence end in between. An unattributed
  quotation (scare quotes, dialogue, a pasted page) is counted like any other text.
- **A bibliography that looks like one** (:func:`reference_entries`): a section under a
  bibliography heading that runs to the end of the document (or to an appendix); inside it only
  the *entries that look like references* are left out: at most :data:`MAX_ENTRY_WORDS` words
  and holding a year (1500-2099, ``n.d.``), a DOI, a URL or an ISBN. A copied paragraph under a
  "References" heading, or a "References" section in the middle of the document, is counted.
"""

from __future__ import annotations

import re

from coderiv.text.analysis import WORD_RE
from coderiv.text.exclusions import Span, bibliography_spans, quote_spans

#: Longest quotation between quotation marks left out (words).
MAX_QUOTE_WORDS = 60
#: Longest block quote (Markdown ``>``, reStructuredText indentation) left out (words).
MAX_BLOCK_QUOTE_WORDS = 200
#: Longest bibliography entry left out (words): a reference is a line or two.
MAX_ENTRY_WORDS = 80
#: Characters looked at after a quotation for its citation, and before it for a reporting phrase.
AFTER_WINDOW = 60
BEFORE_WINDOW = 100

_YEAR = r"(?:1[5-9]\d\d|20\d\d)[a-z]?"
_CITATION_AFTER = re.compile(
    rf"^[\s,.;:]*(?:\([^()\n]{{0,80}}?(?:\b{_YEAR}\b|\bn\.d\.|\bp{{1,2}}\.\s*\d+)[^()\n]{{0,40}}\)"
    r"|\[\d+(?:\s*[,–-]\s*\d+)*\]|\[[A-Z][A-Za-z]+\d{2,4}\]"
    r"|[—–]+\s*[A-Z]|--\s*[A-Z])"
)
_REPORTING = (
    r"according\s+to|as\s+\w+\s+puts?\s+it|said|says|say|wrote|writes|write|states?|stated|argues?|argued"
    r"|notes?|noted|claims?|claimed|observes?|observed|explains?|explained|remarks?|remarked|concludes?|concluded"
    r"|sagte|schreibt|schrieb|écrit|dit|afirma|escreve|disse|píše|napsal"
)
_CITATION_BEFORE = re.compile(
    rf"(?:\b[A-Z][\w'-]+(?:\s+et\s+al\.?)?\s*\(\s*{_YEAR}(?:,\s*p{{1,2}}\.\s*\d+)?\s*\)|\b(?:{_REPORTING})\b)[^.!?\n]{{0,60}}$",
    re.IGNORECASE,
)
_REFERENCE_MARK = re.compile(rf"\b{_YEAR}\b|\bn\.\s?d\.|\b10\.\d{{4,9}}/\S+|https?://\S+|\bISBN\b|\bdoi:", re.IGNORECASE)
_ENTRY_START = re.compile(r"^[ \t]*(?:\[\d+\]|\d{1,3}[.)]|[-*•])[ \t]+", re.MULTILINE)
_APPENDIX = re.compile(r"\s*(?:#{1,6}[ \t]*)?(?:appendix|appendices|anhang|annexe?s?|apéndices?|apêndices?|anexos?)\b", re.IGNORECASE)


def _words(text: str) -> int:
    return sum(1 for _ in WORD_RE.finditer(text))


def is_attributed(text: str, start: int, end: int) -> bool:
    """Whether the quotation ``text[start:end]`` carries a citation after it or a reporting
    phrase or citation before it (module docstring), in the same paragraph."""
    after = text[end : end + AFTER_WINDOW].split("\n\n", 1)[0]
    if _CITATION_AFTER.search(after):
        return True
    # the paragraph the quotation starts in, or the one introducing it ("As Smith puts it:")
    before = text[max(0, start - BEFORE_WINDOW) : start].rstrip().rsplit("\n\n", 1)[-1]
    return _CITATION_BEFORE.search(before.rstrip(" \t\n:,")) is not None


def cited_quotes(text: str, rest: bool = False) -> list[Span]:
    """The quotations of ``text`` that look like quotations: short and attributed."""
    out = []
    for span in quote_spans(text, rest):
        limit = MAX_BLOCK_QUOTE_WORDS if span.reason == "block quote" else MAX_QUOTE_WORDS
        if _words(text[span.start : span.end]) <= limit and is_attributed(text, span.start, span.end):
            out.append(span)
    return out


def _at_end(text: str, end: int) -> bool:
    """Whether nothing but an appendix follows ``end``."""
    return not text[end:].strip() or _APPENDIX.match(text, end) is not None


def _entries(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The entries of a bibliography's body: its blank-line-separated blocks, a block split at
    its lines when they are numbered or bulleted entries or each hold a year."""
    out: list[tuple[int, int]] = []
    for block in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text[start:end]):
        b0, b1 = start + block.start(), start + block.end()
        lines = [(b0 + m.start(), b0 + m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text[b0:b1])]
        marked = [s for s, _ in lines if _ENTRY_START.match(text, s)]
        if len(marked) >= 2:
            cuts = marked if marked[0] == lines[0][0] else [lines[0][0], *marked]
            out += list(zip(cuts, [*cuts[1:], b1]))
        elif len(lines) >= 2 and all(_REFERENCE_MARK.search(text, s, e) for s, e in lines):
            out += lines
        else:
            out.append((b0, b1))
    return out


def _is_reference(entry: str) -> bool:
    return _words(entry) <= MAX_ENTRY_WORDS and _REFERENCE_MARK.search(entry) is not None


def reference_entries(text: str) -> list[Span]:
    """The bibliography of ``text`` that looks like one: the entries that look like references
    of a bibliography section at the end of the document, with its heading (module docstring)."""
    out: list[Span] = []
    for section in bibliography_spans(text):
        if not _at_end(text, section.end):
            continue
        heading_end = text.find("\n", section.start)
        heading_end = section.end if heading_end < 0 else min(heading_end, section.end)
        entries = [(s, e) for s, e in _entries(text, heading_end, section.end) if _is_reference(text[s:e])]
        if entries:
            out.append(Span(section.start, heading_end, section.kind, section.reason))
            out += [Span(s, e, section.kind, section.reason) for s, e in entries]
    return out
