"""The eight ranking measures of SPEC §3, one small vectorized function each, in one registry.

A measure is split the way every inverted-index engine splits a score: a **term part**
evaluated on each posting of a query term, ``term(f_dt, f_qt, f_t, N)``, summed per document,
times a **document part** ``doc(f_d, f_q, W_d)`` applied once per document. Statistics are
arguments, so tests feed hand-made numbers, and the same two functions serve the core engine,
the self-score and the whoosh WeightingModels (:mod:`coderiv.ranking.whoosh_models`).

Self-score (SPEC §3): the query scored against itself, d := q, over the query's terms that occur
in the collection. With W_q computed over those same terms this rule gives, for cosine,
S(q,q) = Σ x_qt² / W_q = sqrt(Σ x_qt²), exactly the SPEC's definition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from coderiv.registry import Registry
from coderiv.weights import cosine_weight, idf_weight, tf_weight

Array = np.ndarray
TermPart = Callable[[Array, Array, Array, float], Array]
#: A document part: (f_d, f_q, W_d); f_q one query's length, or one per pair (:func:`percent_of_self`).
DocPart = Callable[[Array, Array | float, Array], Array]
#: A term part that is a product: (count(f_dt) · weight(f_t, N)) · query(f_qt, f_t, N).
ProductParts = tuple[Callable[[Array], Array], Callable[[Array, float], Array], Callable[[Array, Array, float], Array]]
#: A term part and its product parts (``Measure.product``).
FactoredTerm = tuple[TermPart, Callable[[Array], Array], Callable[[Array, float], Array], Callable[[Array, Array, float], Array]]

#: Where the measures come from (cited by every formula below).
HOAD_ZOBEL = "Hoad & Zobel, Methods for identifying versioned and plagiarized documents, JASIST 54(3), 2003"


# -- shared pieces --------------------------------------------------------------------------------
def length_factor(f_d: Array, f_q: Array | float) -> Array:
    """L(q,d) = 1 / (1 + ln(1 + |f_d − f_q|)), the identity measures' length penalty."""
    return 1.0 / (1.0 + np.log1p(np.abs(f_d - f_q)))


def closeness(f_dt: Array, f_qt: Array) -> Array:
    """1 / (1 + |f_dt − f_qt|): how alike a term's counts are in q and d."""
    return np.asarray(1.0 / (1.0 + np.abs(f_dt - f_qt)))


# -- term parts: evaluated on each posting a document shares with the query, summed per document --
def inner_term(f_dt: Array, f_qt: Array, f_t: Array, n_docs: float) -> Array:
    """(1 + ln f_dt) · w_t

    Inner product of the query's presence vector with the document's tf·idf vector (Hoad &
    Zobel 2003, JASIST 54(3), §3 "inner product"); f_qt plays no part.
    """
    return np.asarray(tf_weight(f_dt) * idf_weight(f_t, n_docs))


def cosine_term(f_dt: Array, f_qt: Array, f_t: Array, n_docs: float) -> Array:
    """x_qt · x_dt, x_yt = (1 + ln f_yt) · w_t

    The cosine measure's numerator (Hoad & Zobel 2003, JASIST 54(3), §3, after Salton): the dot
    product of the query's and the document's tf·idf vectors.
    """
    return np.asarray(cosine_weight(f_dt, f_t, n_docs) * cosine_weight(f_qt, f_t, n_docs))


def identity_term(f_dt: Array, f_qt: Array, f_t: Array, n_docs: float) -> Array:
    """w_t / (1 + |f_dt − f_qt|)

    Identity measures 1 and 2 (Hoad & Zobel 2003, JASIST 54(3), §4): a shared term counts its
    weight, less the more its counts in q and d differ.
    """
    return np.asarray(idf_weight(f_t, n_docs) * closeness(f_dt, f_qt))


def identity3_term(f_dt: Array, f_qt: Array, f_t: Array, n_docs: float) -> Array:
    """(f_dt + f_qt) · w_t / (1 + |f_dt − f_qt|)

    Identity measure 3 (Hoad & Zobel 2003, JASIST 54(3), §4): frequent shared terms count more.
    """
    return np.asarray((f_dt + f_qt) * idf_weight(f_t, n_docs) * closeness(f_dt, f_qt))


def identity4_term(f_dt: Array, f_qt: Array, f_t: Array, n_docs: float) -> Array:
    """ln(N/f_t) / (1 + |f_dt − f_qt|)

    Identity measure 4 (Hoad & Zobel 2003, JASIST 54(3), §4): the plain ln(N/f_t) weight, which
    is 0 for a term in every document.
    """
    return np.asarray(np.log(n_docs / f_t) * closeness(f_dt, f_qt))


