"""Comparing two documents with every overlap method, both ways (``coderiv compare``).

Each method answers "how much of A is in B" and "how much of B is in A", as a percentage:

- shingles: resemblance |S(A)∩S(B)| / |S(A)∪S(B)| (symmetric: one value, shown once);
- containment: shingle containment |S(A)∩S(B)| / |S(A)| (and / |S(B)|);
- chunks: paper 003, the share of A's distinct n-word chunks also in B;
- patricia: paper 001 §2 with A as the suspicious document: B is scanned, matches longer than
  15 characters count, divided by A's length (83.9% for the paper's example); B repeating a
  passage of A counts it each time, so this one can pass 100%;
- matching: the share of A's text inside exact passages shared with B (matching statistics,
  paper 002), by the self-score rule: A against itself is 100%;
- aligned: the share of A's words (and of B's) inside the passages aligned across word edits
  (:mod:`coderiv.overlap.align`, issue 24); the passages are listed with their identical share.
- passages: SPEC §7, the share of A's 50-word passages matching one of B's at ≥ 50%.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from coderiv.errors import InputError, UnknownNameError
from coderiv.output import json_percent
from coderiv.overlap.align import AlignedPassage, align_texts
from coderiv.overlap.matching import (
    DEFAULT_THRESHOLD,
    MatchingStatistics,
    NormalizedText,
    Passage,
    coverage_percent,
    matching_statistics,
    normalize,
    passages_from,
)
from coderiv.overlap.pairwise import (
    DEFAULT_CHUNK_WORDS,
    DEFAULT_SHINGLE_WIDTH,
    PATRICIA_OVER_100,
    ShingleScores,
    chunk_similarity,
    patricia,
    shingles,
)
from coderiv.ranking.passage_windows import PASSAGE_STEP, PASSAGE_WORDS, passage_scores, split_passages
from coderiv.registry import Registry
from coderiv.text.analysis import Analyzer
from coderiv.text.exclusions import word_bounds
from coderiv.text.formats import LocationMap


@dataclass(frozen=True)
class MethodRow:
    """One method's percentages: how much of A is in B, and of B in A.

    A ``symmetric`` method (resemblance) has one value, the same both ways: ``a_in_b`` holds
    it, and it is shown and written once. ``over_100`` says how the method can pass 100%
    (empty for methods that cannot)."""

    method: str
    a_in_b: float
    b_in_a: float
    symmetric: bool = False
    over_100: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.symmetric:
            return {"method": self.method, "symmetric": True, "percent": json_percent(self.a_in_b)}
        return {"method": self.method, "a_in_b": json_percent(self.a_in_b), "b_in_a": json_percent(self.b_in_a)}


@dataclass
class Comparison:
    """The rows of every method asked for, the exact passages shared by A and B, and notes on
    methods left out (a method too costly for these texts, when it was not asked for by name)."""

    rows: list[MethodRow] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    aligned: list[AlignedPassage] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "methods": [r.to_dict() for r in self.rows], "passages": [p.to_dict() for p in self.passages],
            "aligned_passages": [p.to_dict() for p in self.aligned],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


#: The ``passages`` method scores every 50-word passage of A and of B against every passage of
#: both (both ways): its work grows with the square of the texts' passage count, unlike the other
#: methods, which are linear (docs/overlap.md). Past this many passage pairs (about 30 s on the
#: machine of docs/performance.md; two texts of ~175,000 words after stopping) it is refused.
DEFAULT_MAX_PASSAGE_PAIRS = 200_000_000

#: Besides its dense rows, ``passages`` visits, for each passage, the postings of each of its
#: distinct terms over every passage of A and B: Σ_t f_t² postings in all (f_t: passages holding
#: term t). Ordinary prose keeps that near the pair count (174 M postings for 81 M pairs, two
#: texts of 113,000 terms), but a paragraph repeated puts every term in every passage: one
#: paragraph repeated 2,000 times made 45 M pairs, under the pair limit, and 948 M to 2.9 G
#: postings (5 to 29 s; issue 44). Past this many postings ``passages`` is refused as past the
#: pair limit (docs/overlap.md).
DEFAULT_MAX_PASSAGE_POSTINGS = 500_000_000

#: The exact methods hold suffix arrays and per-character arrays of both texts: about 70 bytes of
#: memory and 1 s per million characters of A and B together (docs/overlap.md). Past this many
#: characters (about 2.3 GB) ``compare`` refuses rather than surprise a user with a machine's
#: worth of memory; a caller that has it raises the limit.
DEFAULT_MAX_CHARS = 32 * 1024 * 1024
BYTES_PER_CHAR = 70


def passage_pairs(a_terms: int, b_terms: int, size: int = PASSAGE_WORDS, step: int = PASSAGE_STEP) -> int:
    """How many (query passage, passage) pairs ``passages`` scores for texts of these lengths."""
    total = passage_count(a_terms, size, step) + passage_count(b_terms, size, step)
    return total * total


def passage_postings(a_terms: Sequence[str], b_terms: Sequence[str], size: int = PASSAGE_WORDS, step: int = PASSAGE_STEP) -> int:
    """How many postings ``passages`` visits for these texts, both ways: Σ_t f_t², f_t the number
    of passages of A and B holding term t (each passage of either text is a query passage once,
    and each of its distinct terms' postings is read over the passages of both). Linear to count."""
    held: Counter[str] = Counter()
    for terms in (a_terms, b_terms):
        for passage in split_passages(terms, size, step):
            held.update(set(passage))
    return sum(f * f for f in held.values())


def passage_count(n_terms: int, size: int = PASSAGE_WORDS, step: int = PASSAGE_STEP) -> int:
    """How many passages :func:`~coderiv.ranking.passage_windows.split_passages` makes of a text
    of ``n_terms`` terms."""
    if n_terms <= 0:
        return 0
    starts = (max(n_terms - size, 0)) // step + 1
    return starts + (1 if (starts - 1) * step + size < n_terms else 0)


@dataclass(frozen=True)
class TextPair:
    """Two texts prepared once for every method: their terms, normalized texts, parameters, and
    what several methods share, computed once: the matching statistics of A against B (the
    exact passages and Patricia's B-in-A) and of B against A (on first use: the matching and
    Patricia rows), and the shingle counts (shingles and containment). One suffix sort per
    direction instead of one per method (docs/performance.md)."""

    a_terms: list[str]
    b_terms: list[str]
    na: NormalizedText
    nb: NormalizedText
    width: int
    chunk_words: int
    threshold: int

    @cached_property
    def ms_ab(self) -> MatchingStatistics:
        return matching_statistics(self.na, self.nb)

    @cached_property
    def ms_ba(self) -> MatchingStatistics:
        return matching_statistics(self.nb, self.na)

    @cached_property
    def a_passages(self) -> list[Passage]:
        """The maximal exact passages of A found in B."""
        return passages_from(self.ms_ab, self.na, self.nb, self.threshold)

    @cached_property
    def aligned(self) -> list[AlignedPassage]:
        """A's passages aligned with B across word edits (raw characters of both)."""
        return align_texts(self.na.original, self.nb.original)

    @cached_property
    def shingle_scores(self) -> ShingleScores:
        return shingles(self.a_terms, self.b_terms, self.width)


def _shingles(p: TextPair) -> MethodRow:
    s = p.shingle_scores
    return MethodRow(f"shingles w={p.width}", 100 * s.resemblance, 100 * s.resemblance, symmetric=True)


def _containment(p: TextPair) -> MethodRow:
    s = p.shingle_scores
    return MethodRow(f"containment w={p.width}", 100 * s.a_in_b, 100 * s.b_in_a)


def _chunks(p: TextPair) -> MethodRow:
    return MethodRow(
        f"chunks n={p.chunk_words}",
        100 * chunk_similarity(p.a_terms, p.b_terms, p.chunk_words),
        100 * chunk_similarity(p.b_terms, p.a_terms, p.chunk_words),
    )


def _patricia(p: TextPair) -> MethodRow:
    return MethodRow(
        "patricia", 100 * patricia(p.nb, p.na, ms=p.ms_ba), 100 * patricia(p.na, p.nb, ms=p.ms_ab),
        over_100=PATRICIA_OVER_100,
    )


def _matching(p: TextPair) -> MethodRow:
    b_passages = passages_from(p.ms_ba, p.nb, p.na, p.threshold)
    return MethodRow(
        f"matching ≥{p.threshold}",
        coverage_percent(p.na, p.a_passages, "a", p.threshold),
        coverage_percent(p.nb, b_passages, "a", p.threshold),
    )


def _aligned(p: TextPair) -> MethodRow:
    """Share of A's words (and B's) inside the aligned passages."""
    a_total, b_total = len(word_bounds(p.na.original)[0]), len(word_bounds(p.nb.original)[0])
    a_words, b_words = sum(x.a_words for x in p.aligned), sum(x.b_words for x in p.aligned)
    return MethodRow(
        "aligned", 100.0 * a_words / a_total if a_total else 0.0, 100.0 * b_words / b_total if b_total else 0.0,
    )


def _passages(p: TextPair) -> MethodRow:
    return MethodRow(
        "passages",
        passage_scores(p.a_terms, [p.b_terms])[0].percent,
        passage_scores(p.b_terms, [p.a_terms])[0].percent,
    )


#: ``compare --method`` name -> the row it computes, in display order
COMPARE_METHODS: Registry[Callable[[TextPair], MethodRow]] = Registry("method")
for _name, _row in (
    ("shingles", _shingles), ("containment", _containment), ("chunks", _chunks),
    ("patricia", _patricia), ("matching", _matching), ("aligned", _aligned), ("passages", _passages),
):
    COMPARE_METHODS.add(_name, _row)


def check_methods(methods: list[str]) -> list[str]:
    """The methods, validated (``all`` stands for every one)."""
    if "all" in methods:
        return list(COMPARE_METHODS)
    for name in methods:
        if name not in COMPARE_METHODS:
            raise UnknownNameError(f"method must be one of {['all', *COMPARE_METHODS]!r} (got {name!r})")
    return methods


def compare_texts(
    a: str,
    b: str,
    methods: list[str] | None = None,
    analyzer: Analyzer | None = None,
    width: int = DEFAULT_SHINGLE_WIDTH,
    chunk_words: int = DEFAULT_CHUNK_WORDS,
    threshold: int = DEFAULT_THRESHOLD,
    max_passage_pairs: int = DEFAULT_MAX_PASSAGE_PAIRS,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_passage_postings: int = DEFAULT_MAX_PASSAGE_POSTINGS,
) -> Comparison:
    """Every method's percentages both ways, and the exact passages of at least ``threshold``
    characters (offsets into ``a`` and ``b``).

    ``passages`` past ``max_passage_pairs`` or ``max_passage_postings`` (its two costs, both
    counted before any is paid) is an error when asked for by name, and left out with a note
    when it comes with ``all`` (the default), so long texts still get the other methods in
    linear time."""
    if len(a) + len(b) > max_chars:
        raise InputError(
            f"A and B hold {len(a) + len(b):,} characters together, more than the limit of {max_chars:,} "
            f"(compare needs about {BYTES_PER_CHAR} bytes of memory a character: "
            f"{(len(a) + len(b)) * BYTES_PER_CHAR / 2**30:.1f} GB here); raise --max-chars to compare them"
        )
    by_name = bool(methods) and "all" not in (methods or [])
    methods = check_methods(methods or list(COMPARE_METHODS))
    analyzer = analyzer or Analyzer()
    a_terms, b_terms = analyzer.terms(a), analyzer.terms(b)
    notes: list[str] = []
    why = _passages_refused(a_terms, b_terms, max_passage_pairs, max_passage_postings) if "passages" in methods else None
    if why is not None:
        if by_name:
            raise InputError(why)
        methods = [m for m in methods if m != "passages"]
        notes.append(why)
    na, nb = normalize(a), normalize(b)
    pair = TextPair(a_terms, b_terms, na, nb, width, chunk_words, threshold)
    return Comparison([COMPARE_METHODS.get(m)(pair) for m in methods], pair.a_passages, notes, pair.aligned)


def _passages_refused(a_terms: list[str], b_terms: list[str], max_pairs: int, max_postings: int) -> str | None:
    """Why ``passages`` is not computed for these texts (None: within both limits)."""
    cost = passage_pairs(len(a_terms), len(b_terms))
    if cost > max_pairs:
        return (
            f"passages: these texts make {cost:,} passage pairs, more than the limit of {max_pairs:,} "
            "(its cost grows with the square of the texts' length); raise --max-passage-pairs to compute it"
        )
    postings = passage_postings(a_terms, b_terms)
    if postings > max_postings:
        return (
            f"passages: these texts make {postings:,} passage postings to read, more than the limit of {max_postings:,} "
            "(text repeated puts every term in every passage); raise --max-passage-postings to compute it"
        )
    return None


def passage_locations(passages: list[Passage], a: LocationMap, b: LocationMap) -> list[tuple[str | None, str | None]]:
    """Where each passage lies in A and in B as a person finds it (``"page 3-4"``,
    ``"paragraph 7"``), from the documents' location maps; ``None`` for a plain text."""
    return [(a.span(p.a_start, p.a_end), b.span(p.b_start, p.b_end)) for p in passages]

