"""Pairwise overlap measures: shingles, chunk similarity and Patricia/SiString (SPEC §6).

* **Shingles** (Broder; paper 001 §3): the set of distinct w-word shingles of a document.
  Resemblance |S(A)∩S(B)| / |S(A)∪S(B)|, containment of A in B |S(A)∩S(B)| / |S(A)|.
* **Chunk similarity** (paper 003): overlapping n-word chunks hashed to 32-bit ids;
  similarity of A to B = |distinct chunks of A also in B| / |distinct chunks of A|.
* **Patricia / SiString similarity** (paper 001 §2): the suspicious document's word-start
  suffixes are indexed; the candidate is scanned word start by word start, the longest match N
  (characters) is looked up, and when N > 15 the counter grows by N and the scan jumps N
  characters (on to the next word start); otherwise it moves to the next word. Similarity =
  counter / characters of the suspicious document. The longest matches are those of a Patricia
  tree; we take them from the matching statistics of :mod:`coderiv.overlap.matching` (suffix array).

Shingles and chunks are both word n-grams and both come from :func:`coderiv.keys.chunks.ngram_ids`
(64-bit ids for shingles, where a collision would change an exact set measure; 32-bit for
chunks, as paper 003). Words are those of :class:`coderiv.text.analysis.Analyzer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from coderiv.keys.chunks import ngram_ids
from coderiv.keys.kinds import distinct
from coderiv.overlap.matching import MatchingStatistics, NormalizedText, matching_statistics

#: Shingle width (paper 001: w = 4 is best).
DEFAULT_SHINGLE_WIDTH = 4
#: Chunk length in words (paper 003).
DEFAULT_CHUNK_WORDS = 5
#: Patricia matches must be longer than this many characters (paper 001 §2).
PATRICIA_MIN_MATCH = 15
#: Why a Patricia similarity can pass 100% (printed under tables that show one).
PATRICIA_OVER_100 = (
    "patricia counts every character of the scanned text inside a match, so a text that holds "
    "passages of the other more than once passes 100% (paper 001's counter; docs/overlap.md)"
)


def shingle_set(terms: Sequence[str], w: int = DEFAULT_SHINGLE_WIDTH) -> np.ndarray:
    """Sorted distinct 64-bit ids of the w-word shingles (a document shorter than w: one)."""
    if w < 1:
        raise ValueError(f"shingle width must be at least 1 (got {w})")
    return distinct(ngram_ids(terms, w, bits=64))


def chunk_set(terms: Sequence[str], n: int = DEFAULT_CHUNK_WORDS) -> np.ndarray:
    """Sorted distinct 32-bit ids of the n-word chunks (paper 003)."""
    return distinct(ngram_ids(terms, n, bits=32))


def _shared(a: np.ndarray, b: np.ndarray) -> int:
    return int(len(np.intersect1d(a, b, assume_unique=True)))


@dataclass(frozen=True)
class ShingleScores:
    """Shingle counts of A and B and their intersection, with the three measures."""

    a: int
    b: int
    shared: int

    @property
    def resemblance(self) -> float:
        union = self.a + self.b - self.shared
        return self.shared / union if union else 0.0

    @property
    def a_in_b(self) -> float:
        """Containment of A in B: |S(A)∩S(B)| / |S(A)|."""
        return self.shared / self.a if self.a else 0.0

    @property
    def b_in_a(self) -> float:
        """Containment of B in A: |S(A)∩S(B)| / |S(B)|."""
        return self.shared / self.b if self.b else 0.0


def shingles(a_terms: Sequence[str], b_terms: Sequence[str], w: int = DEFAULT_SHINGLE_WIDTH) -> ShingleScores:
    """Resemblance and both containments of two term sequences' w-shingles."""
    sa, sb = shingle_set(a_terms, w), shingle_set(b_terms, w)
    return ShingleScores(len(sa), len(sb), _shared(sa, sb))


def chunk_similarity(a_terms: Sequence[str], b_terms: Sequence[str], n: int = DEFAULT_CHUNK_WORDS) -> float:
    """Similarity of A to B (paper 003): share of A's distinct chunks also in B (0..1)."""
    ca, cb = chunk_set(a_terms, n), chunk_set(b_terms, n)
    return _shared(ca, cb) / len(ca) if len(ca) else 0.0


def patricia_counter(
    candidate: NormalizedText, suspicious: NormalizedText, min_match: int = PATRICIA_MIN_MATCH
) -> int:
    """S_c of paper 001's Figure 5: characters of the candidate matched in jumps > ``min_match``."""
    return counter_from(matching_statistics(candidate, suspicious), min_match)


def counter_from(ms: MatchingStatistics, min_match: int = PATRICIA_MIN_MATCH) -> int:
    """:func:`patricia_counter` from ``ms = matching_statistics(candidate, suspicious)``."""
    long = np.flatnonzero(ms.lengths > min_match)
    counter, k = 0, 0
    while k < len(long):
        i = long[k]
        length = int(ms.lengths[i])
        counter += length
        # Jump past the match, then on to the first long match at a word start beyond it.
        resume = np.searchsorted(ms.starts, ms.starts[i] + length)
        k = int(np.searchsorted(long, resume))
    return counter


def patricia(
    candidate: NormalizedText,
    suspicious: NormalizedText,
    min_match: int = PATRICIA_MIN_MATCH,
    ms: MatchingStatistics | None = None,
) -> float:
    """S_t = S_c / len_p: Patricia/SiString similarity of a candidate to the suspicious text.

    Usually 0..1, but the counter counts the *candidate's* matched characters: a candidate that
    repeats a passage of the suspicious text counts it each time, so a candidate holding the
    suspicious text twice scores 2 (see :data:`PATRICIA_OVER_100`). Kept as the paper defines it,
    since paper 001's Table 1 is measured with this counter. ``ms``: the matching statistics of
    the candidate against the suspicious text, when the caller has them already."""
    if len(suspicious) == 0:
        return 0.0
    if ms is None:
        ms = matching_statistics(candidate, suspicious)
    return counter_from(ms, min_match) / len(suspicious)
