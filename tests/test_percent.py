"""Absolute percentages and the one --min-percent rule."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderiv.ranking.percent import meets_threshold, percent, score_floor


def test_percent_is_relative_to_the_self_score() -> None:
    assert percent(np.array([4.5, 1.5, 0.0]), 4.5).tolist() == [100.0, 100 / 3, 0.0]
    assert percent(np.array([2.0, 1.0]), 0.0).tolist() == [0.0, 0.0]  # a zero self-score gives zeros


def test_rounding_noise_below_a_threshold_still_passes_it() -> None:
    # 0.1 + 0.2 of a self-score of 1 is 30.000000000000004%; 0.3 · 100 / 1 summed otherwise can be 29.999999999999996%
    assert meets_threshold(np.array([29.999999999999996, 30.0, 29.99999]), 30.0).tolist() == [True, True, False]
    assert meets_threshold(np.array([0.0]), 0.0).tolist() == [True]


def test_the_score_floor_is_the_same_rule_in_raw_scores() -> None:
    own = 4.5
    floor = score_floor(own, 30.0)
    assert floor == pytest.approx(1.35 * (1 - 1e-12), rel=1e-15) and floor < 1.35
    assert meets_threshold(percent(np.array([floor]), own), 30.0).tolist() == [True]
    assert score_floor(0.0, 30.0) == 0.0


def test_a_copy_summed_in_another_order_is_exactly_100_percent() -> None:
    own, copy = 0.3 + 0.2 + 0.1, 0.1 + 0.2 + 0.3  # 0.6 and 0.6000000000000001
    assert 100.0 * copy / own > 100.0  # what by_document gave before (issue 43)
    assert percent(np.array([copy]), own).tolist() == [100.0]
    assert float(percent(copy, own)) == 100.0


def test_a_real_excess_over_100_is_kept() -> None:
    # inner and normalized can pass 100% (SPEC §3): only rounding noise is taken off
    assert percent(np.array([1.8, 1.00001, 1.0]), 1.0).tolist() == [180.0, pytest.approx(100.001), 100.0]
    assert percent(np.array([1.8]), 1.0)[0] == 180.0


@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=2000), st.randoms(use_true_random=False))
def test_the_query_against_itself_is_100_whatever_the_order_of_its_sum(terms: list[float], rng: random.Random) -> None:
    shuffled = list(terms)
    rng.shuffle(shuffled)
    assert percent(np.array([sum(shuffled)]), sum(terms)).tolist() == [pytest.approx(100.0, rel=1e-12)]
    assert percent(np.array([sum(shuffled)]), sum(terms))[0] <= 100.0
