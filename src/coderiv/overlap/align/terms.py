"""Normalised words for the seeds that survive rewording: each word of a text as a term number,
stemmed (Snowball, English) and with stopwords out (``-1``).

A rewording keeps the content words and changes their form ("connected" for "connection") and
the function words around them; comparing Snowball stems of the content words is the
normalisation of Sanchez-Perez, Sidorov & Gelbukh (PAN 2014: Porter stems, a sentence's words
case folded), with the stopwords left out as the n-gram stage of Torrejón & Ramos (PAN 2012-13)
leaves them out. The stoplist is coderiv's own (:func:`coderiv.text.analysis.default_stoplist`).

Snowball's pure-Python stemmer takes 30-130 µs a word, so stems are kept in a process-wide
table (the words of a language are few, and the sources of one suspicious text share most of
them), and with the ``fast`` extra PyStemmer, Snowball's C stemmer, does the work: the same stems
(checked for every language on 16,856 words of the PAN sources), about a hundred times faster,
and imported without ``snowballstemmer``'s every-language package (a report's start-up stays
free of it, tests/test_startup.py).
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
        try:
            import Stemmer  # PyStemmer (the fast extra): a C extension, quick to import

            _stemmer.append(Stemmer.Stemmer("english"))
        except ImportError:
            import snowballstemmer  # imports every language's stemmer: slower to start

            _stemmer.append(snowballstemmer.stemmer("english"))
    stop = default_stoplist()
    for word, stem in zip(words, _stemmer[0].stemWords(words)):
        _stems[word] = -1 if word in stop or len(word) < 2 else _stable_hash(stem)


def term_ids(words: Words) -> np.ndarray:
    """One term per word of ``words``: a 62-bit hash of its stem (equal stems, equal terms, in
    every text; distinct stems collide with probability about 2^-62), ``-1`` for
    a stopword or a one-character word."""
    if len(words) == 0:
        return np.empty(0, np.int64)
    # one look-up per distinct word (the words' vocabulary numbers), not per word
    _, first, inverse = np.unique(words.ids, return_index=True, return_inverse=True)
    distinct = [words.folded[k] for k in first.tolist()]
    new = [w for w in distinct if w not in _stems]
    if len(_stems) + len(new) > _CACHE_WORDS:
        _stems.clear()
        new = distinct
    if new:
        _stem_new(new)
    table = np.fromiter((_stems[w] for w in distinct), np.int64, len(distinct))
    out: np.ndarray = table[inverse.ravel()]
    return out
