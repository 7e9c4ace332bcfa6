"""Hyphens at line ends in text laid out on pages (PDF): hyphenation to undo, or a compound word
to keep. ``evalu-`` / ``ation`` is one word broken by the layout and must be joined; ``framework-``
/ ``agnostic`` is a compound that the line happened to break at and keeps its hyphen. The rule
"join when the next line goes on in lower case" cannot tell the two apart: a reflowed copy then
loses the compound's words (issue 28: a LibreOffice PDF fell from 100% to 59% under identity5).

Each break is decided on the best evidence at hand, in this order:

1. the layout, when it shows (the caller marks the line's end :data:`SOFT` for a hyphen the
   producer added, :data:`HARD` for one the word has; soft hyphen characters count as added);
2. the document's own words: the joined word (``evaluation``) or the hyphenated pair
   (``framework-agnostic``) elsewhere in the document, whichever is seen more often;
3. a rule that needs no dictionary: keep the hyphen when both halves are words the document
   uses elsewhere (``per`` / ``connection``), join otherwise (``accompa`` / ``nies``).

A hyphen before a capital (``Anglo-`` / ``Saxon``) is kept. The words next to the breaks
themselves are not evidence. Where the layout does not show (producers other than
LibreOffice, such as LaTeX), rule 3's known miss is a word hyphenated into two halves that are
both words of the document (``with-`` / ``out``) and never written whole: it keeps a hyphen.
"""

from __future__ import annotations

import re
from collections import Counter

#: Line-end marks (Unicode noncharacters: never in a document's own text).
SOFT, HARD, SAME, UNKNOWN = "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3"
_MARKS = SOFT + HARD + SAME + UNKNOWN
_SOFT_HYPHENS = "\u00ad\x02"
_HARD_HYPHENS = "-\u2010"
_COMPOUND = re.compile(r"[^\W\d_]+(?:[-\u2010][^\W\d_]+)*")
_LAST_LETTERS = re.compile(r"([^\W\d_]+)$")
_FIRST_LETTERS = re.compile(r"[^\W\d_]+")
_NEXT_WORD = re.compile(r"\s*([^\W\d_]+\S*)")


def break_kind(line: str) -> tuple[str, str] | None:
    """The kind of break a line ends in (a mark, or :data:`SOFT`/:data:`UNKNOWN` for a soft or
    plain hyphen after a letter) and the line without it; ``None`` for a line that ends otherwise."""
    if line and line[-1] in _MARKS:
        return line[-1], line[:-1]
    stripped = line.rstrip()
    if len(stripped) >= 2 and stripped[-2].isalpha():
        if stripped[-1] in _SOFT_HYPHENS:
            return SOFT, stripped[:-1]
        if stripped[-1] in _HARD_HYPHENS:
            return UNKNOWN, stripped[:-1]
    return None


class Vocabulary:
    """The document's words (case-folded) and the adjacent pairs of its hyphenated compounds,
    leaving out the fragments on either side of every line-end break."""

    def __init__(self, lines: list[str]) -> None:
        self.words: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.parts: set[str] = set()
        after_break = False
        for line in lines:
            ends = break_kind(line)
            tokens = _COMPOUND.findall((ends[1] if ends else line).casefold())
            if ends and tokens:
                tokens.pop()
            if after_break and tokens and not line[:1].isspace():
                tokens.pop(0)
            after_break = ends is not None
            for token in tokens:
                parts = re.split(r"[-\u2010]", token)
                if len(parts) == 1:
                    self.words[token] += 1
                else:
                    self.parts.update(parts)
                    self.pairs.update(zip(parts, parts[1:]))

    def seen(self, word: str) -> bool:
        return word in self.words or word in self.parts

    def joins(self, before: str, after: str) -> bool:
        """Whether a plain hyphen between ``before`` and ``after`` (case-folded letters) at a line
        end is hyphenation (join) rather than a compound's own (keep)."""
        joined, paired = self.words[before + after], self.pairs[before, after]
        if joined != paired:
            return joined > paired
        return not (self.seen(before) and self.seen(after))


def _decide(kind: str, stem: str, following: str, vocabulary: Vocabulary) -> bool:
    if kind == SOFT:
        return True
    if kind == HARD or not following[:1].islower():
        return False
    last, first = _LAST_LETTERS.search(stem), _FIRST_LETTERS.match(following)
    return last is None or first is None or vocabulary.joins(last.group(1).casefold(), first.group(0).casefold())


def mend_breaks(pages: list[list[str]]) -> list[str]:
    """Each page's text, its lines joined, with every line-end break decided (see the module): a
    word's first part keeps the rest of the word (moved up from the next line, across a page
    when the word is broken there). Breaks not before a word keep a plain hyphen; soft hyphens
    elsewhere are removed."""
    lines = [list(page) for page in pages]
    vocabulary = Vocabulary([line for page in lines for line in page])
    where = [(p, i) for p, page in enumerate(lines) for i in range(len(page))]
    for n, (p, i) in enumerate(where):
        ends = break_kind(lines[p][i])
        later = n + 1
        while ends is not None:
            while later < len(where) and not lines[where[later][0]][where[later][1]]:
                later += 1  # a line emptied by an earlier move
            if later == len(where):
                break
            q, j = where[later]
            moved = _NEXT_WORD.match(lines[q][j])
            if moved is None:
                break
            kind, stem = ends
            join = _decide(kind, stem, moved.group(1), vocabulary)
            lines[p][i] = stem + ("" if join else "-") + moved.group(1)
            lines[q][j] = lines[q][j][moved.end():].lstrip()
            # only a line the move emptied can leave a break at this one's new end
            ends = break_kind(lines[p][i]) if not lines[q][j] else None
    table = str.maketrans({SOFT: "-", HARD: "-", SAME: "-", UNKNOWN: "-", "\u00ad": None})
    return ["\n".join(line for line in page if line).translate(table) for page in lines]
