"""Ranking a collection against whole documents: the measures as pure formulas
(:mod:`.measures`), the one scoring kernel (:mod:`.kernel`), exact top-k
(:mod:`.topk`), percentages and the threshold rule (:mod:`.percent`), and the searchers behind
one protocol (:mod:`.protocol`): ranking (:mod:`.search`), fingerprints
(:mod:`.fingerprint_search`), passage windows (:mod:`.passage_windows`), containment
(:mod:`.containment`: the share of the query in each document), chosen by
:mod:`.searchers`; many queries in one process, with limits and exclusions (:mod:`.batch`).
:mod:`.whoosh_models` offers the measures to whoosh users (extra ``whoosh``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderiv.lazy_names import lazy_names

if TYPE_CHECKING:
    from coderiv.ranking.batch import BatchItem, Limits, check_batch, query_documents, rank_query
    from coderiv.ranking.containment import ContainmentSearcher, open_with_chunks
    from coderiv.ranking.fingerprint_search import FingerprintSearcher
    from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES, Measure, get_measure
    from coderiv.ranking.passage_windows import PassageSearcher
    from coderiv.ranking.percent import meets_threshold, percent
    from coderiv.ranking.protocol import DocumentSearcher
    from coderiv.ranking.results import DocumentPercentages, Match, QueryResult
    from coderiv.ranking.search import MeasureSearcher, Searcher, search
    from coderiv.ranking.searchers import QUERY_METHODS, QueryOptions, make_searcher, rank_queries

__all__ = [
    "BatchItem", "ContainmentSearcher", "DEFAULT_MEASURE", "DocumentPercentages", "DocumentSearcher",
    "FingerprintSearcher", "Limits", "MEASURES", "Match", "Measure", "MeasureSearcher", "PassageSearcher",
    "QUERY_METHODS", "QueryOptions", "QueryResult", "Searcher", "check_batch", "get_measure", "make_searcher",
    "meets_threshold", "open_with_chunks", "percent", "query_documents", "rank_queries", "rank_query", "search",
]


__getattr__, __dir__ = lazy_names(__name__)  # the names of the TYPE_CHECKING block above
