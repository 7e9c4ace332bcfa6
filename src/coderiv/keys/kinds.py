"""Keys of the postings store: what a document is indexed by, for every method.

Every method of coderiv reduces a document to keys (terms, minutiae, chunk ids) with a value
each (a count, or 1 for presence). A :class:`KeyKind` says how; kinds are registered by name so
that fingerprint strategies and chunkers plug into the same index (ARCHITECTURE.md).

Terms are stored as 64-bit keys (:func:`term_keys`, a vectorized multiply-and-mix hash of the
code points): fixed-width, sortable, memory-mappable, and with 10 million distinct terms the
chance of any collision is about 3 in a million.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coderiv.registry import Registry
from coderiv.text.analysis import AnalyzedDocument

_MULTIPLIER = np.uint64(0x100000001B3)
_SEED = np.uint64(0xCBF29CE484222325)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a bijection of uint64 that spreads every input bit (vectorized)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return np.asarray(x ^ (x >> np.uint64(31)))


_POWERS = np.ones(1, np.uint64)


def _powers(width: int) -> np.ndarray:
    """P⁰, P¹, … P^(width−1) in wrapping uint64 arithmetic (cached, grown on demand)."""
    global _POWERS
    if len(_POWERS) < width:
        powers = np.empty(max(width, 2 * len(_POWERS)), np.uint64)
        powers[0] = 1
        with np.errstate(over="ignore"):
            for i in range(1, len(powers)):
                powers[i] = powers[i - 1] * _MULTIPLIER
        _POWERS = powers
    return _POWERS[:width]


def term_keys(terms: Sequence[str]) -> np.ndarray:
    """The 64-bit key of every term, in order: one vectorized pass over all of them.

    h = mix64(Σ_j c_j · P^j ⊕ len · P ⊕ seed) over the term's code points c_j (wrapping uint64
    arithmetic, a fixed odd P). Padding to a common width adds zero code points, which add
    nothing to the sum, so a term's key does not depend on the other terms of the call; it is
    stable across processes, machines and numpy versions.
    """
    n = len(terms)
    if n == 0:
        return np.empty(0, np.uint64)
    array = np.array(terms, dtype=str)
    width = array.dtype.itemsize // 4
    if width == 0:
        return np.full(n, mix64(np.array([_SEED], np.uint64))[0], np.uint64)
    codes = array.view(np.uint32).reshape(n, width)
    lengths = np.count_nonzero(codes, axis=1).astype(np.uint64)  # words never contain U+0000
    with np.errstate(over="ignore"):
        h = (codes.astype(np.uint64) * _powers(width)).sum(axis=1, dtype=np.uint64)
        return mix64(h ^ (lengths * _MULTIPLIER) ^ _SEED)


def term_key(term: str) -> int:
    """The 64-bit key of one term (see :func:`term_keys`)."""
    return int(term_keys([term])[0])


def counted_keys(counts: Counter[Any] | dict[Any, int], key: Callable[[Any], int]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique uint64 keys and their int32 counts from a mapping item → count.

    With ``key=term_key`` (terms) the keys are computed in one vectorized call.
    """
    if not counts:
        return np.empty(0, np.uint64), np.empty(0, np.int32)
    if key is term_key:
        keys = term_keys(list(counts))
    else:
        keys = np.fromiter((key(item) for item in counts), np.uint64, len(counts))
    values = np.fromiter(counts.values(), np.int32, len(counts))
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    if len(keys) > 1 and np.any(keys[1:] == keys[:-1]):  # two items hashed alike: merge them
        unique, start = np.unique(keys, return_index=True)
        return unique, np.add.reduceat(values, start).astype(np.int32)
    return keys, values


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-d array: ``np.unique(values)``, by one sort and a mask.

    numpy 2.3+ makes ``np.unique`` hash before it sorts, far slower than sorting for arrays of
    mostly distinct integers (measured: docs/performance-history.md), and every document's chunk ids are such an array.
    """
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def presence_keys(keys: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct uint64 keys with value 1 each (fingerprints, chunks)."""
    if isinstance(keys, np.ndarray):
        array = distinct(keys.astype(np.uint64))
    else:
        array = distinct(np.fromiter(keys, np.uint64))
    return array, np.ones(len(array), np.int32)


Extractor = Callable[[AnalyzedDocument], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class KeyKind:
    """A registered way of turning an analysed document into keys.

    ``make(params)`` returns the extractor for those parameters; ``defaults`` fills parameters
    left out; ``needs_structure`` asks the analyser for sentence and paragraph boundaries;
    ``normalize(params)``, if given, validates the merged parameters and returns their canonical
    form (so that one store has one name, e.g. a fingerprint strategy's own defaults filled in).
    ``counts_only`` says the extractor reads only ``doc.term_counts()`` and ``doc.length``, not
    the term sequence, which lets the analyser skip building it.
    """

    name: str
    make: Callable[[dict[str, Any]], Extractor]
    defaults: dict[str, Any] = field(default_factory=dict)
    needs_structure: bool = False
    description: str = ""
    normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    counts_only: bool = False


KEY_KINDS: Registry[KeyKind] = Registry("store kind")


def register_kind(kind: KeyKind) -> KeyKind:
    """Add a key kind to the registry (one line per kind)."""
    return KEY_KINDS.add(kind.name, kind)


def _term_extractor(params: dict[str, Any]) -> Extractor:
    def extract(doc: AnalyzedDocument) -> tuple[np.ndarray, np.ndarray]:
        return counted_keys(doc.term_counts(), term_key)

    return extract


register_kind(KeyKind("terms", _term_extractor, description="term → f_{d,t} (SPEC §3)", counts_only=True))


@dataclass(frozen=True)
class StoreSpec:
    """One store of an index: a key kind with its parameters, e.g. ``terms``."""

    kind: str
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def create(cls, kind: str, **params: Any) -> StoreSpec:
        key_kind = KEY_KINDS.get(kind)
        merged = {**key_kind.defaults, **params}
        if key_kind.normalize is not None:
            merged = key_kind.normalize(merged)
        return cls(kind, tuple(sorted(merged.items())))

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``terms`` or ``fingerprint:g=4,strategy=anchor``."""
        if not self.params:
            return self.kind
        return self.kind + ":" + ",".join(f"{k}={v}" for k, v in self.params)

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def extractor(self) -> Extractor:
        return KEY_KINDS[self.kind].make(self.param_dict)

    @property
    def needs_structure(self) -> bool:
        return KEY_KINDS[self.kind].needs_structure

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "params": self.param_dict}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StoreSpec:
        return cls.create(data["kind"], **data["params"])


TERMS = StoreSpec("terms")
