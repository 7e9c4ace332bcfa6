"""Exact overlap by matching statistics over word-start suffixes (paper 002; SPEC §6).

For each word start i of a *candidate* text, ms(i) is the length of the longest prefix of the
candidate from i that occurs in the *suspicious* text starting at one of its word starts. Maximal
matches of at least a threshold (60 characters by default) are the exact shared passages: no hash
can fake them, so they verify candidates found by hashing or ranking.

**Structure.** Instead of paper 002's word-start suffix tree we use a suffix array with its LCP
array (``pydivsufsort``: divsufsort and Kasai's algorithm, in C) over the UTF-8 bytes of
``suspicious + 0xFF + candidate`` (0xFF never occurs in UTF-8, so no match crosses it). Keeping
only word-start suffixes of the array gives the word-start suffix array in lexicographic order;
the LCP of two of its neighbours is the minimum of the full LCP array between them. The longest
match of a candidate suffix with any suspicious word-start suffix is then its LCP with the
nearest suspicious entry above or below it, found with two vectorized segmented running minima.
Everything after the suffix sort is O(n) numpy; a 1 MB suspicious text against 3.5 MB of
candidates takes well under a second (``benchmarks/bench_matching.py``).

**Text.** Both texts are normalized first, the same way (:func:`normalize`): case folded,
every run of whitespace made one space, leading and trailing whitespace dropped, so that the
same passage wrapped differently or in another format still matches. Lengths are counted in
characters (Unicode code points) of the normalized text; passages carry offsets into the
*original* texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from pydivsufsort import divsufsort, kasai

from coderiv.text.analysis import WORD_RE

#: Shortest exact passage reported by default (paper 002 uses 60-character chunks).
DEFAULT_THRESHOLD = 60



@lru_cache(maxsize=65536)
def _char_class(code: int) -> tuple[int, bool, bool]:
    """(folded code point, is whitespace, is a word character) of one code point."""
    char = chr(code)
    folded = char.casefold()
    if len(folded) != 1:  # ß → ss and the like: keep one character per character
        folded = char.lower() if len(char.lower()) == 1 else char
    return ord(folded), char.isspace(), WORD_RE.fullmatch(char) is not None


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


@dataclass(frozen=True)
class NormalizedText:
    """A text made ready for exact matching.

    ``text`` is the normalized text; ``origin[k]`` is the offset in the original text of its
    k-th character (``origin[len(text)]`` is the original length); ``word_starts`` are the
    positions in ``text`` where a word (:data:`coderiv.text.analysis.WORD_RE`) begins; ``original``
    is the text as given.
    """

    text: str
    origin: np.ndarray
    word_starts: np.ndarray
    original: str = ""

    def __len__(self) -> int:
        return len(self.text)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Offsets in the original text of the normalized characters [start, end)."""
        if end <= start:
            return int(self.origin[start]), int(self.origin[start])
        return int(self.origin[start]), int(self.origin[end - 1]) + 1


def normalize(text: str) -> NormalizedText:
    """Case fold, collapse whitespace runs to one space, strip; keep offsets to the original."""
    codes = _codes(text)
    if len(codes) == 0:
        return NormalizedText("", np.zeros(1, np.int64), np.empty(0, np.int64), text)
    # One table entry per code point present (a few hundred), looked up for every character.
    present = np.flatnonzero(np.bincount(codes))
    classes = [_char_class(int(c)) for c in present]
    table_size = int(present[-1]) + 1
    fold_table = np.zeros(table_size, np.uint32)
    space_table = np.zeros(table_size, bool)
    word_table = np.zeros(table_size, bool)
    fold_table[present] = [c[0] for c in classes]
    space_table[present] = [c[1] for c in classes]
    word_table[present] = [c[2] for c in classes]
    folded, space, word = fold_table[codes], space_table[codes], word_table[codes]
    keep = ~space
    # Keep the first space of every interior run of whitespace.
    nonspace = np.flatnonzero(~space)
    if len(nonspace) == 0:
        return NormalizedText("", np.array([len(codes)], np.int64), np.empty(0, np.int64), text)
    first, last = nonspace[0], nonspace[-1]
    run_start = space & np.concatenate(([True], ~space[:-1]))
    run_start[:first] = False
    run_start[last + 1 :] = False
    keep |= run_start
    kept = np.flatnonzero(keep)
    out = np.where(space[kept], np.uint32(32), folded[kept]).astype("<u4")
    is_word = word[kept]
    starts = np.flatnonzero(is_word & np.concatenate(([True], ~is_word[:-1])))
    origin = np.append(kept, len(codes)).astype(np.int64)
    return NormalizedText(out.tobytes().decode("utf-32-le", "surrogatepass"), origin, starts.astype(np.int64), text)


@dataclass(frozen=True)
class _Encoded:
    """The UTF-8 bytes of a normalized text with the maps between bytes and characters."""

    data: bytes
    char_byte: np.ndarray  # byte offset of each character, plus the total length
    whole_chars: np.ndarray  # whole_chars[b]: characters wholly inside bytes [0, b)


