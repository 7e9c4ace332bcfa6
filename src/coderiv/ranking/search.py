"""Ranking a collection against a whole document (SPEC §3), with absolute percentages.

One vectorized pass gathers the postings of the query's terms, evaluates the measure's term
part on each posting, sums per document (``np.bincount``) and applies the document part. For a
top-k answer, exact MaxScore-style pruning (:mod:`coderiv.ranking.pruning`) avoids most of that pass;
evaluation, which needs every document's percentage, uses the full pass.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from coderiv.errors import CoderivError
from coderiv.index.index import Index
from coderiv.keys.kinds import term_keys
from coderiv.ranking.measures import DEFAULT_MEASURE, Measure, get_measure, self_score
from coderiv.text.analysis import AnalysisSettings


@dataclass(frozen=True)
class Match:
    """One ranked document: its rank (1-based), absolute percentage, raw score and id."""

    rank: int
    percent: float
    score: float
    doc_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "percent": self.percent, "score": self.score, "doc_id": self.doc_id}


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


@dataclass
class PreparedQuery:
    """A query's terms looked up in the index: positions, f_qt, f_t and f_q."""

    positions: np.ndarray  # positions in the terms store of query terms present in the collection
    f_qt: np.ndarray
    f_t: np.ndarray
    f_q: int
    n_terms: int

    @property
    def length(self) -> int:
        """The query's length after analysis (f_q), as fingerprint queries name it too."""
        return self.f_q

    @classmethod
    def from_terms(cls, index: Index, terms: list[str]) -> PreparedQuery:
        counts = Counter(terms)
        keys = term_keys(list(counts))
        f_qt = np.fromiter(counts.values(), np.int64, len(counts))
        store = index.terms
        pos = store.lookup(keys)
        present = pos >= 0
        positions = pos[present]
        order = np.argsort(positions)
        positions = positions[order]
        return cls(
            positions=positions,
            f_qt=f_qt[present][order],
            f_t=np.asarray(store.ptr[positions + 1] - store.ptr[positions]),
            f_q=len(terms),
            n_terms=len(counts),
        )


