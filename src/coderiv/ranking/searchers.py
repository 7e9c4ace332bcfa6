"""Choosing the searcher for ``coderiv query --method``: a registry of query methods, each a
factory of a :class:`~coderiv.ranking.protocol.DocumentSearcher` from the query options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coderiv.errors import CoderivError
from coderiv.index.index import Index
from coderiv.ranking.batch import Limits, rank_query
from coderiv.ranking.containment import ContainmentSearcher, open_with_chunks
from coderiv.ranking.fingerprint_search import FingerprintSearcher
from coderiv.ranking.measures import DEFAULT_MEASURE
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.results import QueryResult
from coderiv.ranking.search import MeasureSearcher
from coderiv.registry import Registry
from coderiv.text.analysis import AnalysisSettings


@dataclass(frozen=True)
class QueryOptions:
    """What a query asks for beyond its text: the measure (ranking), the fingerprint store and
    whether to fingerprint the query fully (fingerprint), the analysis settings it claims."""

    measure: str = DEFAULT_MEASURE
    strategy: str | None = None
    full_query: bool = False
    settings: AnalysisSettings | None = None


SearcherMaker = Callable[[Index, QueryOptions], DocumentSearcher[Any]]

#: ``--method`` name -> factory of its searcher
QUERY_METHODS: Registry[SearcherMaker] = Registry("query method")
DEFAULT_QUERY_METHOD = "ranking"


def _ranking(index: Index, options: QueryOptions) -> DocumentSearcher[Any]:
    if options.strategy is not None or options.full_query:
        raise CoderivError("--strategy and --full-query apply to --method fingerprint")
    return MeasureSearcher(index, options.measure, options.settings)


def _fingerprint(index: Index, options: QueryOptions) -> DocumentSearcher[Any]:
    return FingerprintSearcher(index, options.strategy, options.full_query, options.settings)


def _containment(index: Index, options: QueryOptions) -> DocumentSearcher[Any]:
    if options.strategy is not None or options.full_query:
        raise CoderivError("--strategy and --full-query apply to --method fingerprint")
    return ContainmentSearcher(open_with_chunks(index.root), settings=options.settings)  # adds the store if missing


QUERY_METHODS.add("ranking", _ranking)
QUERY_METHODS.add("fingerprint", _fingerprint)
QUERY_METHODS.add("containment", _containment)


def make_searcher(index: Index, method: str = DEFAULT_QUERY_METHOD, options: QueryOptions | None = None) -> DocumentSearcher[Any]:
    """The searcher of query method ``method`` over ``index`` (an error names a bad method)."""
    return QUERY_METHODS.get(method)(index, options or QueryOptions())


def rank_queries(
    index: Index,
    searcher: DocumentSearcher[Any],
    texts: list[tuple[str, str]],
    doc_ids: list[str],
    top: int | None = 10,
    min_percent: float = 0.0,
) -> list[QueryResult]:
    """Rank the collection against each query: ``texts`` as (label, text) pairs, then the
    indexed documents ``doc_ids``, within ``top`` and ``min_percent`` as
    :func:`coderiv.ranking.batch.rank_query` applies them (a note when ``top`` cuts documents
    at or above the threshold). A query without words after analysis is an error."""
    limits = Limits(top, min_percent)
    results = []
    for label, text in texts:
        prepared = searcher.prepare(text)
        if prepared.length == 0:
            raise CoderivError(f"{label} has no words after analysis ({index.settings.describe()})")
        results.append(rank_query(searcher, prepared, limits, label))
    results += [rank_query(searcher, searcher.prepare_doc(doc_id), limits, doc_id) for doc_id in doc_ids]
    return results