def _encode(norm: NormalizedText) -> _Encoded:
    data = norm.text.encode("utf-8", "surrogatepass")
    raw = np.frombuffer(data, np.uint8)
    lead = (raw & 0xC0) != 0x80
    char_byte = np.append(np.flatnonzero(lead), len(raw)).astype(np.int64)
    counted = np.concatenate(([0], np.cumsum(lead, dtype=np.int64)))
    boundary = np.append(lead, True)
    return _Encoded(data, char_byte, counted - (~boundary).astype(np.int64))


@dataclass(frozen=True)
class MatchingStatistics:
    """ms(i) at every word start of the candidate (all arrays aligned, positions ascending).

    ``starts``: word starts of the candidate (normalized characters); ``lengths``: ms, in
    characters; ``sources``: where in the suspicious text a longest match starts (meaningful
    when the length is positive).
    """

    starts: np.ndarray
    lengths: np.ndarray
    sources: np.ndarray


def _segmented_cummin(values: np.ndarray, segment: np.ndarray, big: int) -> np.ndarray:
    """Running minimum of ``values`` restarting wherever ``segment`` (non-decreasing) grows."""
    shifted = values.astype(np.int64) - segment.astype(np.int64) * big
    return np.minimum.accumulate(shifted) + segment.astype(np.int64) * big


def _nearest_lcp(is_s: np.ndarray, adjacent: np.ndarray, big: int) -> tuple[np.ndarray, np.ndarray]:
    """For every entry, the LCP with the nearest suspicious entry before it, and that entry.

    ``adjacent[j]`` is the LCP of entries j and j+1. Entries with no suspicious entry before
    them get LCP 0 and index -1.
    """
    m = len(is_s)
    seg = np.cumsum(is_s)  # suspicious entries at or before each entry
    lcp = np.zeros(m, np.int64)
    if m > 1:
        running = _segmented_cummin(adjacent, seg[:-1], big)
        lcp[1:] = np.where(seg[:-1] > 0, running, 0)
    lcp[is_s] = 0
    owner = np.maximum.accumulate(np.where(is_s, np.arange(m), -1))
    return lcp, owner


def matching_statistics(candidate: NormalizedText, suspicious: NormalizedText) -> MatchingStatistics:
    """ms(i) for every word start i of ``candidate`` against the word starts of ``suspicious``."""
    return matching_statistics_many([candidate], suspicious)[0]


def matching_statistics_many(
    candidates: list[NormalizedText], suspicious: NormalizedText
) -> list[MatchingStatistics]:
    """Matching statistics of several candidates against one suspicious text, in one suffix
    sort (paper 002's setting: one suspicious document, the candidates found for it).

    The joined text is ``suspicious + 0xFF + c1 + 0xFE + c2 + 0xFE …``: 0xFF occurs once and
    0xFE only inside the candidates' part, so a common prefix of a suspicious and a candidate
    suffix never runs past the end of either text.
    """
    s_enc = _encode(suspicious)
    c_encs = [_encode(c) for c in candidates]
    if len(suspicious.word_starts) == 0 or all(len(c.word_starts) == 0 for c in candidates):
        return [_empty(c) for c in candidates]
    bases = np.cumsum([len(s_enc.data) + 1] + [len(e.data) + 1 for e in c_encs])[:-1]
    joined = b"".join([s_enc.data, b"\xff", *(e.data + b"\xfe" for e in c_encs)])
    label = np.zeros(len(joined), np.int8)
    label[s_enc.char_byte[suspicious.word_starts]] = 1
    for base, enc, cand in zip(bases, c_encs, candidates):
        label[base + enc.char_byte[cand.word_starts]] = 2
    sa = divsufsort(joined)
    lcp = kasai(joined, sa)  # lcp[i] = LCP(sa[i], sa[i + 1])
    picked = np.flatnonzero(label[sa] != 0)
    positions = sa[picked].astype(np.int64)
    is_s = label[positions] == 1
    if len(picked) > 1:
        adjacent = np.minimum.reduceat(lcp[: picked[-1]], picked[:-1]).astype(np.int64)
    else:
        adjacent = np.empty(0, np.int64)
    big = len(joined) + 1
    before, before_owner = _nearest_lcp(is_s, adjacent, big)
    after_r, after_owner_r = _nearest_lcp(is_s[::-1], adjacent[::-1], big)
    after = after_r[::-1]
    after_owner = np.where(after_owner_r[::-1] >= 0, len(is_s) - 1 - after_owner_r[::-1], -1)
    use_after = after > before
    best = np.where(use_after, after, before)
    owner = np.where(use_after, after_owner, before_owner)

    rows = np.flatnonzero(~is_s)
    rows = rows[np.argsort(positions[rows], kind="stable")]  # text order, candidate by candidate
    which = np.searchsorted(bases, positions[rows], side="right") - 1
    bounds = np.searchsorted(which, np.arange(len(candidates) + 1))
    results = []
    for k, (base, enc) in enumerate(zip(bases, c_encs)):
        mine = rows[bounds[k] : bounds[k + 1]]
        c_bytes = positions[mine] - base
        starts = enc.whole_chars[c_bytes]
        lengths = enc.whole_chars[c_bytes + best[mine]] - starts
        source_bytes = positions[np.maximum(owner[mine], 0)]
        sources = np.where(lengths > 0, s_enc.whole_chars[np.minimum(source_bytes, len(s_enc.data))], 0)
        results.append(MatchingStatistics(starts, lengths, sources))
    return results