def identity5_term(f_dt: Array, f_qt: Array, f_t: Array, n_docs: float) -> Array:
    """(N/f_t) / (1 + |f_dt − f_qt|)

    Identity measure 5 (Hoad & Zobel 2003, JASIST 54(3), §4), their best at finding versions:
    rare shared terms weigh N/f_t, far more than under a logarithm.
    """
    return np.asarray((n_docs / f_t) * closeness(f_dt, f_qt))


# -- document parts: applied once per document ---------------------------------------------------
def no_document_factor(f_d: Array, f_q: Array | float, norms: Array) -> Array:
    """1"""
    return np.ones(np.shape(f_d))


def length_normalization(f_d: Array, f_q: Array | float, norms: Array) -> Array:
    """1/sqrt(f_d)"""
    return np.asarray(1.0 / np.sqrt(np.maximum(f_d, 1)))


def cosine_normalization(f_d: Array, f_q: Array | float, norms: Array) -> Array:
    """1/W_d"""
    return 1.0 / np.where(norms > 0, norms, 1.0)


def length_difference(f_d: Array, f_q: Array | float, norms: Array) -> Array:
    """1/(1 + |f_d − f_q|)"""
    return 1.0 / (1.0 + np.abs(f_d - f_q))


def identity_length(f_d: Array, f_q: Array | float, norms: Array) -> Array:
    """L(q,d)"""
    return length_factor(f_d, f_q)


def formula(part: Callable[..., Array]) -> str:
    """The formula a part's docstring opens with."""
    return (part.__doc__ or part.__name__).strip().splitlines()[0]


@dataclass(frozen=True)
class Measure:
    """A ranking measure: S(q,d) = doc(f_d, f_q, W_d) · Σ_t term(f_dt, f_qt, f_t, N).

    ``ideal`` is true when no document can score above the query's self-score (SPEC §3);
    ``over_100`` says in one line how a non-ideal measure passes 100% (printed under tables).
    For exact top-k pruning: ``bound(f_qt, f_t, N, max_f_dt)`` is an upper bound of ``term``
    over every document, and ``doc_bound`` one of ``doc``. A measure whose document part has no
    useful bound (cosine's 1/W_d) gives instead ``unit_bound(f_qt, f_t, N, max_unit)``, a bound
    of a term's whole contribution term · doc, from max_unit = max_d x_dt / W_d (stored per
    term in the index).
    """

    name: str
    term: TermPart
    doc: DocPart
    ideal: bool
    bound: Callable[[Array, Array, float, Array], Array]
    doc_bound: float | None = 1.0
    unit_bound: Callable[[Array, Array, float, Array], Array] | None = None
    over_100: str = ""
    #: term = x_qt · x_dt and doc = 1/W_d (cosine): Cauchy–Schwarz over the index's per-document
    #: norm classes bounds it per document (:mod:`coderiv.index.cosine_bounds`)
    norm_classes: bool = False
    #: (term part, count, weight, query) when the term part is the product (count(f_dt) ·
    #: weight(f_t, N)) · query(f_qt, f_t, N), the same operations in the same order, so the same
    #: bits (tests/test_kernel.py checks them): the contribution table then evaluates each part
    #: once per count or per term, not the whole formula once per (term, count)
    #: (:func:`coderiv.ranking.kernel.contribution_table`). See :meth:`product_parts`.
    product: FactoredTerm | None = None

    @property
    def description(self) -> str:
        """S(q,d) written out, from the formulas of the two parts' docstrings."""
        factor = formula(self.doc)
        return f"Σ {formula(self.term)}" if factor == "1" else f"{factor} · Σ {formula(self.term)}"

    def product_parts(self) -> ProductParts | None:
        """(count, weight, query) of ``product`` while it factors this measure's own term part:
        none once ``term`` is replaced (``dataclasses.replace``, as a sharded index fixes N)."""
        if self.product is None or self.product[0] is not self.term:
            return None
        return self.product[1:]

    def final_bound(self, f_qt: Array, f_t: Array, n_docs: float, max_f_dt: Array, max_unit: Array) -> Array | None:
        """Upper bound of each query term's contribution to any document's final score, or
        None when the measure has none (then top-k takes the full pass)."""
        if self.doc_bound is not None:
            return self.bound(f_qt, f_t, n_docs, max_f_dt) * self.doc_bound
        if self.unit_bound is not None:
            return self.unit_bound(f_qt, f_t, n_docs, max_unit)
        return None


