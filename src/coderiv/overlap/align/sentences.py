"""Sentences of a text as runs of its words: the unit of the seeds that survive rewording.

A sentence ends after a word followed by ``.``, ``!``, ``?`` or a blank line before the next
word. As Sanchez-Perez, Sidorov & Gelbukh (PAN 2014, ``min_sentlen`` = 3) do, a sentence of
fewer than ``min_words`` words is joined to the next one (an abbreviation's full stop, a
heading), and, ours, a run of more than ``max_words`` words without a full stop (a list, a table,
text without punctuation) is cut every ``max_words`` words, so that one "sentence" never holds a
whole document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from coderiv.overlap.align.words import Words

_END = re.compile(r"[.!?]|\n[ \t\r\f\v]*\n")

#: Sanchez-Perez et al.'s minimum sentence length, in words.
MIN_WORDS = 3
#: Longest sentence, in words: about three long English sentences.
MAX_WORDS = 80


@dataclass(frozen=True)
class Sentences:
    """Sentence k holds words ``[first[k], end[k])`` of the text."""

    first: np.ndarray
    end: np.ndarray

    def __len__(self) -> int:
        return len(self.first)


def split_sentences(words: Words, min_words: int = MIN_WORDS, max_words: int = MAX_WORDS) -> Sentences:
    """The sentences of ``words``' text (module docstring)."""
    n = len(words)
    if n == 0:
        empty = np.empty(0, np.int64)
        return Sentences(empty, empty)
    marks = np.fromiter((m.start() for m in _END.finditer(words.text)), np.int64)
    # word k ends a sentence when a mark lies between its end and the next word's start
    after = np.append(words.starts[1:], len(words.text) + 1)
    ends_here = np.searchsorted(marks, words.ends, "left") < np.searchsorted(marks, after, "left")
    ends_here[-1] = True
    cut = np.flatnonzero(ends_here) + 1
    first, end = [], []
    start = 0
    for stop in cut.tolist():
        if stop - start < min_words and stop < n:
            continue  # too short: joined to the next
        while stop - start > max_words:
            first.append(start)
            end.append(start + max_words)
            start += max_words
        if stop > start:
            first.append(start)
            end.append(stop)
        start = stop
    if len(first) > 1 and end[-1] - first[-1] < min_words:
        last = end.pop()  # a short last sentence joins the one before
        first.pop()
        end[-1] = last
    return Sentences(np.array(first, np.int64), np.array(end, np.int64))
