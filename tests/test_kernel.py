"""The contribution table of the scoring kernel (coderiv.ranking.kernel.contribution_table):
one row per query term, one entry per count up to the key's largest, each entry the measure's
term part at that (f_dt, f_qt, f_t) to the bit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.ranking import compiled_probes
from coderiv.ranking.kernel import contribution_table, top_k
from coderiv.ranking.measures import MEASURES, get_measure
from coderiv.ranking.sharded import with_collection_size

terms_strategy = st.lists(st.tuples(st.integers(0, 300), st.integers(1, 400), st.integers(1, 50)), min_size=1, max_size=40)


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


def test_cosine_is_a_product() -> None:
    """Cosine's table is multiplied out from its parts (one logarithm per count and per term)."""
    assert get_measure("cosine").product_parts() is not None
    assert get_measure("identity5").product_parts() is None


def test_a_measure_whose_term_part_is_replaced_is_no_product() -> None:
    """A term part replaced after the fact (``dataclasses.replace``): its stale product must not
    build the table, whose entries then come from the replaced term part."""
    cosine = get_measure("cosine")
    halved = dataclasses.replace(cosine, term=lambda f_dt, f_qt, f_t, n: cosine.term(f_dt, f_qt, f_t, n) / 2)
    assert halved.product_parts() is None
    table, _ = contribution_table(MaxValues([2]), np.array([0]), np.array([1]), np.array([10]), 7, halved)
    expected = cosine.term(np.array([1.0, 1.0, 2.0]), np.full(3, 1.0), np.full(3, 10.0), 7.0) / 2
    assert table.tobytes() == expected.tobytes()


def test_a_sharded_index_s_cosine_is_a_product_with_the_collection_s_n() -> None:
    """A sharded index fixes N to the collection's size (1,000) whatever a shard passes (7): the
    product parts are fixed the same way, so the table is still multiplied out, to the bits of
    the formula at N = 1,000."""
    fixed = with_collection_size(get_measure("cosine"), 1000)
    assert fixed.product_parts() is not None
    table, _ = contribution_table(MaxValues([2, 3]), np.array([0, 1]), np.array([1, 2]), np.array([10, 400]), 7, fixed)
    f_dt = np.array([1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 3.0])
    f_qt, f_t = np.array([1.0] * 3 + [2.0] * 4), np.array([10.0] * 3 + [400.0] * 4)
    expected = get_measure("cosine").term(f_dt, f_qt, f_t, 1000.0)
    assert table.tobytes() == expected.tobytes()


@settings(max_examples=60, deadline=None)
@given(terms=terms_strategy, name=st.sampled_from(sorted(MEASURES.names())), extra=st.integers(0, 1000))
def test_every_entry_is_the_term_part_at_its_counts(terms: list[tuple[int, int, int]], name: str, extra: int) -> None:
    """Against the measure evaluated on the entries laid out one by one (as the table was first
    built: np.repeat per row): the same offsets and the same bits, for every measure (cosine's
    multiplied out from its product parts, the others evaluated entry by entry)."""
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


@settings(max_examples=40, deadline=None)
@given(terms=terms_strategy, extra=st.integers(0, 1000))
def test_the_compiled_fill_gives_numpys_bits(terms: list[tuple[int, int, int]], extra: int) -> None:
    """compiled_probes.fill_products (compiled, and as plain Python) multiplies cosine's table out
    to the same bits as numpy's kernel.fill_products."""
    maxvals = [top for top, _, _ in terms]
    f_qt = np.array([q for _, _, q in terms], np.int64)
    f_t = np.array([ft for _, ft, _ in terms], np.int64)
    args = (MaxValues(maxvals), np.arange(len(terms)), f_qt, f_t, int(f_t.max()) + extra, get_measure("cosine"))
    table, offsets = contribution_table(*args)
    fills = [compiled_probes._fill_products]
    if compiled_probes.available() and compiled_probes.load():
        fills.append(compiled_probes.fill_products)
    for fill in fills:
        other, other_offsets = contribution_table(*args, fill)
        assert other_offsets.tolist() == offsets.tolist()
        assert other.tobytes() == table.tobytes()


@pytest.mark.compiled
def test_the_compiled_fill_loads() -> None:
    pytest.importorskip("numba")
    assert compiled_probes.load()
    table = np.zeros(5)
    compiled_probes.fill_products(np.array([1.0, 1.0, 2.0]), np.array([3.0, 0.5]), np.array([2.0, 4.0]),
                                  np.array([0, 3]), np.array([3, 2]), table)
    assert table.tolist() == [6.0, 6.0, 12.0, 2.0, 2.0]  # (per_count[v] · weight) · query


def reference_top_k(scores: np.ndarray, k: int | None) -> np.ndarray:
    """top_k as first written: every positive score's 12-digit key, then the k best keys."""
    candidates = np.flatnonzero(scores > 0)
    if not len(candidates):
        return candidates
    values = scores[candidates]
    key = np.round(values / values.max() * 1e12)
    if k is not None and len(candidates) > k:
        kth = np.partition(key, len(key) - k)[len(key) - k]
        keep = key >= kth
        candidates, key = candidates[keep], key[keep]
    ranked = candidates[np.lexsort((candidates, -key))]
    return ranked if k is None else ranked[:k]


def test_top_k_ties_scores_equal_to_12_digits_and_breaks_them_by_number() -> None:
    """0.5 and 0.5·(1 + 1e-13) tie (kept by number: 1 before 3); 0.5·(1 − 1e-11) does not."""
    scores = np.array([0.0, 0.5, 0.9, 0.5 * (1 + 1e-13), 0.5 * (1 - 1e-11), -1.0, 0.2])
    assert top_k(scores, 2).tolist() == [2, 1]
    assert top_k(scores, 3).tolist() == [2, 1, 3]
    assert top_k(scores, None).tolist() == [2, 1, 3, 4, 6]
    assert top_k(np.zeros(4), 2).tolist() == []


near_ties = st.lists(
    st.one_of(
        st.sampled_from([0.0, -1.0, float("nan"), 1.0, 0.5]),
        st.floats(0.0, 1.0),
        st.integers(0, 20).map(lambda i: 0.5 * (1 + i * 1e-13)),  # within 12 digits of 0.5, and past them
        st.integers(0, 20).map(lambda i: 1.0 - i * 1e-12),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(scores=near_ties, k=st.one_of(st.none(), st.integers(1, 90)))
def test_top_k_is_the_reference_ranking(scores: list[float], k: int | None) -> None:
    """The values near the k-th best are picked before the keys are computed: the same ranking
    as computing every key, ties within 12 digits included."""
    array = np.array(scores, np.float64)
    assert top_k(array, k).tolist() == reference_top_k(array, k).tolist()