MEASURES: Registry[Measure] = Registry("measure")


def register(measure: Measure) -> Measure:
    """Add a measure to the registry; the CLI's choices come from it."""
    return MEASURES.add(measure.name, measure)


def get_measure(name: str) -> Measure:
    """The registered measure called ``name``, or a clear error listing the known ones."""
    return MEASURES.get(name)


def _identity_bound(f_qt: Array, f_t: Array, n: float, max_f_dt: Array) -> Array:
    return idf_weight(f_t, n)


register(Measure(
    "inner", inner_term, no_document_factor, ideal=False,
    bound=lambda f_qt, f_t, n, mx: tf_weight(mx) * idf_weight(f_t, n),
    over_100="inner is not ideal: a document holding the query's terms more often than the query does "
    "scores above the query itself (docs/measures.md)",
))
register(Measure(
    "normalized", inner_term, length_normalization, ideal=False,
    bound=lambda f_qt, f_t, n, mx: tf_weight(mx) * idf_weight(f_t, n),
    over_100="normalized is not ideal: a document shorter than the query, dense in its rare terms, "
    "scores above the query itself (docs/measures.md)",
))
register(Measure(
    "cosine", cosine_term, cosine_normalization, ideal=True,
    bound=lambda f_qt, f_t, n, mx: cosine_weight(mx, f_t, n) * cosine_weight(f_qt, f_t, n),
    doc_bound=None,
    unit_bound=lambda f_qt, f_t, n, max_unit: cosine_weight(f_qt, f_t, n) * max_unit,
    norm_classes=True,
    product=(cosine_term, tf_weight, idf_weight, cosine_weight),  # x_dt · x_qt = ((1 + ln f_dt) · w_t) · x_qt
))
register(Measure("identity1", identity_term, length_difference, ideal=True, bound=_identity_bound))
register(Measure("identity2", identity_term, identity_length, ideal=True, bound=_identity_bound))
register(Measure(
    "identity3", identity3_term, identity_length, ideal=True,
    bound=lambda f_qt, f_t, n, mx: 2.0 * f_qt * idf_weight(f_t, n),
))
register(Measure(
    "identity4", identity4_term, identity_length, ideal=True, bound=lambda f_qt, f_t, n, mx: np.log(n / f_t),
))
register(Measure("identity5", identity5_term, identity_length, ideal=True, bound=lambda f_qt, f_t, n, mx: n / f_t))

DEFAULT_MEASURE = "identity5"


def over_100_reason(method: str) -> str:
    """How the ranking measure a method label names (``inner``, or ``inner@stop`` for an analysis
    variant) can pass 100%; empty for an ideal measure and for any other method (fingerprints,
    passages, verified coverage: they count shares of the query, which cannot pass 100%)."""
    measure = MEASURES.get(method.split("@", 1)[0], None)
    return measure.over_100 if measure is not None else ""


def self_score(measure: Measure, f_qt: Array, f_t: Array, n_docs: int, f_q: int) -> float:
    """S(q,q) over the query terms present in the collection (arrays aligned, f_t ≥ 1)."""
    if len(f_qt) == 0:
        return 0.0
    f_qt = f_qt.astype(np.float64)
    f_t = f_t.astype(np.float64)
    norm_q = np.sqrt(np.sum(cosine_weight(f_qt, f_t, n_docs) ** 2))
    total = float(np.sum(measure.term(f_qt, f_qt, f_t, float(n_docs))))
    factor = float(measure.doc(np.array([float(f_q)]), float(f_q), np.array([norm_q]))[0])
    return total * factor


def percent_of_self(
    measure: Measure, shared_sums: Array, own_sums: Array, f_d: Array, f_q: Array, norms_d: Array, norms_q: Array
) -> Array:
    """100 · S(q,d) / S(q,q) from the two sums of term parts (over the shared terms, and the
    query's own), by the self-score rule: S(q,d) = doc(f_d, f_q, W_d) · shared, S(q,q) =
    doc(f_q, f_q, W_q) · own. Vectorized over pairs (n-to-n tables)."""
    lengths_q = np.asarray(f_q, np.float64)
    percents: Array = 100.0 * shared_sums * measure.doc(f_d, lengths_q, norms_d) / (own_sums * measure.doc(lengths_q, lengths_q, norms_q))
    return percents
