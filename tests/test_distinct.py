"""``coderiv.keys.kinds.distinct``: np.unique's sorted distinct values by a sort and a mask
(issue 27: numpy's hashing unique is far slower on mostly distinct ids), same values, same dtype."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coderiv.keys.kinds import distinct, presence_keys


@given(arrays(st.sampled_from([np.uint64, np.uint32, np.int64]), st.integers(0, 300), elements=st.integers(0, 40)))
def test_distinct_is_np_unique(values: np.ndarray) -> None:
    got = distinct(values)
    assert got.dtype == values.dtype
    assert np.array_equal(got, np.unique(values))


def test_presence_keys_by_hand() -> None:
    keys, values = presence_keys(np.array([7, 3, 7, 2**63, 3], np.uint64))
    assert keys.tolist() == [3, 7, 2**63] and keys.dtype == np.uint64
    assert values.tolist() == [1, 1, 1]
    empty, none = presence_keys([])
    assert empty.dtype == np.uint64 and len(empty) == 0 and len(none) == 0
