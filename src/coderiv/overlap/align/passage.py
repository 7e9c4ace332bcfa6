"""An aligned passage: its characters on both sides, its words marked identical or changed
(:mod:`.diff`), and the share of identical words (WCopyfind's "imperfections", Turnitin's
highlighting).

A passage's characters run from its first word to its last, plus the punctuation directly after
it (a full stop, a closing bracket or quote): PAN's annotations include it, as Suchomel, Kasprzak
& Brandejs (PAN 2012) attach inter-word punctuation to the word before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from coderiv.overlap.align.diff import word_blocks
from coderiv.overlap.align.extend import Chain
from coderiv.overlap.align.kinds import Reuse, reuse_kind
from coderiv.overlap.align.words import Words

Kind = Literal["same", "changed"]

#: Characters a passage's end is extended over when they follow its last word directly (a
#: sentence's full stop, a closing bracket or quote), as PAN's annotations include them.
_TRAILING = frozenset(".,;:!?)]}\"'»”’")


@dataclass(frozen=True)
class WordSpan:
    """A run of words of one side: characters [start, end) of the raw text, identical or changed."""

    start: int
    end: int
    kind: Kind

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "kind": self.kind}


@dataclass(frozen=True)
class AlignedPassage:
    """Characters [a_start, a_end) of A (the suspicious text) aligned with [b_start, b_end) of B
    (the source), in raw characters; ``a_words``/``b_words`` the words of each side,
    ``same_words`` those identical and in the same order on both sides, and ``a_spans``/
    ``b_spans`` each side's words marked identical or changed; :attr:`reuse` its kind."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    a_words: int
    b_words: int
    same_words: int
    a_spans: tuple[WordSpan, ...]
    b_spans: tuple[WordSpan, ...]

    @property
    def identical_share(self) -> float:
        """Share of the suspicious side's words identical in the source (1.0: verbatim)."""
        return self.same_words / self.a_words if self.a_words else 0.0

    @property
    def reuse(self) -> Reuse:
        """Its kind of reuse: verbatim, edited, paraphrased or summarised (:mod:`.kinds`)."""
        return reuse_kind(self.a_words, self.b_words, self.same_words)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a_start": self.a_start, "a_end": self.a_end, "b_start": self.b_start, "b_end": self.b_end,
            "a_words": self.a_words, "b_words": self.b_words, "same_words": self.same_words,
            "identical_share": round(self.identical_share, 4), "reuse": self.reuse,
            "a_spans": [s.to_dict() for s in self.a_spans], "b_spans": [s.to_dict() for s in self.b_spans],
        }


def build_passage(chain: Chain, wa: Words, wb: Words, bounds: tuple[int, int, int, int]) -> AlignedPassage:
    a_spans: list[WordSpan] = []
    b_spans: list[WordSpan] = []
    same = 0
    for identical, i0, i1, j0, j1 in word_blocks(chain, wa.folded, wb.folded, bounds):
        kind: Kind = "same" if identical else "changed"
        if identical:
            same += i1 - i0
        if i1 > i0:
            _add_span(a_spans, *wa.span(i0, i1), kind)
        if j1 > j0:
            _add_span(b_spans, *wb.span(j0, j1), kind)
    a0, a1, b0, b1 = bounds
    a_start, a_end = wa.span(a0, a1)
    b_start, b_end = wb.span(b0, b1)
    return AlignedPassage(
        a_start, _trailing_end(wa.text, a_end), b_start, _trailing_end(wb.text, b_end),
        a1 - a0, b1 - b0, same, tuple(a_spans), tuple(b_spans),
    )


def _add_span(spans: list[WordSpan], start: int, end: int, kind: Kind) -> None:
    """Append a span, joined to the previous one when of the same kind (a word deleted on one
    side leaves the other side's identical words in one span)."""
    if spans and spans[-1].kind == kind:
        spans[-1] = WordSpan(spans[-1].start, end, kind)
    else:
        spans.append(WordSpan(start, end, kind))


def _trailing_end(text: str, end: int) -> int:
    """``end`` moved past the punctuation that closes the last word (at most 2 characters)."""
    for _ in range(2):
        if end < len(text) and text[end] in _TRAILING:
            end += 1
    return end
