"""Comparing two documents with every overlap method, both ways (``coderiv compare``).

Each method answers "how much of A is in B" and "how much of B is in A", as a percentage:

- shingles: resemblance |S(A)∩S(B)| / |S(A)∪S(B)| (the same both ways);
- containment: shingle containment |S(A)∩S(B)| / |S(A)| (and / |S(B)|);
- chunks: paper 003, the share of A's distinct n-word chunks also in B;
- patricia: paper 001 §2 with A as the suspicious document: B is scanned, matches longer than
  15 characters count, divided by A's length (83.9% for the paper's example);
- matching: the share of A's text inside exact passages shared with B (matching statistics,
  paper 002), by the self-score rule: A against itself is 100%;
- passages: SPEC §7, the share of A's 50-word passages matching one of B's at ≥ 50%.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coderiv.errors import UnknownNameError
from coderiv.overlap.matching import DEFAULT_THRESHOLD, Passage, coverage_percent, normalize, shared_passages
from coderiv.overlap.pairwise import DEFAULT_CHUNK_WORDS, DEFAULT_SHINGLE_WIDTH, chunk_similarity, patricia, shingles
from coderiv.ranking.passages import passage_scores
from coderiv.text.analysis import Analyzer

COMPARE_METHODS = ("shingles", "containment", "chunks", "patricia", "matching", "passages")


@dataclass(frozen=True)
class MethodRow:
    """One method's percentages: how much of A is in B, and of B in A."""

    method: str
    a_in_b: float
    b_in_a: float

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "a_in_b": self.a_in_b, "b_in_a": self.b_in_a}


@dataclass
class Comparison:
    """The rows of every method asked for, and the exact passages shared by A and B."""

    rows: list[MethodRow] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"methods": [r.to_dict() for r in self.rows], "passages": [p.to_dict() for p in self.passages]}


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
) -> Comparison:
    """Every method's percentages both ways, and the exact passages of at least ``threshold``
    characters (offsets into ``a`` and ``b``)."""
    methods = check_methods(methods or list(COMPARE_METHODS))
    analyzer = analyzer or Analyzer()
    a_terms, b_terms = analyzer.terms(a), analyzer.terms(b)
    na, nb = normalize(a), normalize(b)
    result = Comparison()
    a_passages = shared_passages(na, nb, threshold)
    result.passages = a_passages
    for method in methods:
        if method == "shingles":
            s = shingles(a_terms, b_terms, width)
            row = MethodRow(f"shingles w={width}", 100 * s.resemblance, 100 * s.resemblance)
        elif method == "containment":
            s = shingles(a_terms, b_terms, width)
            row = MethodRow(f"containment w={width}", 100 * s.a_in_b, 100 * s.b_in_a)
        elif method == "chunks":
            row = MethodRow(
                f"chunks n={chunk_words}",
                100 * chunk_similarity(a_terms, b_terms, chunk_words),
                100 * chunk_similarity(b_terms, a_terms, chunk_words),
            )
        elif method == "patricia":
            row = MethodRow("patricia", 100 * patricia(nb, na), 100 * patricia(na, nb))
        elif method == "matching":
            b_passages = shared_passages(nb, na, threshold)
            row = MethodRow(
                f"matching ≥{threshold}",
                coverage_percent(na, a_passages, "a", threshold),
                coverage_percent(nb, b_passages, "a", threshold),
            )
        else:  # passages
            row = MethodRow(
                "passages",
                passage_scores(a_terms, [b_terms])[0].percent,
                passage_scores(b_terms, [a_terms])[0].percent,
            )
        result.rows.append(row)
    return result
