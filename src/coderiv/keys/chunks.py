"""Word n-grams hashed to fixed-width ids: chunks (paper 003, SPEC §6) and shingles (Broder).

Each term is first mapped to its stable 64-bit key (:func:`coderiv.keys.kinds.term_keys`); the id of
the n-gram starting at word i is a polynomial combination of the n keys (wrapping uint64
arithmetic, one vectorized numpy expression for the whole document), then a 64-bit finalizer
(splitmix64) mixes the bits and the top ``bits`` bits are kept. With 32-bit ids, as the paper
uses, two distinct chunks of a 10⁹-chunk collection share an id with probability 2⁻³².
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coderiv.keys.kinds import KeyKind, mix64, presence_keys, register_kind, term_keys
from coderiv.text.analysis import AnalyzedDocument

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def ngram_ids(terms: Sequence[str], n: int, bits: int = 32) -> np.ndarray:
    """Ids of the overlapping n-word sequences of ``terms`` in text order (len − n + 1 of them).

    A document shorter than n words has one id, that of all its words.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1 (got {n})")
    if not 1 <= bits <= 64:
        raise ValueError(f"bits must be in 1..64 (got {bits})")
    keys = term_keys(terms)
    if len(keys) == 0:
        return np.empty(0, np.uint64)
    m = max(len(keys) - n + 1, 1)
    width = min(n, len(keys))
    acc = np.zeros(m, np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width):
            acc = acc * _MULTIPLIER + keys[j : j + m]
    return np.asarray(mix64(acc) >> np.uint64(64 - bits))


def _chunk_extractor(params: dict[str, Any]) -> Any:
    n, bits = int(params["n"]), int(params["bits"])

    def extract(doc: AnalyzedDocument) -> tuple[np.ndarray, np.ndarray]:
        return presence_keys(ngram_ids(doc.terms, n, bits))

    return extract


register_kind(KeyKind(
    "chunks",
    _chunk_extractor,
    defaults={"n": 5, "bits": 32},
    description="distinct n-word chunk ids (paper 003; SPEC §6, §8)",
))
