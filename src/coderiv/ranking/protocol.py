"""The one protocol every 1-to-n method implements (a ranking measure, fingerprints, passages,
and wrappers such as exact-passage verification): prepare a text or an indexed document once,
then rank the collection or give every document's absolute percentage.

The CLI, the evaluation method table, the report and the web app use searchers only through
this protocol, and get them from one place: the query-method registry of
:mod:`coderiv.ranking.searchers`, which also chooses between one index's searcher and a sharded
index's (:mod:`coderiv.ranking.sharded`) without the caller knowing which it holds. Arguments of
``rank`` past ``top`` are keyword-only, so that searchers cannot disagree on their order.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from coderiv.ranking.results import QueryResult


class Prepared(Protocol):
    """A query ready to be scored; ``length`` is its length after analysis (0: no words)."""

    @property
    def length(self) -> int: ...


P = TypeVar("P", bound=Prepared)


@runtime_checkable
class DocumentSearcher(Protocol[P]):
    """Ranks an index's documents against whole query documents.

    ``method`` is the method's full name (``identity5``, ``fingerprint:anchor,g=4``,
    ``passages:cosine``…); ``unit`` names what ``QueryResult.matched_terms`` counts
    (``terms``, ``minutiae``, ``passages``)."""

    @property
    def method(self) -> str: ...

    @property
    def unit(self) -> str: ...

    def prepare(self, text: str) -> P:
        """A query document's text, analysed as the index was."""
        ...

    def prepare_doc(self, doc_id: str) -> P:
        """A document of the index as the query."""
        ...

    def rank(self, prepared: P, top: int | None = 10, *, label: str = "", min_percent: float = 0.0) -> QueryResult:
        """The top documents (``top=None``: every scoring one) at or above ``min_percent``."""
        ...

    def percentages(self, prepared: P) -> np.ndarray:
        """Every document's absolute percentage, in document-number order (for evaluation)."""
        ...
