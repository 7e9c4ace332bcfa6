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

from coderiv.errors import UnknownNameError

Array = np.ndarray
TermPart = Callable[[Array, Array, Array, float], Array]
DocPart = Callable[[Array, float, Array], Array]


def idf_weight(f_t: Array, n_docs: float) -> Array:
    """w_t = ln(1 + N / f_t)."""
    return np.log1p(n_docs / f_t)


def tf_weight(f: Array) -> Array:
    """1 + ln f (f ≥ 1)."""
    return 1.0 + np.log(f)


def cosine_weight(f: Array, f_t: Array, n_docs: float) -> Array:
    """x_{y,t} = (1 + ln f_{y,t}) · w_t, the cosine measure's component."""
    return tf_weight(f) * idf_weight(f_t, n_docs)


def length_factor(f_d: Array, f_q: float) -> Array:
    """L(q,d) = 1 / (1 + ln(1 + |f_d − f_q|)), the identity measures' length penalty."""
    return 1.0 / (1.0 + np.log1p(np.abs(f_d - f_q)))


def closeness(f_dt: Array, f_qt: Array) -> Array:
    """1 / (1 + |f_dt − f_qt|): how alike a term's counts are in q and d."""
    return 1.0 / (1.0 + np.abs(f_dt - f_qt))


def _ones(f_d: Array, f_q: float, norms: Array) -> Array:
    return np.ones(np.shape(f_d))


@dataclass(frozen=True)
class Measure:
    """A ranking measure: S(q,d) = doc(f_d, f_q, W_d) · Σ_t term(f_dt, f_qt, f_t, N).

    ``ideal`` is true when no document can score above the query's self-score (SPEC §3).
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
    description: str
    bound: Callable[[Array, Array, float, Array], Array]
    doc_bound: float | None = 1.0
    unit_bound: Callable[[Array, Array, float, Array], Array] | None = None

    def final_bound(self, f_qt: Array, f_t: Array, n_docs: float, max_f_dt: Array, max_unit: Array) -> Array | None:
        """Upper bound of each query term's contribution to any document's final score, or
        None when the measure has none (then top-k takes the full pass)."""
        if self.doc_bound is not None:
            return self.bound(f_qt, f_t, n_docs, max_f_dt) * self.doc_bound
        if self.unit_bound is not None:
            return self.unit_bound(f_qt, f_t, n_docs, max_unit)
        return None


MEASURES: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    """Add a measure to the registry; the CLI's choices come from it."""
    MEASURES[measure.name] = measure
    return measure


def get_measure(name: str) -> Measure:
    """The registered measure called ``name``, or a clear error listing the known ones."""
    try:
        return MEASURES[name]
    except KeyError:
        raise UnknownNameError(f"measure must be one of {sorted(MEASURES)!r} (got {name!r})") from None


def _identity_bound(f_qt: Array, f_t: Array, n: float, max_f_dt: Array) -> Array:
    return idf_weight(f_t, n)


register(Measure(
    "inner",
    term=lambda f_dt, f_qt, f_t, n: tf_weight(f_dt) * idf_weight(f_t, n),
    doc=_ones,
    ideal=False,
    description="Σ (1 + ln f_dt) · w_t",
    bound=lambda f_qt, f_t, n, mx: tf_weight(mx) * idf_weight(f_t, n),
))
register(Measure(
    "normalized",
    term=lambda f_dt, f_qt, f_t, n: tf_weight(f_dt) * idf_weight(f_t, n),
    doc=lambda f_d, f_q, norms: 1.0 / np.sqrt(np.maximum(f_d, 1)),
    ideal=False,
    description="inner(q,d) / sqrt(f_d)",
    bound=lambda f_qt, f_t, n, mx: tf_weight(mx) * idf_weight(f_t, n),
))
register(Measure(
    "cosine",
    term=lambda f_dt, f_qt, f_t, n: cosine_weight(f_dt, f_t, n) * cosine_weight(f_qt, f_t, n),
    doc=lambda f_d, f_q, norms: 1.0 / np.where(norms > 0, norms, 1.0),
    ideal=True,
    description="Σ x_qt · x_dt / W_d, x_yt = (1 + ln f_yt) · w_t",
    bound=lambda f_qt, f_t, n, mx: cosine_weight(mx, f_t, n) * cosine_weight(f_qt, f_t, n),
    doc_bound=None,
    unit_bound=lambda f_qt, f_t, n, max_unit: cosine_weight(f_qt, f_t, n) * max_unit,
))
register(Measure(
    "identity1",
    term=lambda f_dt, f_qt, f_t, n: idf_weight(f_t, n) * closeness(f_dt, f_qt),
    doc=lambda f_d, f_q, norms: 1.0 / (1.0 + np.abs(f_d - f_q)),
    ideal=True,
    description="1/(1 + |f_d − f_q|) · Σ w_t / (1 + |f_dt − f_qt|)",
    bound=_identity_bound,
))
register(Measure(
    "identity2",
    term=lambda f_dt, f_qt, f_t, n: idf_weight(f_t, n) * closeness(f_dt, f_qt),
    doc=lambda f_d, f_q, norms: length_factor(f_d, f_q),
    ideal=True,
    description="L(q,d) · Σ w_t / (1 + |f_dt − f_qt|)",
    bound=_identity_bound,
))
register(Measure(
    "identity3",
    term=lambda f_dt, f_qt, f_t, n: (f_dt + f_qt) * idf_weight(f_t, n) * closeness(f_dt, f_qt),
    doc=lambda f_d, f_q, norms: length_factor(f_d, f_q),
    ideal=True,
    description="L(q,d) · Σ (f_dt + f_qt) · w_t / (1 + |f_dt − f_qt|)",
    bound=lambda f_qt, f_t, n, mx: 2.0 * f_qt * idf_weight(f_t, n),
))
register(Measure(
    "identity4",
    term=lambda f_dt, f_qt, f_t, n: np.log(n / f_t) * closeness(f_dt, f_qt),
    doc=lambda f_d, f_q, norms: length_factor(f_d, f_q),
    ideal=True,
    description="L(q,d) · Σ ln(N/f_t) / (1 + |f_dt − f_qt|)",
    bound=lambda f_qt, f_t, n, mx: np.log(n / f_t),
))
register(Measure(
    "identity5",
    term=lambda f_dt, f_qt, f_t, n: (n / f_t) * closeness(f_dt, f_qt),
    doc=lambda f_d, f_q, norms: length_factor(f_d, f_q),
    ideal=True,
    description="L(q,d) · Σ (N/f_t) / (1 + |f_dt − f_qt|)  (default)",
    bound=lambda f_qt, f_t, n, mx: n / f_t,
))

DEFAULT_MEASURE = "identity5"


def document_norms(docs: Array, f_dt: Array, f_t: Array, n_docs: int) -> Array:
    """W_d = sqrt(Σ_{t∈d} x_dt²) for every document, from postings (docs, f_dt, f_t) (cosine)."""
    x = cosine_weight(f_dt.astype(np.float64), f_t.astype(np.float64), n_docs)
    return np.sqrt(np.bincount(docs, weights=x * x, minlength=n_docs))


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
