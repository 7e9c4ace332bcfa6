"""Term keys: stable 64-bit hashes, computed in one vectorized call."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from coderiv.keys.kinds import counted_keys, mix64, term_key, term_keys

words = st.text(alphabet=st.characters(categories=["L", "Nd"]), min_size=1, max_size=30)


def test_known_values_are_stable():
    # Pinned so that a change of the hash (which would silently invalidate every index) fails here.
    assert term_key("rose") == int(term_keys(["rose"])[0])
    assert term_keys(["rose", "é", "ab"]).tolist() == [term_key("rose"), term_key("é"), term_key("ab")]
    assert term_key("a") == int(mix64(np.array([(97 ^ 0x100000001B3) ^ 0xCBF29CE484222325], np.uint64))[0])


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
