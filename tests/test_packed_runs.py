"""The packed-run readers every compiled loop shares (index/format/packed_runs.py), as plain
Python: a run found by search and by a forward walk, a binary search, the side table's escapes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from coderiv.index.format.packed_runs import escaped_value, first_escape, lower_bound, run_after, run_of


def test_hand_made_runs() -> None:
    run_at = np.array([0, 3, 3, 7, 10], np.int64)  # runs 0: [0, 3), 1: empty, 2: [3, 7), 3: [7, 10)
    assert [run_of(run_at, p) for p in range(10)] == [0, 0, 0, 2, 2, 2, 2, 3, 3, 3]
    run, walked = 0, []
    for p in range(10):
        run = run_after(run_at, p, run)
        walked.append(run)
    assert walked == [0, 0, 0, 2, 2, 2, 2, 3, 3, 3]  # the empty run 1 is stepped over
    assert lower_bound(np.array([1, 4, 4, 9]), 0, 4, 4) == 1 and lower_bound(np.array([1, 4, 4, 9]), 0, 4, 10) == 4
    over_at, over_val = np.array([2, 5], np.int64), np.array([300, 70000], np.int64)
    assert (first_escape(over_at, 3), escaped_value(over_at, over_val, 5)) == (1, 70000)


@given(st.lists(st.integers(0, 5), min_size=1, max_size=30))
def test_a_forward_walk_finds_the_run_a_search_finds(sizes: list[int]) -> None:
    run_at = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    run = 0
    for position in range(int(run_at[-1])):
        run = run_after(run_at, position, run)
        assert run == run_of(run_at, position) and run_at[run] <= position < run_at[run + 1]
