"""The n-to-n pair methods (SPEC §8; paper 003): what each counts, and how a shared key weighs.

Methods (:data:`METHODS`):

- ``chunks`` (default): chunk similarity of paper 003, 5-word chunks; asymmetric,
  sim(A→B) = |chunks of A also in B| / |chunks of A|; both directions are kept.
- ``resemblance``: Broder's resemblance of 4-word shingles, |S(A)∩S(B)| / |S(A)∪S(B)|.
- ``identity5``: the identity5 measure of SPEC §3 on the terms store, percentage of the row
  document's self-score.

A method says how its shared count becomes a percentage as data (:attr:`PairMethod.kind`:
:data:`RESEMBLANCE`, :data:`CONTAINMENT` or :data:`SELF_SCORE`), so no code tests its name.

**Exact sums.** Pair weights are integers: 1 per shared key for the set methods, and for
identity5 each term's contribution N/f_t · 1/(1 + |f_dt − f_qt|) in fixed point (units of
2⁻⁴⁰, N taken as 1: N multiplies S(q,d) and S(q,q) alike, so it cancels in the percentage;
:func:`key_weights`). Integer sums do not depend on the order of addition, so blocks computed
in any order, on one process or on a Dask cluster, and incremental runs give bit-identical
tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coderiv.keys import chunks  # noqa: F401  (registers the "chunks" key kind the methods' stores use)
from coderiv.keys.kinds import TERMS, StoreSpec
from coderiv.ranking.measures import get_measure
from coderiv.registry import Registry

DEFAULT_TOP = 100
DEFAULT_METHOD = "chunks"
#: Fixed-point unit of identity5 weights (2⁻⁴⁰): sums stay exact integers in int64.
SCALE = float(1 << 40)
#: How a row's shared count c becomes a percentage (:attr:`PairMethod.kind`): c / |A ∪ B| ...
RESEMBLANCE = "resemblance"
#: ... c / |A| (the row document's share, asymmetric) ...
CONTAINMENT = "containment"
#: ... or the measure's score as a share of the row document's self-score (SPEC §3).
SELF_SCORE = "self-score"
KINDS = (RESEMBLANCE, CONTAINMENT, SELF_SCORE)


@dataclass(frozen=True)
class PairMethod:
    """An n-to-n similarity: the index store it reads, the measure weighting its keys, and how a
    row's shared count becomes a percentage.

    ``measure`` is None for set methods (each shared key counts 1). ``kind`` is
    :data:`RESEMBLANCE` or :data:`CONTAINMENT` for a set method, :data:`SELF_SCORE` for one
    with a measure (checked on creation). ``by_differences``: the measure's term part depends on
    the two counts only through |f_dt − f_qt| and on N only as a factor, its document part on the
    lengths only through |f_d − f_q| (identity5), so that the compiled loop reads it from tables
    indexed by those differences (:mod:`coderiv.pairs.run`). ``reading`` says what the
    percentage of a row entry (document ``doc_id``, similar document ``similar_id``) means, in
    which direction an asymmetric one goes; ``coderiv similar`` prints it over its table.
    """

    name: str
    store: StoreSpec
    measure: str | None
    kind: str
    description: str
    reading: str = ""
    by_differences: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS or (self.kind == SELF_SCORE) != (self.measure is not None):
            raise ValueError(f"pair method {self.name}: kind {self.kind!r} does not fit measure {self.measure!r}")
        if self.by_differences and self.measure is None:
            raise ValueError(f"pair method {self.name}: only a measure's weights can go by differences")


METHODS: Registry[PairMethod] = Registry("pair method")
for _method in (
    PairMethod(
        "chunks", StoreSpec.create("chunks", n=5), None, CONTAINMENT, "chunk similarity, 5-word chunks, asymmetric (paper 003)",
        "percent = how much of doc_id is in similar_id: the share of doc_id's distinct 5-word chunks "
        "also in similar_id (asymmetric: similar_id's own row has the other direction)",
    ),
    PairMethod(
        "identity5", TERMS, "identity5", SELF_SCORE, "identity5 measure on terms (SPEC §3)",
        "percent = similar_id's identity5 score with doc_id as the query, as a share of doc_id's "
        "self-score (asymmetric: similar_id's own row has the other direction)",
        by_differences=True,
    ),
    PairMethod(
        "resemblance", StoreSpec.create("chunks", n=4), None, RESEMBLANCE, "resemblance of 4-word shingles (Broder; SPEC §6)",
        "percent = resemblance of doc_id and similar_id, |S(A)∩S(B)| / |S(A)∪S(B)| over 4-word "
        "shingles (symmetric: the same both ways)",
    ),
):
    METHODS.add(_method.name, _method)


def get_method(name: str) -> PairMethod:
    """The pair method called ``name``, or a clear error listing the known ones."""
    return METHODS.get(name)


def key_weights(measure: str, f_dt: np.ndarray, f_qt: np.ndarray, f_t: np.ndarray) -> np.ndarray:
    """Fixed-point weight of a term shared by two documents (N = 1, see the module docstring)."""
    term = get_measure(measure).term
    raw = term(f_dt.astype(np.float64), f_qt.astype(np.float64), f_t.astype(np.float64), 1.0)
    return np.rint(raw * SCALE).astype(np.int64)
