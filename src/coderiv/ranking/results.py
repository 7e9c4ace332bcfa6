"""What every searcher returns: a ranked list of documents with absolute percentages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coderiv.output import json_percent


@dataclass(frozen=True)
class Match:
    """One ranked document: its rank (1-based), absolute percentage, raw score and id."""

    rank: int
    percent: float
    score: float
    doc_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "percent": json_percent(self.percent), "score": self.score, "doc_id": self.doc_id}


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "measure": self.measure,
            "self_score": self.self_score,
            "query_length": self.query_length,
            "query_terms": self.query_terms,
            "matched_terms": self.matched_terms,
            "note": self.note,
            "matches": [m.to_dict() for m in self.matches],
        }
