"""The evaluation method table: every name ``coderiv evaluate`` accepts, built from the
searchers (:class:`~coderiv.ranking.protocol.DocumentSearcher`), never from string tests.

- each ranking measure under its own name (``identity5``, ``cosine``…), and the group ``all``;
- ``fingerprint:STRATEGY[:KEY=VALUE…][:full-query]`` over the store of that strategy;
- ``passages[:MEASURE]``, passage matching over the whole collection (SPEC §7);
- ``containment``, the share of the query's 5-word chunks in each document (SPEC §6; the
  index needs a chunk store, which ``coderiv report`` or ``coderiv query --method containment``
  add);
- ``verified:BASE[,top=K]``, any other method's top K re-checked by exact passages.

A **method factory** takes an :class:`~coderiv.index.reader.IndexReader` (one index or a sharded
one: the searchers come from the query-method registry, :mod:`coderiv.ranking.searchers`, which
chooses each kind's; passages and verified are one index's only) and returns a function
``query doc id -> percentages of every document, in document-number order``;
:func:`register_method` adds one by name, :func:`register_family` a parameterised family
(``"fingerprint:anchor,g=4"`` resolves through the family ``"fingerprint"``);
:func:`register_searcher` and :func:`register_searcher_family` add a searcher's, which
``verified:`` can then re-check. The query methods are registered as their
:attr:`~coderiv.ranking.searchers.QueryMethod.evaluated` field says, never by testing names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

from coderiv.errors import UnknownNameError
from coderiv.index.reader import IndexReader
from coderiv.keys.fingerprint import normalize_params, parse_params
from coderiv.overlap.verify import DEFAULT_VERIFY_TOP, VerifiedSearcher
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES, get_measure
from coderiv.ranking.passage_windows import PassageSearcher
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.searchers import BY_MEASURE, BY_STRATEGY, QUERY_METHODS, QueryOptions, searcher_for, single_only
from coderiv.registry import Registry

T = TypeVar("T")
PercentagesFn = Callable[[str], np.ndarray]
MethodFactory = Callable[[IndexReader], PercentagesFn]
FamilyMaker = Callable[[str], MethodFactory]
SearcherFactory = Callable[[IndexReader], DocumentSearcher[Any]]

#: name -> factory(index) -> (query doc id -> percentages over all documents)
EVALUATION_METHODS: Registry[MethodFactory] = Registry("evaluation method")
#: prefix -> maker(params) -> factory, for names of the form ``prefix:params``
METHOD_FAMILIES: Registry[FamilyMaker] = Registry("evaluation method family")
#: name -> method names it stands for on the command line (``all``: every ranking measure)
METHOD_GROUPS: Registry[list[str]] = Registry("evaluation method group")
#: name -> the searcher behind an evaluable method of that name (a measure, ``containment``…)
SEARCHERS: Registry[SearcherFactory] = Registry("evaluation searcher")
#: prefix -> maker(params) -> the searcher behind ``prefix:params`` (``fingerprint``…)
SEARCHER_FAMILIES: Registry[Callable[[str], SearcherFactory]] = Registry("evaluation searcher family")


def register_method(name: str, factory: MethodFactory) -> MethodFactory:
    """Make ``name`` evaluable: ``factory(index)`` returns ``doc_id -> percentages``."""
    return EVALUATION_METHODS.add(name, factory)


def register_family(prefix: str, maker: FamilyMaker) -> FamilyMaker:
    """Make every ``prefix:params`` name evaluable; ``maker(params)`` returns the factory and
    raises :class:`UnknownNameError` for parameters it does not understand."""
    return METHOD_FAMILIES.add(prefix, maker)


def register_group(name: str, members: Iterable[str]) -> None:
    """A shorthand for several methods on the command line (e.g. ``all``)."""
    METHOD_GROUPS.add(name, list(members))


def register_searcher(name: str, make: SearcherFactory) -> None:
    """Make the searcher ``make(index)`` evaluable as ``name`` (and verifiable: ``verified:name``)."""
    SEARCHERS.add(name, make)
    register_method(name, percentages_of(make))


def register_searcher_family(prefix: str, maker: Callable[[str], SearcherFactory]) -> None:
    """Make the searchers ``maker(params)(index)`` evaluable as ``prefix:params``."""
    SEARCHER_FAMILIES.add(prefix, maker)
    register_family(prefix, lambda params: percentages_of(maker(params)))


def percentages_of(make: SearcherFactory) -> MethodFactory:
    """The method factory of a searcher: each query document prepared once, then every
    document's percentage."""

    def factory(index: IndexReader) -> PercentagesFn:
        return percentages_with(make(index))

    return factory


def percentages_with(searcher: DocumentSearcher[Any]) -> PercentagesFn:
    """``doc_id -> every document's percentage`` by ``searcher``, each query prepared once."""
    prepared: dict[str, Any] = {}

    def percentages(doc_id: str) -> np.ndarray:
        if doc_id not in prepared:
            prepared[doc_id] = searcher.prepare_doc(doc_id)
        return searcher.percentages(prepared[doc_id])

    return percentages


def _named(name: str, named: Registry[T], families: Registry[Callable[[str], T]]) -> T | None:
    """The entry ``name`` of ``named``, or the member ``prefix:params`` of the family ``prefix``
    (its maker may refuse the parameters); None when it is neither."""
    if name in named:
        return named[name]
    prefix, sep, params = name.partition(":")
    return families[prefix](params) if sep and prefix in families else None


