"""The words of a raw text with their offsets: the unit every step of the alignment counts in.

A word is a maximal run of letters and digits (:data:`coderiv.text.analysis.WORD_RE`), compared
case folded; its offsets are characters of the raw text, so a detection can be written in PAN's
format without a second mapping (Suchomel, Kasprzak & Brandejs, PAN 2012, count in the same
units). Damaged characters (``tights`` for ``rights``) and re-wrapped lines change one word or
nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

#: The words of :data:`coderiv.text.analysis.WORD_RE`, found with ``\w+`` on a copy of the text
#: whose underscores are spaces (the same offsets, several times faster than ``[^\W_]+``).
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Words:
    """The words of a raw text: ``ids[k]`` the k-th word's number in a vocabulary shared with
    the other text, ``starts[k]``/``ends[k]`` its offsets in characters of ``text``."""

    text: str
    ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    folded: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Characters of words [first, last) in the raw text: from the first's start to the last's end."""
        return int(self.starts[first]), int(self.ends[last - 1])


def split_words(text: str, vocabulary: dict[str, int]) -> Words:
    """The case-folded words of ``text`` with their raw offsets; new words are added to ``vocabulary``."""
    lowered = text.replace("_", " ").lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: fold word by word
        lowered = text.replace("_", " ")
        found = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(lowered)]
    else:
        found = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(lowered)]
    folded = [w for _, _, w in found]
    setdefault = vocabulary.setdefault
    ids = np.fromiter((setdefault(w, len(vocabulary)) for w in folded), np.int64, len(folded))
    starts = np.fromiter((s for s, _, _ in found), np.int64, len(found))
    ends = np.fromiter((e for _, e, _ in found), np.int64, len(found))
    return Words(text, ids, starts, ends, folded)