def term_contributions(index: Index, prepared: PreparedQuery, measure: Measure, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(docs, contributions) of the postings of query terms ``which`` (indexes into prepared).

    A term's contribution depends only on its f_dt, a small integer, so the measure's term part
    is evaluated once per (term, possible f_dt) into a table, and each posting just looks its
    value up: one table lookup per posting instead of several float passes.
    """
    store = index.terms
    positions = prepared.positions[which]
    docs, vals, lengths = store.slices(positions)
    top = np.asarray(store.maxvals[positions], np.int64)
    offsets = np.concatenate(([0], np.cumsum(top + 1)[:-1]))
    width = int(top.sum() + len(top))
    row = np.repeat(np.arange(len(which)), top + 1)
    f_dt = np.arange(width) - offsets[row]
    table = measure.term(
        np.maximum(f_dt, 1).astype(np.float64),
        prepared.f_qt[which][row].astype(np.float64),
        prepared.f_t[which][row].astype(np.float64),
        float(index.n_docs),
    )
    return docs, table[np.repeat(offsets, lengths) + vals]


def all_scores(index: Index, prepared: PreparedQuery, measure: Measure) -> np.ndarray:
    """S(q,d) for every document (zeros where no term is shared): the full vectorized pass."""
    n = index.n_docs
    if len(prepared.positions) == 0:
        return np.zeros(n)
    docs, contributions = term_contributions(index, prepared, measure, np.arange(len(prepared.positions)))
    sums = np.bincount(docs, weights=contributions, minlength=n)
    touched = np.flatnonzero(sums)
    scores = np.zeros(n)
    lengths = np.asarray(index.doc_lengths, np.float64)[touched]
    norms = np.asarray(index.doc_norms)[touched]
    scores[touched] = sums[touched] * measure.doc(lengths, float(prepared.f_q), norms)
    return scores


def top_k(scores: np.ndarray, k: int | None) -> np.ndarray:
    """Document numbers of the k best scores, ties broken by document id (= number) ascending.

    Scores equal to 12 significant digits count as tied: summing the same contributions in
    another order (pruned or full pass, another machine) must not reorder equal documents.
    """
    candidates = np.flatnonzero(scores > 0)
    if not len(candidates):
        return candidates
    values = scores[candidates]
    key = np.round(values / values.max() * 1e12)
    if k is not None and len(candidates) > k:
        # keep everything tied with the k-th best so that the tie-break is by id, not by chance
        kth = np.partition(key, len(key) - k)[len(key) - k]
        keep = key >= kth
        candidates, key = candidates[keep], key[keep]
    ranked = candidates[np.lexsort((candidates, -key))]
    return ranked if k is None else ranked[:k]


class Searcher:
    """Ranks an index's documents against query documents; reuse it for a batch of queries."""

    def __init__(self, index: Index, settings: AnalysisSettings | None = None) -> None:
        if settings is not None:
            index.check_settings(settings)
        self.index = index

    def prepare(self, text: str) -> PreparedQuery:
        return PreparedQuery.from_terms(self.index, self.index.analyzer.terms(text))

    def prepare_doc(self, doc_id: str) -> PreparedQuery:
        """A document already in the index as the query (its stored term counts)."""
        number = self.index.doc_numbers.get(doc_id)
        if number is None:
            raise CoderivError(f"no document {doc_id!r} in the index")
        store = self.index.terms
        keys, vals = store.doc_keys(number)
        positions = store.lookup(keys)
        return PreparedQuery(
            positions=positions,
            f_qt=np.asarray(vals, np.int64),
            f_t=np.asarray(store.ptr[positions + 1] - store.ptr[positions]),
            f_q=int(self.index.doc_lengths[number]),
            n_terms=len(keys),
        )

    def scores(self, prepared: PreparedQuery, measure: str = DEFAULT_MEASURE) -> tuple[np.ndarray, float]:
        """Every document's raw score and the self-score (full pass; for evaluation)."""
        m = get_measure(measure)
        return all_scores(self.index, prepared, m), self_score(m, prepared.f_qt, prepared.f_t, self.index.n_docs, prepared.f_q)

    def percentages(self, prepared: PreparedQuery, measure: str = DEFAULT_MEASURE) -> np.ndarray:
        """Every document's absolute percentage 100 · S(q,d) / S(q,q) (zeros if S(q,q) = 0)."""
        scores, own = self.scores(prepared, measure)
        return percent(scores, own)

    def rank(
        self,
        prepared: PreparedQuery,
        measure: str = DEFAULT_MEASURE,
        top: int | None = 10,
        label: str = "",
        prune: bool = True,
        min_percent: float = 0.0,
    ) -> QueryResult:
        """The top documents with percentages; ``top=None`` ranks every scoring document.

        ``min_percent`` keeps only documents at or above that percentage, and lets the exact
        pruning skip far more work than a plain top-k (an absolute threshold is known upfront).
        """
        from coderiv.ranking.pruning import pruned_top_k

        m = get_measure(measure)
        own = self_score(m, prepared.f_qt, prepared.f_t, self.index.n_docs, prepared.f_q)
        floor = own * min_percent / 100.0 * (1 - 1e-12) if own > 0 else 0.0
        if prune:
            ranked, scores_of_ranked = pruned_top_k(self.index, prepared, m, top, floor)
        else:
            scores = all_scores(self.index, prepared, m)
            scores[scores < floor] = 0.0
            ranked = top_k(scores, top)
            scores_of_ranked = scores[ranked]
        matches = [
            Match(rank=i + 1, percent=float(percent(s, own)), score=float(s), doc_id=self.index.doc_ids[d])
            for i, (d, s) in enumerate(zip(ranked.tolist(), scores_of_ranked.tolist()))
        ]
        note = None
        if own == 0 and len(prepared.positions) == 0:
            note = "no term of the query occurs in the collection: every percentage is 0"
        elif own == 0:
            note = (
                f"the query's self-score under {measure} is 0 (its terms carry no weight here, e.g. "
                "identity4 gives ln(N/f_t) = 0 to a term in every document): every percentage is 0"
            )
        return QueryResult(label, measure, own, prepared.f_q, len(prepared.positions), prepared.n_terms, matches, note)

    def search(
        self, text: str, measure: str = DEFAULT_MEASURE, top: int | None = 10, label: str = "", min_percent: float = 0.0
    ) -> QueryResult:
        """Rank the collection against the document ``text``."""
        return self.rank(self.prepare(text), measure, top, label, min_percent=min_percent)


def percent(scores: np.ndarray | float, own: float) -> np.ndarray:
    """100 · S(q,d) / S(q,q); all zeros when the self-score is 0 (SPEC §3)."""
    if own <= 0:
        return np.zeros_like(np.asarray(scores, np.float64))
    return 100.0 * np.asarray(scores, np.float64) / own


def search(index: Index, text: str, measure: str = DEFAULT_MEASURE, top: int | None = 10) -> QueryResult:
    """One-call form of :meth:`Searcher.search`."""
    return Searcher(index).search(text, measure, top)