def _empty(candidate: NormalizedText) -> MatchingStatistics:
    zeros = np.zeros(len(candidate.word_starts), np.int64)
    return MatchingStatistics(candidate.word_starts.copy(), zeros, zeros.copy())


@dataclass(frozen=True)
class Passage:
    """An exact shared passage: characters [a_start, a_end) of A equal [b_start, b_end) of B
    after normalization. Offsets are into the original texts; ``length`` counts normalized
    characters; ``text`` is the passage as A has it."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int
    length: int
    text: str

    def excerpt(self, width: int = 60) -> str:
        """The passage shortened to about ``width`` characters for display."""
        flat = " ".join(self.text.split())
        if len(flat) <= width:
            return flat
        half = (width - 5) // 2
        return f"{flat[:half]} ... {flat[-half:]}"

    def to_dict(self) -> dict[str, int | str]:
        return {
            "a_start": self.a_start, "a_end": self.a_end, "b_start": self.b_start, "b_end": self.b_end,
            "length": self.length, "excerpt": self.excerpt(),
        }


def maximal_matches(ms: MatchingStatistics, threshold: int = DEFAULT_THRESHOLD) -> np.ndarray:
    """Indexes (into ``ms``) of the maximal matches at least ``threshold`` characters long.

    The match at a word start is maximal when it is not part of the match of an earlier word
    start, i.e. it ends further right than every earlier match.
    """
    if threshold < 1:
        raise ValueError(f"threshold must be at least 1 (got {threshold})")
    ends = ms.starts + ms.lengths
    if len(ends) == 0:
        return np.empty(0, np.int64)
    reach = np.concatenate(([-1], np.maximum.accumulate(ends)[:-1]))
    return np.flatnonzero((ends > reach) & (ms.lengths >= threshold))


def shared_passages(
    a: NormalizedText, b: NormalizedText, threshold: int = DEFAULT_THRESHOLD
) -> list[Passage]:
    """The maximal exact passages of A found in B (A scanned as the candidate), in A's order."""
    return passages_from(matching_statistics(a, b), a, b, threshold)


def passages_from(
    ms: MatchingStatistics, a: NormalizedText, b: NormalizedText, threshold: int = DEFAULT_THRESHOLD
) -> list[Passage]:
    """:func:`shared_passages` from ``ms = matching_statistics(a, b)`` already computed (a caller
    that needs the statistics for another measure too sorts the suffixes once)."""
    passages = []
    for k in maximal_matches(ms, threshold):
        start, length, source = int(ms.starts[k]), int(ms.lengths[k]), int(ms.sources[k])
        a_start, a_end = a.span(start, start + length)
        b_start, b_end = b.span(source, source + length)
        passages.append(Passage(a_start, a_end, b_start, b_end, length, a.original[a_start:a_end]))
    return passages


def covered(norm: NormalizedText, passages: list[Passage], side: str = "a") -> int:
    """Normalized characters of ``norm`` inside the union of the passages' spans on ``side``."""
    if not passages or len(norm) == 0:
        return 0
    mark = np.zeros(len(norm) + 1, np.int64)
    first = np.searchsorted(norm.origin, [getattr(p, f"{side}_start") for p in passages])
    last = np.searchsorted(norm.origin, [getattr(p, f"{side}_end") for p in passages])
    np.add.at(mark, first, 1)
    np.add.at(mark, last, -1)
    return int(np.count_nonzero(np.cumsum(mark)[: len(norm)] > 0))


def self_covered(norm: NormalizedText, threshold: int = DEFAULT_THRESHOLD) -> int:
    """Characters a text covers against itself: from its first word start to the end (one
    passage), or 0 when that is shorter than ``threshold`` (the self-score of SPEC §3's rule)."""
    if len(norm.word_starts) == 0:
        return 0
    whole = len(norm) - int(norm.word_starts[0])
    return whole if whole >= threshold else 0


def coverage_percent(
    norm: NormalizedText, passages: list[Passage], side: str = "a", threshold: int = DEFAULT_THRESHOLD
) -> float:
    """100 · characters covered by the passages / characters the text covers against itself
    (absolute percentage by the self-score rule; 0 when the text is too short to have a passage)."""
    own = self_covered(norm, threshold)
    return 100.0 * covered(norm, passages, side) / own if own else 0.0
