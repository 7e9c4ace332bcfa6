"""Normalised words for the seeds that survive rewording: each word of a text as a term number,
stemmed (Snowball, English) and with stopwords out (``-1``).

A rewording keeps the content words and changes their form ("connected" for "connection") and
the function words around them; comparing Snowball stems of the content words is the
normalisation of Sanchez-Perez, Sidorov & Gelbukh (PAN 2014: Porter stems, a sentence's words
case folded), with the stopwords left out as the n-gram stage of Torrejón & Ramos (PAN 2012-13)
leaves them out. The stoplist is coderiv's own (:func:`coderiv.text.analysis.default_stoplist`).

The stemmer is pure Python (about 30 µs a word), so stems are kept in a process-wide table:
the words of a language are few, and the sources of one suspicious text share most of them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from coderiv.overlap.align.words import Words
from coderiv.text.analysis import default_stoplist

#: Distinct words whose stems are kept; the table is emptied when it grows past this.
_CACHE_WORDS = 500_000
_POSITIVE = (1 << 62) - 1

_stems: dict[str, int] = {}
_stemmer: list[Any] = []


def _stable_hash(stem: str) -> int:
    """A 62-bit hash of ``stem``, the same in every process (term order decides summation order,
    so a per-process ``hash()`` could move a similarity across a threshold between runs)."""
    return int.from_bytes(hashlib.blake2b(stem.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little") & _POSITIVE


def _stem_new(words: list[str]) -> None:
    if not _stemmer:
        import snowballstemmer

        _stemmer.append(snowballstemmer.stemmer("english"))
    stop = default_stoplist()
    for word, stem in zip(words, _stemmer[0].stemWords(words)):
        _stems[word] = -1 if word in stop or len(word) < 2 else _stable_hash(stem)


def term_ids(words: Words) -> np.ndarray:
    """One term per word of ``words``: a 62-bit hash of its stem (equal stems, equal terms, in
    every text; distinct stems collide with probability about 2^-62), ``-1`` for
    a stopword or a one-character word."""
    distinct = set(words.folded)
    new = [w for w in distinct if w not in _stems]
    if len(_stems) + len(new) > _CACHE_WORDS:
        _stems.clear()
        new = list(distinct)
    if new:
        _stem_new(new)
    stems = _stems
    return np.fromiter((stems[w] for w in words.folded), np.int64, len(words.folded))
