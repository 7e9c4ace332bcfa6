"""The one place a searcher is chosen: a registry of query methods (``coderiv query --method``,
the evaluation's method names, the report and the web app all go through it), each with its
searcher over one index and over a sharded index, and the store it needs.

Adding a query method is one entry here (and its test)::

    QUERY_METHODS.add("ranking", QueryMethod(
        single=lambda index, o: MeasureSearcher(index, o.measure, o.settings),
        sharded=lambda index, o: ShardedMeasureSearcher(index, o.measure, o.settings, o.fanout),
    ))

``sharded=None`` makes the method one index's only; the error saying so is written once,
from the registry's names. The kind of index is never tested here either: the index
(:class:`~coderiv.index.reader.IndexReader`) calls back the factory of its kind (``dispatch``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from coderiv.errors import CoderivError
from coderiv.index.index import Index
from coderiv.index.reader import IndexReader, open_index
from coderiv.index.shards import ShardedIndex
from coderiv.keys.kinds import StoreSpec
from coderiv.progress import Progress
from coderiv.ranking.batch import Limits, rank_query
from coderiv.ranking.containment import ChunkSearcher, ContainmentSearcher, chunk_store_spec
from coderiv.ranking.fanout import DaskFanout, Fanout
from coderiv.ranking.fingerprint_search import FingerprintSearcher
from coderiv.ranking.measures import DEFAULT_MEASURE
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.results import QueryResult
from coderiv.ranking.search import MeasureSearcher
from coderiv.ranking.sharded import ShardedFingerprintSearcher, ShardedMeasureSearcher
from coderiv.ranking.sharded_containment import ShardedContainmentSearcher
from coderiv.registry import Registry
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import Markup

S = TypeVar("S")


@dataclass(frozen=True)
class QueryOptions:
    """What a query asks for beyond its text: the measure (ranking), the fingerprint store and
    whether to fingerprint the query fully (fingerprint), the analysis settings it claims, and
    who runs a sharded index's shard steps (default: threads of this process)."""

    measure: str = DEFAULT_MEASURE
    strategy: str | None = None
    full_query: bool = False
    settings: AnalysisSettings | None = None
    fanout: Fanout | None = None

    def check_no_fingerprint(self) -> None:
        """Refuse the fingerprint-only options (for every other method)."""
        if self.strategy is not None or self.full_query:
            raise CoderivError("--strategy and --full-query apply to --method fingerprint")


SearcherMaker = Callable[[Index, QueryOptions], DocumentSearcher[Any]]
ShardedSearcherMaker = Callable[[ShardedIndex, QueryOptions], DocumentSearcher[Any]]


@dataclass(frozen=True)
class QueryMethod:
    """A query method: its searcher over one index, over a sharded index (None: one index's
    only), the store it reads that :func:`make_searcher` and :func:`open_for_method` add to
    an index lacking it (None: every index has what it needs), and how its evaluation methods
    are named (``coderiv evaluate``, :mod:`coderiv.evaluation.methods`): :data:`BY_ITSELF`
    (``containment``), :data:`BY_MEASURE` (one per measure: ``identity5``, ``cosine``…) or
    :data:`BY_STRATEGY` (``fingerprint:STRATEGY…``)."""

    single: SearcherMaker
    sharded: ShardedSearcherMaker | None = None
    store: StoreSpec | None = None
    evaluated: str = "itself"


#: :attr:`QueryMethod.evaluated`: one evaluation method named as the query method ...
BY_ITSELF = "itself"
#: ... one per ranking measure, named as the measure (``QueryOptions.measure``) ...
BY_MEASURE = "measure"
#: ... or a family ``METHOD:STRATEGY[:KEY=VALUE…][:full-query]`` (``QueryOptions.strategy``).
BY_STRATEGY = "strategy"


#: ``--method`` name -> its searchers
QUERY_METHODS: Registry[QueryMethod] = Registry("query method")
DEFAULT_QUERY_METHOD = "ranking"


def _ranking(index: Index, options: QueryOptions) -> DocumentSearcher[Any]:
    options.check_no_fingerprint()
    return MeasureSearcher(index, options.measure, options.settings)


def _sharded_ranking(index: ShardedIndex, options: QueryOptions) -> DocumentSearcher[Any]:
    options.check_no_fingerprint()
    return ShardedMeasureSearcher(index, options.measure, options.settings, options.fanout)


def _containment(index: Index, options: QueryOptions) -> ChunkSearcher:
    options.check_no_fingerprint()
    return ContainmentSearcher(index, settings=options.settings)


