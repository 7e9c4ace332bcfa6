"""What every searcher returns: a ranked list of documents with absolute percentages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from coderiv.output import json_percent
from coderiv.ranking.kernel import top_k
from coderiv.ranking.percent import meets_threshold, percent


@dataclass(frozen=True)
class Match:
    """One ranked document: its rank (1-based), absolute percentage, raw score and id."""

    rank: int
    percent: float
    score: float
    doc_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "percent": json_percent(self.percent), "score": self.score, "doc_id": self.doc_id}


#: The note of a result whose query has nothing to match (a self-score of 0) ...
NO_WORDS = "the query has no words after analysis: every percentage is 0"
#: ... and of a fingerprint query whose fingerprint is empty.
EMPTY_FINGERPRINT = "the query's fingerprint is empty (no phrase selected): every percentage is 0"


@dataclass
class QueryResult:
    """A ranked list for one query, with the self-score every percentage is relative to."""

    query: str
    measure: str
    self_score: float
    query_length: int
    matched_terms: int
    query_terms: int
    matches: list[Match]
    note: str | None = None

    @classmethod
    def ranked(
        cls, scores: np.ndarray, own: float, doc_ids: Sequence[str], top: int | None, min_percent: float, *,
        label: str, method: str, query_length: int, matched: int, query_terms: int, empty: str,
    ) -> QueryResult:
        """The top documents of ``scores`` (:func:`ranked_matches`) as one query's result; its note
        is ``empty`` when the self-score is 0 (every percentage is then 0)."""
        matches = ranked_matches(scores, own, doc_ids, top, min_percent)
        return cls(label, method, own, query_length, matched, query_terms, matches, empty if own == 0 else None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON output's object, its keys in this order."""
        fields = ("query", "measure", "self_score", "query_length", "query_terms", "matched_terms", "note")
        return {name: getattr(self, name) for name in fields} | {"matches": [m.to_dict() for m in self.matches]}


@dataclass(frozen=True)
class DocumentPercentages:
    """Every document's absolute percentage against one query, with the ids they belong to:
    ``percents[i]`` is the percentage of document ``doc_ids[i]`` (document-number order, as the
    index numbers them)."""

    doc_ids: Sequence[str]
    percents: np.ndarray

    def __len__(self) -> int:
        return len(self.doc_ids)

    def by_id(self) -> dict[str, float]:
        """{document id: percentage} of every document."""
        return dict(zip(self.doc_ids, self.percents.tolist()))

    def ranked(self, min_percent: float = 0.0) -> list[tuple[str, float]]:
        """(id, percentage) of the documents above 0% and at or above ``min_percent``, best first
        (ties by id)."""
        order = sorted(range(len(self.doc_ids)), key=lambda i: (-float(self.percents[i]), self.doc_ids[i]))
        return [
            (self.doc_ids[i], float(self.percents[i]))
            for i in order
            if self.percents[i] > 0 and self.percents[i] >= min_percent
        ]


def ranked_matches(
    scores: np.ndarray, own: float, doc_ids: Sequence[str], top: int | None, min_percent: float = 0.0
) -> list[Match]:
    """The top documents by raw score (ties by document number), each with its absolute
    percentage 100 · score / own, keeping only those that pass ``min_percent`` (the one
    threshold rule of :mod:`coderiv.ranking.percent`)."""
    percentages = percent(scores, own)
    ranked = top_k(np.where(meets_threshold(percentages, min_percent), scores, 0.0), top)
    return [
        Match(rank=i + 1, percent=float(percentages[d]), score=float(scores[d]), doc_id=doc_ids[d])
        for i, d in enumerate(ranked.tolist())
    ]
