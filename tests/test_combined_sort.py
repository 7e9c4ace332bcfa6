"""The writer's one-sort paths for narrow keys give exactly the general paths' arrays (the merge's:
tests/test_writer.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.combined_sort import group_narrow_run, sort_packed
from coderiv.index.compiled_writer import group_run

#: keys below 41, below 2^32 (chunk ids), or of up to 64 bits (terms)
TOPS = st.sampled_from([40, (1 << 32) - 1, (1 << 64) - 1])
#: a run: per document its distinct keys, values constant or not, the first document's number
RUNS = TOPS.flatmap(lambda top: st.tuples(
    st.lists(st.sets(st.integers(0, top), max_size=12), min_size=1, max_size=9),
    st.sampled_from([None, 1, 3]),
    st.integers(0, 5),
))


def test_hand_made_run() -> None:
    """Documents 7 and 8: keys {5, 2} and {2}; values 1, 4, 2: key 2 has documents 7, 8."""
    keys = np.array([2, 5, 2], np.uint64)
    vals = np.array([1, 4, 2], np.uint32)
    unique, counts, docs, out_vals, maxima = group_narrow_run(keys, np.array([2, 1]), 7, vals) or ()
    assert unique.tolist() == [2, 5] and counts.tolist() == [2, 1]
    assert docs.tolist() == [7, 8, 7] and out_vals.tolist() == [1, 2, 4] and maxima.tolist() == [2, 4]


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_run_grouped_as_the_general_path(run: tuple[list[set[int]], int | None, int]) -> None:
    documents, constant, first = run
    keys = np.array([k for doc in documents for k in sorted(doc)], np.uint64)
    counts = np.array([len(doc) for doc in documents], np.int64)
    rng = np.random.default_rng(len(keys))
    vals = np.full(len(keys), constant, np.uint32) if constant else rng.integers(1, 300, len(keys)).astype(np.uint32)
    got = group_narrow_run(keys, counts, first, vals)
    want = group_run(keys, counts, first, vals, compiled=False)
    if not len(keys) or int(keys.max()).bit_length() > 48:
        assert got is None
        return
    assert got is not None
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()




def test_packed_postings_too_wide_are_left_to_the_general_paths() -> None:
    one = np.ones(1, np.uint32)
    assert sort_packed(np.array([2**40], np.uint64), np.array([2**20], np.uint32), np.array([5], np.uint32)) is not None
    assert sort_packed(np.array([2**40], np.uint64), np.array([2**24], np.uint32), np.array([2**5], np.uint32)) is None
    assert sort_packed(np.empty(0, np.uint64), np.empty(0, np.uint32), np.empty(0, np.uint32)) is None
    assert group_narrow_run(np.array([2**50], np.uint64), np.ones(1, np.int64), 0, one) is None