def get_method(name: str) -> MethodFactory:
    """The factory of a registered method or family member, or a clear error."""
    found = _named(name, EVALUATION_METHODS, METHOD_FAMILIES)
    if found is not None:
        return found
    known = sorted(EVALUATION_METHODS) + [f"{p}:..." for p in sorted(METHOD_FAMILIES)]
    raise UnknownNameError(f"method must be one of {known!r} or a group {sorted(METHOD_GROUPS)!r} (got {name!r})")


def searcher_factory(name: str) -> SearcherFactory:
    """The searcher behind an evaluable method name (a registered searcher or a family member)."""
    found = _named(name, SEARCHERS, SEARCHER_FAMILIES)
    if found is not None:
        return found
    get_method(name)  # the error listing every choice
    raise UnknownNameError(f"method {name!r} has no searcher")


def _split_methods(spec: str) -> list[str]:
    """Split at commas, except inside a family member's parameters: in
    ``fingerprint:anchor,g=4,cosine`` the piece ``g=4`` (no registered name, no ``:``) continues
    ``fingerprint:anchor``."""
    parts: list[str] = []
    for piece in (p.strip() for p in spec.split(",")):
        if not piece:
            continue
        known = piece in EVALUATION_METHODS or piece in METHOD_GROUPS or ":" in piece
        if not known and parts and parts[-1].partition(":")[0] in METHOD_FAMILIES and ":" in parts[-1]:
            parts[-1] += "," + piece
        else:
            parts.append(piece)
    return parts


def expand_methods(spec: str) -> list[str]:
    """Comma-separated method names and groups -> validated method names, in order, no repeats."""
    names: list[str] = []
    for part in _split_methods(spec):
        for name in METHOD_GROUPS.get(part) if part in METHOD_GROUPS else [part]:
            get_method(name)  # validates
            if name not in names:
                names.append(name)
    if not names:
        raise UnknownNameError("no method given")
    return names


# -- the families ---------------------------------------------------------------------------------
def query_searcher(method: str, options: QueryOptions | None = None) -> SearcherFactory:
    """The searcher of query method ``method`` (:data:`~coderiv.ranking.searchers.QUERY_METHODS`)
    with ``options``."""
    return lambda index: searcher_for(index, method, options)


def strategy_searcher(method: str) -> Callable[[str], SearcherFactory]:
    """``METHOD:STRATEGY[:KEY=VALUE…][:full-query]``: query method ``method`` over the store of
    that strategy (``fingerprint``: SPEC §4; ``full-query`` fingerprints each query with ``full``)."""

    def maker(params: str) -> SearcherFactory:
        store, full_query = fingerprint_params(params)
        return query_searcher(method, QueryOptions(strategy=store, full_query=full_query))

    return maker


def fingerprint_params(params: str) -> tuple[str, bool]:
    """The store and the full-query flag a ``fingerprint:…`` method names (checked)."""
    parts = [p for p in params.replace(",", ":").split(":") if p.strip()]
    full_query = any(p.strip() in ("full-query", "full_query") for p in parts)
    store = ":".join(p for p in parts if p.strip() not in ("full-query", "full_query"))
    if not store:
        raise UnknownNameError("fingerprint methods are named fingerprint:STRATEGY[:KEY=VALUE...][:full-query]")
    normalize_params(parse_params(store))  # refuse a bad name before any index is opened
    return store, full_query


def passage_searcher(params: str) -> SearcherFactory:
    """``passages[:MEASURE]``: every document's passage percentage against the query (SPEC §7)."""
    measure = params.strip() or DEFAULT_MEASURE
    get_measure(measure)  # refuse an unknown measure before any index is opened
    name = f"passages:{params.strip()}" if params.strip() else "passages"
    return single_only(lambda index: PassageSearcher(index, measure), f"method {name}")


def _verified_params(params: str) -> tuple[str, int]:
    """``BASE[,top=K]`` -> (base method name, K); BASE defaults to the default measure."""
    base, top = params.strip(), DEFAULT_VERIFY_TOP
    head, _, last = base.rpartition(",")
    if last.strip().startswith("top="):
        value = last.strip()[4:]
        if not value.isdigit() or int(value) < 1:
            raise UnknownNameError(f"verified: top must be a positive integer (got {value!r})")
        base, top = head.strip(), int(value)
    base = base or DEFAULT_MEASURE
    if base.startswith("verified:"):
        raise UnknownNameError("verified: cannot verify a verified method")
    get_method(base)  # refuse an unknown base method before any index is opened
    return base, top


def verified_searcher(params: str) -> SearcherFactory:
    """``verified:BASE[,top=K]``: any evaluable method (a measure, or e.g.
    ``fingerprint:anchor:g=4``), its top K re-checked by exact passages."""
    base, top = _verified_params(params)
    make_base = searcher_factory(base)
    return single_only(lambda index: VerifiedSearcher(index, make_base(index), top), f"method verified:{base}")


for _method, _entry in QUERY_METHODS.items():  # every query method, as its entry says it is named
    if _entry.evaluated == BY_MEASURE:
        for _measure in MEASURES:
            register_searcher(_measure, query_searcher(_method, QueryOptions(_measure)))
        register_group("all", list(MEASURES))
    elif _entry.evaluated == BY_STRATEGY:
        register_searcher_family(_method, strategy_searcher(_method))
    else:
        register_searcher(_method, query_searcher(_method))
register_searcher("passages", passage_searcher(""))
register_searcher_family("passages", passage_searcher)
register_searcher_family("verified", verified_searcher)