def _sharded_containment(index: ShardedIndex, options: QueryOptions) -> ChunkSearcher:
    options.check_no_fingerprint()
    return ShardedContainmentSearcher(index, settings=options.settings, fanout=options.fanout)


QUERY_METHODS.add("ranking", QueryMethod(_ranking, _sharded_ranking, evaluated=BY_MEASURE))
QUERY_METHODS.add("fingerprint", QueryMethod(
    lambda index, o: FingerprintSearcher(index, o.strategy, o.full_query, o.settings),
    lambda index, o: ShardedFingerprintSearcher(index, o.strategy, o.full_query, o.settings, o.fanout),
    evaluated=BY_STRATEGY,
))
QUERY_METHODS.add("containment", QueryMethod(_containment, _sharded_containment, chunk_store_spec()))


def not_on_sharded(what: str) -> CoderivError:
    """The one error for what a sharded index cannot do, naming the query methods it can."""
    names = [name for name in QUERY_METHODS.names() if QUERY_METHODS[name].sharded is not None]
    choices = ", ".join(names[:-1]) + (" or " if len(names) > 1 else "") + names[-1]
    return CoderivError(f"{what} is not available on a sharded index; use {choices}")


def searcher_for(index: IndexReader, method: str = DEFAULT_QUERY_METHOD, options: QueryOptions | None = None) -> DocumentSearcher[Any]:
    """The searcher of query method ``method`` over ``index`` as it is (a method whose store
    the index lacks is a one-line error; :func:`make_searcher` adds it)."""
    entry = QUERY_METHODS.get(method)
    chosen = options or QueryOptions()

    def on_sharded(sharded: ShardedIndex) -> DocumentSearcher[Any]:
        if entry.sharded is None:
            raise not_on_sharded(f"--method {method}")
        return entry.sharded(sharded, chosen)

    return index.dispatch(lambda one: entry.single(one, chosen), on_sharded)


def chunk_searcher(index: IndexReader, options: QueryOptions | None = None) -> ChunkSearcher:
    """The ``containment`` method's searcher, typed with the cover and chunk frequencies the
    evidence report reads (the index must hold the chunk store)."""
    chosen = options or QueryOptions()
    return index.dispatch(lambda one: _containment(one, chosen), lambda many: _sharded_containment(many, chosen))


def single_only(make: Callable[[Index], S], what: str, refusal: str | None = None) -> Callable[[IndexReader], S]:
    """``make`` for what only one index offers (the evaluation's passages and verified methods,
    its analysis variants): on a sharded index, ``refusal`` or else :func:`not_on_sharded`'s
    error for the method ``what``."""

    def refuse(_: ShardedIndex) -> S:
        raise CoderivError(refusal) if refusal is not None else not_on_sharded(what)

    return lambda index: index.dispatch(make, refuse)


def dask_fanout(index: IndexReader, client: Callable[[], Any]) -> Fanout:
    """The shards' steps of ``index`` as tasks on a Dask cluster (``client()`` connects to it;
    only a sharded index has shards: one index is a one-line error, before connecting)."""

    def one(_: Index) -> Fanout:
        raise CoderivError("--dask applies to a sharded index (built with 'coderiv index --shards K')")

    return index.dispatch(one, lambda sharded: DaskFanout(sharded, client()))


def make_searcher(
    index: IndexReader, method: str = DEFAULT_QUERY_METHOD, options: QueryOptions | None = None,
    announce: Callable[[str], Any] | None = None, progress: Progress | None = None,
) -> DocumentSearcher[Any]:
    """The searcher of query method ``method`` over ``index`` (an error names a bad method),
    the store the method reads added first if the index lacks it (re-reading its source:
    ``announce`` is told so, ``progress`` follows the bytes read)."""
    store = QUERY_METHODS.get(method).store
    if store is None:
        return searcher_for(index, method, options)
    from coderiv.index.builder.stores import with_store

    reader = with_store(index, store, announce=announce, progress=progress)
    return searcher_for(reader, method, options)


def open_for_method(
    path: str | os.PathLike[str] | None, method: str = DEFAULT_QUERY_METHOD, announce: Callable[[str], Any] | None = None,
    progress: Progress | None = None, markup: Markup | None = None,
) -> IndexReader:
    """Open the index at ``path`` for query method ``method``: with the store it reads, added
    first if the index lacks it (``announce`` is told so, ``progress`` follows the bytes read).
    A ``markup`` reading other than the index's is refused before any store is added."""
    store = QUERY_METHODS.get(method).store
    index = open_index(path)
    index.markup.agree(markup)
    if store is None:
        return index
    from coderiv.index.builder.stores import with_store

    return with_store(index, store, announce=announce, progress=progress)


def rank_queries(
    index: IndexReader,
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
