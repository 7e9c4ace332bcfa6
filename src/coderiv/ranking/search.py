"""Ranking a collection against a whole document (SPEC §3), with absolute percentages.

:class:`Searcher` takes the measure per call (the library's general form); :class:`MeasureSearcher`
binds one measure and is the :class:`~coderiv.ranking.protocol.DocumentSearcher` the CLI and the
evaluation use. Scores come from the one kernel (:mod:`coderiv.ranking.kernel`); a top-k answer
goes through exact MaxScore-style pruning (:mod:`coderiv.ranking.topk`), while evaluation,
which needs every document's percentage, takes the full pass.
"""

from __future__ import annotations

import numpy as np

from coderiv.index.index import Index
from coderiv.ranking.kernel import PreparedQuery, all_scores, top_k
from coderiv.ranking.measures import DEFAULT_MEASURE, get_measure, self_score
from coderiv.ranking.percent import percent, score_floor
from coderiv.ranking.results import DocumentPercentages, Match, QueryResult
from coderiv.ranking.topk import pruned_top_k
from coderiv.text.analysis import AnalysisSettings


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
        number = self.index.number(doc_id)
        store = self.index.terms
        keys, vals = store.doc_keys(number)
        positions = store.lookup(keys)
        starts, ends = store.pointers(positions)
        return PreparedQuery(
            keys=np.asarray(keys, np.uint64),
            positions=positions,
            f_qt=np.asarray(vals, np.int64),
            f_t=ends - starts,
            f_q=int(self.index.doc_lengths[number]),
            n_terms=len(keys),
        )

    def scores(self, prepared: PreparedQuery, measure: str = DEFAULT_MEASURE) -> tuple[np.ndarray, float]:
        """Every document's raw score and the self-score (full pass; for evaluation)."""
        m = get_measure(measure)
        return all_scores(self.index, prepared, m), self_score(m, prepared.f_qt, prepared.f_t, self.index.n_docs, prepared.f_q)

    def percentages(self, prepared: PreparedQuery, measure: str = DEFAULT_MEASURE) -> np.ndarray:
        """Every document's absolute percentage 100 · S(q,d) / S(q,q) (zeros if S(q,q) = 0), in
        document-number order: entry i is document ``index.doc_ids[i]`` (:meth:`by_document`
        gives them with their ids)."""
        scores, own = self.scores(prepared, measure)
        return percent(scores, own)

    def by_document(self, prepared: PreparedQuery, measure: str = DEFAULT_MEASURE) -> DocumentPercentages:
        """Every document's absolute percentage, with its id (:class:`DocumentPercentages`)."""
        return DocumentPercentages(self.index.doc_ids, self.percentages(prepared, measure))

    def rank(
        self,
        prepared: PreparedQuery,
        measure: str = DEFAULT_MEASURE,
        top: int | None = 10,
        *,
        label: str = "",
        prune: bool = True,
        min_percent: float = 0.0,
    ) -> QueryResult:
        """The top documents with percentages; ``top=None`` ranks every scoring document.

        ``min_percent`` keeps only documents at or above that percentage, and lets the exact
        pruning skip far more work than a plain top-k (an absolute threshold is known upfront).
        """
        m = get_measure(measure)
        own = self_score(m, prepared.f_qt, prepared.f_t, self.index.n_docs, prepared.f_q)
        floor = score_floor(own, min_percent)
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
        note = ranking_note(own, len(prepared.positions), measure)
        return QueryResult(label, measure, own, prepared.f_q, len(prepared.positions), prepared.n_terms, matches, note)

    def search(
        self, text: str, measure: str = DEFAULT_MEASURE, top: int | None = 10, *, label: str = "", min_percent: float = 0.0
    ) -> QueryResult:
        """Rank the collection against the document ``text``."""
        return self.rank(self.prepare(text), measure, top, label=label, min_percent=min_percent)


def ranking_note(own: float, matched: int, measure: str) -> str | None:
    """Why every percentage is 0, when the self-score is (None otherwise)."""
    if own == 0 and matched == 0:
        return "no term of the query occurs in the collection: every percentage is 0"
    if own == 0:
        return (
            f"the query's self-score under {measure} is 0 (its terms carry no weight here, e.g. "
            "identity4 gives ln(N/f_t) = 0 to a term in every document): every percentage is 0"
        )
    return None


def search(index: Index, text: str, measure: str = DEFAULT_MEASURE, top: int | None = 10) -> QueryResult:
    """One-call form of :meth:`Searcher.search`."""
    return Searcher(index).search(text, measure, top)


class MeasureSearcher:
    """One ranking measure as a :class:`~coderiv.ranking.protocol.DocumentSearcher`."""

    unit = "terms"

    def __init__(self, index: Index, measure: str = DEFAULT_MEASURE, settings: AnalysisSettings | None = None) -> None:
        get_measure(measure)  # refuse an unknown measure at once
        self.method = measure
        self.searcher = Searcher(index, settings)

    def prepare(self, text: str) -> PreparedQuery:
        return self.searcher.prepare(text)

    def prepare_doc(self, doc_id: str) -> PreparedQuery:
        return self.searcher.prepare_doc(doc_id)

    def rank(self, prepared: PreparedQuery, top: int | None = 10, *, label: str = "", min_percent: float = 0.0) -> QueryResult:
        return self.searcher.rank(prepared, self.method, top, label=label, min_percent=min_percent)

    def percentages(self, prepared: PreparedQuery) -> np.ndarray:
        return self.searcher.percentages(prepared, self.method)
