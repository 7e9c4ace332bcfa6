"""The contribution table of the scoring kernel (coderiv.ranking.kernel.contribution_table):
one row per query term, one entry per count up to the key's largest, each entry the measure's
term part at that (f_dt, f_qt, f_t) to the bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.ranking.kernel import contribution_table
from coderiv.ranking.measures import MEASURES, get_measure


class MaxValues:
    """Only what the table reads of a store (a ``Postings``): each key's largest count."""

    def __init__(self, maxvals: list[int]) -> None:
        self.top = np.array(maxvals, np.uint16)

    def maxvals_at(self, positions: np.ndarray) -> np.ndarray:
        return self.top[positions]


def test_a_hand_computed_identity5_table() -> None:
    """identity5, N = 4: (N/f_t) / (1 + |f_dt − f_qt|). Key 0 (f_t 2, largest count 2, f_qt 1):
    2, 2, 1 for f_dt 0 (the value at 1), 1, 2; key 1 (f_t 4, largest count 1, f_qt 3): 1/3, 1/3."""
    table, offsets = contribution_table(
        MaxValues([2, 1]), np.array([0, 1]), np.array([1, 3]), np.array([2, 4]), 4, get_measure("identity5")
    )
    assert offsets.tolist() == [0, 3]
    assert table.tolist() == [2.0, 2.0, 1.0, 1 / 3, 1 / 3]


def test_no_terms_no_table() -> None:
    table, offsets = contribution_table(MaxValues([5]), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), 9, get_measure("cosine"))
    assert (table.tolist(), offsets.tolist()) == ([], [])


@settings(max_examples=60, deadline=None)
@given(
    terms=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 400), st.integers(1, 50)), min_size=1, max_size=40),
    name=st.sampled_from(sorted(MEASURES.names())),
    extra=st.integers(0, 1000),
)
def test_every_entry_is_the_term_part_at_its_counts(terms: list[tuple[int, int, int]], name: str, extra: int) -> None:
    """Against the measure evaluated on the entries laid out one by one (as the table was first
    built: np.repeat per row): the same offsets and the same bits, for every measure."""
    maxvals = [top for top, _, _ in terms]
    f_qt = np.array([q for _, _, q in terms], np.int64)
    f_t = np.array([ft for _, ft, _ in terms], np.int64)
    n_docs = int(f_t.max()) + extra
    measure = get_measure(name)
    table, offsets = contribution_table(MaxValues(maxvals), np.arange(len(terms)), f_qt, f_t, n_docs, measure)
    widths = np.array(maxvals) + 1
    assert offsets.tolist() == (np.cumsum(widths) - widths).tolist()
    row = np.repeat(np.arange(len(terms)), widths)
    f_dt = np.concatenate([np.maximum(np.arange(w), 1) for w in widths]).astype(np.float64)
    expected = measure.term(f_dt, f_qt[row].astype(np.float64), f_t[row].astype(np.float64), float(n_docs))
    assert table.tobytes() == np.asarray(expected, np.float64).tobytes()
