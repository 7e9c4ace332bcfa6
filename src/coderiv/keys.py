"""Keys of the postings store: what a document is indexed by, for every method.

Every method of coderiv reduces a document to keys (terms, minutiae, chunk ids) with a value
each (a count, or 1 for presence). A :class:`KeyKind` says how; kinds are registered by name so
that fingerprint strategies and chunkers plug into the same index (ARCHITECTURE.md).

Terms are stored as 64-bit keys (the first 8 bytes of BLAKE2b of the UTF-8 term): fixed-width,
sortable, memory-mappable, and with 10 million distinct terms the chance of any collision is
about 3 in a million.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .analysis import AnalyzedDocument
from .errors import UnknownNameError

_TERM_KEY_CACHE: dict[str, int] = {}


def term_key(term: str) -> int:
    """The 64-bit key of one term (stable across processes and machines)."""
    key = _TERM_KEY_CACHE.get(term)
    if key is None:
        key = int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")
        if len(_TERM_KEY_CACHE) < 4_000_000:
            _TERM_KEY_CACHE[term] = key
    return key


def counted_keys(counts: Counter[Any] | dict[Any, int], key: Callable[[Any], int]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique uint64 keys and their int32 counts from a mapping item → count."""
    if not counts:
        return np.empty(0, np.uint64), np.empty(0, np.int32)
    keys = np.fromiter((key(item) for item in counts), np.uint64, len(counts))
    values = np.fromiter(counts.values(), np.int32, len(counts))
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    if len(keys) > 1 and np.any(keys[1:] == keys[:-1]):  # two items hashed alike: merge them
        unique, start = np.unique(keys, return_index=True)
        return unique, np.add.reduceat(values, start).astype(np.int32)
    return keys, values


def presence_keys(keys: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct uint64 keys with value 1 each (fingerprints, chunks)."""
    if isinstance(keys, np.ndarray):
        array = np.unique(keys.astype(np.uint64))
    else:
        array = np.unique(np.fromiter(keys, np.uint64))
    return array, np.ones(len(array), np.int32)


Extractor = Callable[[AnalyzedDocument], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class KeyKind:
    """A registered way of turning an analysed document into keys.

    ``make(params)`` returns the extractor for those parameters; ``defaults`` fills parameters
    left out; ``needs_structure`` asks the analyser for sentence and paragraph boundaries;
    ``normalize(params)``, if given, validates the merged parameters and returns their canonical
    form (so that one store has one name, e.g. a fingerprint strategy's own defaults filled in).
    """

    name: str
    make: Callable[[dict[str, Any]], Extractor]
    defaults: dict[str, Any] = field(default_factory=dict)
    needs_structure: bool = False
    description: str = ""
    normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None


KEY_KINDS: dict[str, KeyKind] = {}


def register_kind(kind: KeyKind) -> KeyKind:
    """Add a key kind to the registry (one line per kind)."""
    KEY_KINDS[kind.name] = kind
    return kind


def _term_extractor(params: dict[str, Any]) -> Extractor:
    def extract(doc: AnalyzedDocument) -> tuple[np.ndarray, np.ndarray]:
        return counted_keys(Counter(doc.terms), term_key)

    return extract


register_kind(KeyKind("terms", _term_extractor, description="term → f_{d,t} (SPEC §3)"))


@dataclass(frozen=True)
class StoreSpec:
    """One store of an index: a key kind with its parameters, e.g. ``terms``."""

    kind: str
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def create(cls, kind: str, **params: Any) -> StoreSpec:
        if kind not in KEY_KINDS:
            raise UnknownNameError(f"store kind must be one of {sorted(KEY_KINDS)!r} (got {kind!r})")
        merged = {**KEY_KINDS[kind].defaults, **params}
        if KEY_KINDS[kind].normalize is not None:
            merged = KEY_KINDS[kind].normalize(merged)
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
