"""Term keys: stable 64-bit hashes, computed in one vectorized call."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from coderiv.keys.kinds import counted_keys, mix64, term_key, term_keys

words = st.text(alphabet=st.characters(categories=["L", "Nd"]), min_size=1, max_size=30)


def test_known_values_are_stable():
    # Literal values: a change of the hash silently invalidates every index ever built, so it must
    # fail here (and bump the index format version).
    assert term_keys(["rose", "é", "ab", "a", "coderivative"]).tolist() == [
        13837405897254923608, 7398610600106429358, 15123057526525493999, 889915272291176731, 17628573198844675722,
    ]
    assert term_key("rose") == 13837405897254923608


def test_mix64_is_splitmix64s_finalizer():
    # splitmix64 finalizer of 1 and of 0x0123456789abcdef, computed by hand from its three steps
    def reference(x: int) -> int:
        mask = (1 << 64) - 1
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    got = mix64(np.array([1, 0x0123456789ABCDEF], np.uint64)).tolist()
    assert got == [reference(1), reference(0x0123456789ABCDEF)]


@given(st.lists(words, min_size=1, max_size=40))
def test_a_terms_key_does_not_depend_on_its_companions(terms):
    together = term_keys(terms)
    alone = [term_key(t) for t in terms]
    assert together.tolist() == alone


@given(st.lists(words, min_size=2, max_size=60, unique=True))
def test_distinct_terms_get_distinct_keys(terms):
    assert len(set(term_keys(terms).tolist())) == len(terms)


def test_counted_keys_sorts_and_keeps_counts():
    keys, counts = counted_keys({"b": 2, "a": 5}, term_key)
    assert list(keys) == sorted([term_key("a"), term_key("b")])
    assert dict(zip(keys.tolist(), counts.tolist())) == {term_key("a"): 5, term_key("b"): 2}


def test_chunk_ids_are_pinned():
    # chunk and shingle ids are stored in indexes and pair tables: a change must fail here
    from coderiv.keys.chunks import ngram_ids

    assert ngram_ids(["river", "bank", "water", "flow", "delta", "mill"], 5).tolist() == [2114754503, 1436143785]
    assert ngram_ids(["river", "bank", "water", "flow"], 4, 64).tolist() == [6626449617174432576]
