"""Absolute percentages and the one --min-percent rule."""

from __future__ import annotations

import numpy as np
import pytest

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
