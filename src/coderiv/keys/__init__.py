"""What a document is indexed by: terms as 64-bit keys and the key-kind registry
(:mod:`.kinds`), word n-gram chunk ids (:mod:`.chunks`), fingerprint minutiae and their
selection strategies (:mod:`.fingerprint`)."""

from coderiv.keys import chunks, fingerprint  # noqa: F401  (register their key kinds)
from coderiv.keys.kinds import KEY_KINDS, KeyKind, StoreSpec, term_key, term_keys

__all__ = ["KEY_KINDS", "KeyKind", "StoreSpec", "term_key", "term_keys"]
